package dev.agentx.clarify.cli;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.agentx.clarify.ledger.ActiveLedgers;
import dev.agentx.clarify.monitor.MonitorAction;
import dev.agentx.clarify.monitor.MonitorReport;
import dev.agentx.clarify.render.Visible;
import dev.agentx.clarify.protocol.ClarificationRecord;
import dev.agentx.clarify.protocol.ClarifyException;
import java.io.UncheckedIOException;
import java.util.List;

/** How the monitor's work is shown, and the pass that follows the commands that trigger it. */
final class MonitorOutput {
    private MonitorOutput() {
    }

    /**
     * No daemon; the monitor runs after every {@code clarify} command,
     * {@code hook start|finish} and {@code ready} that succeeded (not after --help or --version;
     * {@code command} is the top-level command that ran, and null when help or version was shown).
     * Its actions go to stderr, one {@code monitor: ...} line each, so stdout keeps the command's
     * own output ({@code ask} prints just the id; {@code --json} prints one document). A failing
     * pass is reported there too and never changes the command's exit code: the command's own work
     * is done, and the next pass tries again.
     */
    static void afterCommand(CliContext ctx, String command) {
        if (command == null || !command.equals("clarify") && !command.equals("hook") && !command.equals("ready")
                || ctx.onDatabase()) {
            return; // on the server's database (--database-url) the server's own monitor acts
        }
        try {
            // A read-only command's own scan of the active ledgers is reused, not read again.
            ActiveLedgers.Scan scan = ctx.scanned();
            MonitorReport report = scan != null ? ctx.local().monitor().run(scan) : ctx.local().monitor().run();
            for (MonitorAction a : report.actions()) {
                ctx.err.println("monitor: " + a.describe());
            }
            if (scan == null) { // a reused scan's warnings (its damaged ledgers) are the command's own, printed already
                for (String w : report.warnings()) {
                    ctx.err.println("monitor: warning: " + w);
                }
            }
        } catch (ClarifyException | UncheckedIOException e) {
            ctx.err.println("monitor: pass skipped: " + e.getMessage());
        } catch (RuntimeException e) {
            ctx.err.println("monitor: pass skipped after an internal error: " + e
                    + " (please report this with the command you ran)");
        }
        ctx.err.flush();
    }

    static ObjectNode report(CliContext ctx, MonitorReport r) {
        ObjectNode root = ctx.mapper().createObjectNode();
        root.put("ledgers", ctx.local().ledgers().issues().size());
        root.put("active", r.active());
        ArrayNode actions = root.putArray("actions");
        for (MonitorAction a : r.actions()) {
            ObjectNode n = actions.addObject();
            n.put("kind", a.kind());
            n.put("issueNumber", a.issue());
            n.put("id", a.id());
            if (a instanceof MonitorAction.Escalated e) {
                n.put("cause", e.cause().wire());
            }
            n.put("detail", a.describe());
        }
        warnings(root, r.warnings());
        return root;
    }

    static void warnings(ObjectNode root, List<String> warnings) {
        ArrayNode w = root.putArray("warnings");
        warnings.forEach(w::add);
    }

    /** A record in short, for lists: who asks whom about what, and where it stands. */
    static ObjectNode brief(CliContext ctx, int issue, ClarificationRecord r) {
        ObjectNode n = ctx.mapper().createObjectNode();
        n.put("issueNumber", issue);
        n.put("id", r.id());
        n.put("from", r.from());
        n.put("to", r.to());
        n.put("topic", r.topic());
        n.put("status", r.status().wire());
        n.put("round", r.round());
        n.put("blocking", r.blocking());
        return n;
    }

    static String brief(ClarificationRecord r) {
        return r.id() + " " + Visible.text(r.from()) + " -> " + Visible.text(r.to()) + " \"" + Visible.text(r.topic())
                + "\" [" + r.status().wire() + "]";
    }
}
