package dev.agentx.clarify.cli;

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
        if (ctx.onDatabase()) {
            // the server's monitor acts on its repositories; from here only look
            ctx.err.println("note: --database-url only reads: this lists what a monitor pass would act on; the "
                    + "server's own monitor acts.");
            ctx.err.flush();
            ClarifyStaleCommand.print(ctx, ctx.local().monitor().check());
            return;
        }
        MonitorReport r = ctx.local().monitor().run();
        if (ctx.json()) {
            ctx.printJson(MonitorOutput.report(ctx, r));
            return;
        }
        for (MonitorAction a : r.actions()) {
            ctx.out.println(a.describe());
        }
        int ledgers = ctx.local().ledgers().issues().size();
        String checked = r.active() + " active clarification" + (r.active() == 1 ? "" : "s") + " in " + ledgers
                + " ledger" + (ledgers == 1 ? "" : "s");
        ctx.out.println(r.actions().isEmpty() ? "Nothing to do: checked " + checked + "."
                : r.actions().size() + " action" + (r.actions().size() == 1 ? "" : "s") + "; checked " + checked + ".");
        ctx.out.flush();
        for (String w : r.warnings()) {
            ctx.err.println("warning: " + w);
        }
        ctx.err.flush();
    }
}
