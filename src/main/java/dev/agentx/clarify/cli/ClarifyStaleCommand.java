package dev.agentx.clarify.cli;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.agentx.clarify.monitor.Deadlock;
import dev.agentx.clarify.monitor.Findings;
import java.util.Locale;
import picocli.CommandLine.Command;

/** {@code agentx clarify stale}: stale, stuck and deadlocked clarifications, and the monitor's open escalations. */
@Command(name = "stale", mixinStandardHelpOptions = true,
        description = {"List the clarifications the monitor is concerned with: stale ones (no answer within the SLA), "
                + "stuck ones (repeating themselves or passed back and forth), deadlock cycles, and those it "
                + "escalated that still wait for a human.",
                "Like every clarify command it is followed by a monitor pass, which acts on them (stderr)."},
        footer = {"", "Examples:", "  agentx clarify stale", "  agentx clarify stale --json"})
final class ClarifyStaleCommand implements Runnable {
    private final CliContext ctx;

    @picocli.CommandLine.Mixin
    ServerStateOptions database;

    ClarifyStaleCommand(CliContext ctx) {
        this.ctx = ctx;
    }

    @Override
    public void run() {
        print(ctx, ctx.local().monitor().check(ctx.scan()));
    }

    /** Prints the findings as this command does (also {@code monitor} on the server's database). */
    static void print(CliContext ctx, Findings f) {
        if (ctx.json()) {
            ctx.printJson(json(ctx, f));
            return;
        }
        StringBuilder b = new StringBuilder();
        if (f.nothing()) {
            b.append("Nothing stale, stuck or deadlocked: checked ").append(f.active()).append(" active clarification")
                    .append(f.active() == 1 ? "" : "s").append(".\n");
        }
        section(b, "Stale", f.stale().size());
        for (Findings.Stale s : f.stale()) {
            b.append("  ").append(MonitorOutput.brief(s.record())).append(": ").append(s.why()).append('\n');
        }
        section(b, "Stuck", f.stuck().size());
        for (Findings.Stuck s : f.stuck()) {
            b.append("  ").append(MonitorOutput.brief(s.record())).append(": ").append(s.why()).append('\n');
        }
        section(b, "Deadlocked", f.deadlocks().size());
        for (Deadlock d : f.deadlocks()) {
            b.append("  ").append(d.why()).append('\n');
        }
        section(b, "Escalated by the monitor, waiting for a human", f.escalated().size());
        for (Findings.Flagged e : f.escalated()) {
            b.append("  ").append(MonitorOutput.brief(e.record())).append(" (").append(e.cause().wire()).append("): ")
                    .append(e.why()).append("\n    resolve with: agentx clarify resolve ").append(e.record().id())
                    .append(" -m \"<decision>\"\n");
        }
        ctx.out.print(b);
        ctx.out.flush();
        for (String w : f.warnings()) {
            ctx.err.println("warning: " + w);
        }
        ctx.err.flush();
    }

    private static void section(StringBuilder b, String title, int n) {
        if (n > 0) {
            b.append(title).append(" (").append(n).append("):\n");
        }
    }

    private static ObjectNode json(CliContext ctx, Findings f) {
        ObjectNode root = ctx.mapper().createObjectNode();
        root.put("ledgers", ctx.local().ledgers().issues().size());
        root.put("active", f.active());
        ArrayNode stale = root.putArray("stale");
        for (Findings.Stale s : f.stale()) {
            ObjectNode n = MonitorOutput.brief(ctx, s.issue(), s.record());
            n.put("phase", s.phase().name().toLowerCase(Locale.ROOT).replace('_', '-'));
            n.put("staleAfter", s.record().staleAfter().toString());
            n.put("escalatesAt", s.escalatesAt().toString());
            n.put("why", s.why());
            stale.add(n);
        }
        ArrayNode stuck = root.putArray("stuck");
        for (Findings.Stuck s : f.stuck()) {
            stuck.add(MonitorOutput.brief(ctx, s.issue(), s.record()).put("why", s.why()));
        }
        ArrayNode deadlocked = root.putArray("deadlocked");
        for (Deadlock d : f.deadlocks()) {
            ObjectNode n = deadlocked.addObject();
            ArrayNode agents = n.putArray("agents");
            d.cycle().forEach(e -> agents.add(e.from()));
            ArrayNode records = n.putArray("clarifications");
            d.cycle().forEach(e -> records.add(MonitorOutput.brief(ctx, e.issue(), e.record())));
            n.put("escalate", d.victim().id());
            n.put("why", d.why());
        }
        ArrayNode escalated = root.putArray("escalated");
        for (Findings.Flagged e : f.escalated()) {
            escalated.add(MonitorOutput.brief(ctx, e.issue(), e.record()).put("cause", e.cause().wire())
                    .put("why", e.why()));
        }
        MonitorOutput.warnings(root, f.warnings());
        return root;
    }
}
