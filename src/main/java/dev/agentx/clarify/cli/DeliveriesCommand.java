package dev.agentx.clarify.cli;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.agentx.clarify.app.ServerStore;
import dev.agentx.clarify.github.EnvFile;
import dev.agentx.clarify.github.recovery.DeliveryRecovery;
import dev.agentx.clarify.protocol.ClarifyException;
import dev.agentx.clarify.protocol.ErrorCode;
import dev.agentx.clarify.render.Visible;
import dev.agentx.clarify.store.RecoveryPosition;
import dev.agentx.clarify.store.files.DataDirectory;
import dev.agentx.clarify.store.files.FileDeliveryLog;
import dev.agentx.clarify.store.postgres.PgDeliveryQueue;
import dev.agentx.clarify.store.postgres.PostgresDatabase;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** {@code agentx deliveries}: the webhook deliveries GitHub Mode received and what became of each. */
@Command(name = "deliveries", mixinStandardHelpOptions = true,
        description = {"The webhook deliveries the server received, newest first, with their state: "
                + "acknowledged (queued, not done yet), processed, or failed (kept in inbox/failed/); "
                + "'recovered' marks those the recovery pass asked GitHub to send again.",
                "Reads the data dir ($AGENTX_DATA_DIR, else ./agentx-data) without changing it, so it "
                        + "can run beside the server; with --database-url (or AGENTX_DATABASE_URL) the deliveries "
                        + "every replica on that database received."},
        footer = {"", "Examples:", "  agentx deliveries", "  agentx deliveries --limit 200 --json"})
final class DeliveriesCommand implements Runnable {
    private final CliContext ctx;

    @Option(names = "--limit", paramLabel = "N", defaultValue = "50",
            description = "Show at most N deliveries (default 50).")
    int limit;

    @Option(names = "--database-url", paramLabel = "URL",
            description = "Read the deliveries of a server on PostgreSQL (every replica's) at URL; default "
                    + "AGENTX_DATABASE_URL when set. The password may come from AGENTX_DATABASE_PASSWORD_FILE.")
    String databaseUrl;

    DeliveriesCommand(CliContext ctx) {
        this.ctx = ctx;
    }

    @Override
    public void run() {
        if (limit < 1) {
            throw new ClarifyException(ErrorCode.USAGE, "--limit must be at least 1, got " + limit + ".");
        }
        Path data = EnvFile.dataDir(ctx.env, ctx.cwd);
        String url = databaseUrl != null ? databaseUrl : ctx.env.get("AGENTX_DATABASE_URL");
        Path recoveryFile = data.resolve(DataDirectory.RECOVERY);
        List<FileDeliveryLog.Entry> shown;
        int total;
        String where;
        if (url != null && !url.isBlank()) {
            // on PostgreSQL the deliveries are rows every replica shares
            try (PostgresDatabase db = ServerStore.openDatabase(url, ctx.env, 1)) {
                // what the pass of whichever replica held the recovery lease asked for
                Set<String> recovered = DeliveryRecovery.asked(RecoveryPosition.ofServer(recoveryFile,
                        db.notes(ctx.clock))).keySet();
                PgDeliveryQueue.Listing listing = db.deliveries("cli", ctx.clock).recent(limit);
                total = listing.total();
                shown = listing.rows().stream().map(r -> new FileDeliveryLog.Entry(r.id(), r.event(), r.receivedAt(),
                        r.doneAt(), "queued".equals(r.state()) ? "acknowledged" : r.state(),
                        recovered.contains(r.id()))).toList();
                where = db.describe();
            }
        } else {
            if (!Files.isDirectory(data.resolve("inbox"))) {
                throw new ClarifyException(ErrorCode.USAGE, data + " has no inbox/: point AGENTX_DATA_DIR at the data "
                        + "dir of 'agentx serve', or --database-url at its database.");
            }
            List<FileDeliveryLog.Entry> all = FileDeliveryLog.read(data.resolve("inbox"),
                    DeliveryRecovery.asked(RecoveryPosition.ofServer(recoveryFile, null)).keySet());
            total = all.size();
            shown = all.subList(0, Math.min(limit, all.size()));
            where = data.resolve("inbox").toString();
        }
        if (ctx.json()) {
            ObjectNode root = ctx.mapper().createObjectNode();
            root.put("total", total);
            ArrayNode arr = root.putArray("deliveries");
            for (FileDeliveryLog.Entry e : shown) {
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
        if (total == 0) {
            ctx.out.println("No deliveries in " + where + ".");
        }
        for (FileDeliveryLog.Entry e : shown) {
            ctx.out.println(String.format("%-38s %-14s %-22s %s%s", Visible.text(e.id()),
                    e.event() == null ? "-" : Visible.text(e.event()), e.receivedAt() == null ? "-" : e.receivedAt(),
                    e.state(), e.recovered() ? " (recovered)" : ""));
        }
        if (shown.size() < total) {
            ctx.out.println("... " + (total - shown.size()) + " more; --limit shows more.");
        }
        ctx.out.flush();
    }
}
