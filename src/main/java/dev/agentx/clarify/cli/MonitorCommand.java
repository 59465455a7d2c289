package dev.agentx.clarify.cli;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.agentx.clarify.monitor.MonitorAction;
import dev.agentx.clarify.monitor.MonitorReport;
import picocli.CommandLine.Command;

/** {@code agentx monitor}: one monitor pass, printing what it did. */
@Command(name = "monitor", mixinStandardHelpOptions = true,
        description = {"Run one monitor pass: mark stale questions and ask the target again, escalate those "
                + "stale a second time, stuck ones and one request per deadlock cycle. Prints each action.",
                "The same pass also runs after every clarify command, hook start|finish and ready."},
        footer = {"", "Examples:", "  agentx monitor", "  agentx monitor --json"})
final class MonitorCommand implements Runnable {
    private final CliContext ctx;

    @picocli.CommandLine.Mixin
    ServerStateOptions database;

    MonitorCommand(CliContext ctx) {
        this.ctx = ctx;
    }

    @Override
    public void run() {
        boolean readOnly = ctx.onDatabase();
        // over the server's database the server's own monitor acts: from here only say what a pass would do
        MonitorReport r = readOnly ? ctx.local().monitor().plan() : ctx.local().monitor().run();
        if (ctx.json()) {
            ObjectNode out = MonitorOutput.report(ctx, r);
            if (readOnly) {
                out.put("readOnly", true);
            }
            ctx.printJson(out);
            return;
        }
        if (readOnly) {
            ctx.err.println("note: --database-url only reads: these are the actions a monitor pass would take now; "
                    + "the server's own monitor takes them.");
            ctx.err.flush();
        }
        for (MonitorAction a : r.actions()) {
            ctx.out.println(readOnly ? "would act: " + a.describe() : a.describe());
        }
        int ledgers = ctx.local().ledgers().issues().size();
        String checked = r.active() + " active clarification" + (r.active() == 1 ? "" : "s") + " in " + ledgers
                + " ledger" + (ledgers == 1 ? "" : "s");
        String actions = r.actions().size() + " action" + (r.actions().size() == 1 ? "" : "s");
        ctx.out.println(r.actions().isEmpty() ? "Nothing to do: checked " + checked + "."
                : actions + (readOnly ? " a pass would take" : "") + "; checked " + checked + ".");
        ctx.out.flush();
        for (String w : r.warnings()) {
            ctx.err.println("warning: " + w);
        }
        ctx.err.flush();
    }
}
