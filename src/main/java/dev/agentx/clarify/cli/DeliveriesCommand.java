package dev.agentx.clarify.cli;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.agentx.clarify.github.EnvFile;
import dev.agentx.clarify.github.inbox.DeliveryLog;
import dev.agentx.clarify.github.recovery.DeliveryRecovery;
import dev.agentx.clarify.protocol.ClarifyException;
import dev.agentx.clarify.protocol.ErrorCode;
import dev.agentx.clarify.render.Visible;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** {@code agentx deliveries}: the webhook deliveries GitHub Mode received and what became of each. */
@Command(name = "deliveries", mixinStandardHelpOptions = true,
        description = {"The webhook deliveries the server received, newest first, with their state: "
                + "acknowledged (queued, not done yet), processed, or failed (kept in inbox/failed/); "
                + "'recovered' marks those the recovery pass asked GitHub to send again.",
                "Reads the data dir ($AGENTX_DATA_DIR, else ./agentx-data) without changing it, so it "
                        + "can run beside the server."},
        footer = {"", "Examples:", "  agentx deliveries", "  agentx deliveries --limit 200 --json"})
final class DeliveriesCommand implements Runnable {
    private final CliContext ctx;

    @Option(names = "--limit", paramLabel = "N", defaultValue = "50",
            description = "Show at most N deliveries (default 50).")
    int limit;

    DeliveriesCommand(CliContext ctx) {
        this.ctx = ctx;
    }

    @Override
    public void run() {
        if (limit < 1) {
            throw new ClarifyException(ErrorCode.USAGE, "--limit must be at least 1, got " + limit + ".");
        }
        Path data = EnvFile.dataDir(ctx.env, ctx.cwd);
        if (!Files.isDirectory(data.resolve("inbox"))) {
            throw new ClarifyException(ErrorCode.USAGE, data + " has no inbox/: point AGENTX_DATA_DIR at the data dir "
                    + "of 'agentx serve'.");
        }
        List<DeliveryLog.Entry> all = DeliveryLog.read(data.resolve("inbox"),
                DeliveryRecovery.asked(data.resolve("recovery.json")).keySet());
        List<DeliveryLog.Entry> shown = all.subList(0, Math.min(limit, all.size()));
        if (ctx.json()) {
            ObjectNode root = ctx.mapper().createObjectNode();
            root.put("total", all.size());
            ArrayNode arr = root.putArray("deliveries");
            for (DeliveryLog.Entry e : shown) {
                ObjectNode n = arr.addObject();
                n.put("id", e.id());
                n.put("event", e.event());
                n.put("receivedAt", e.receivedAt() == null ? null : e.receivedAt().toString());
                n.put("doneAt", e.doneAt() == null ? null : e.doneAt().toString());
                n.put("state", e.state());
                n.put("recovered", e.recovered());
            }
            ctx.printJson(root);
            return;
        }
        if (all.isEmpty()) {
            ctx.out.println("No deliveries in " + data.resolve("inbox") + ".");
        }
        for (DeliveryLog.Entry e : shown) {
            ctx.out.println(String.format("%-38s %-14s %-22s %s%s", Visible.text(e.id()),
                    e.event() == null ? "-" : Visible.text(e.event()), e.receivedAt() == null ? "-" : e.receivedAt(),
                    e.state(), e.recovered() ? " (recovered)" : ""));
        }
        if (shown.size() < all.size()) {
            ctx.out.println("... " + (all.size() - shown.size()) + " more; --limit shows more.");
        }
        ctx.out.flush();
    }
}
