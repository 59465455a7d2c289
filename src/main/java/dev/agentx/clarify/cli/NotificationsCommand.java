package dev.agentx.clarify.cli;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.agentx.clarify.github.EnvFile;
import dev.agentx.clarify.github.outbox.NotificationListing;
import dev.agentx.clarify.protocol.ClarifyException;
import dev.agentx.clarify.protocol.ErrorCode;
import dev.agentx.clarify.render.Visible;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.List;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** {@code agentx notifications}: the notifications GitHub Mode queued for its [[notify]] receivers, and what became of each. */
@Command(name = "notifications", mixinStandardHelpOptions = true,
        description = {"The notifications the server queued for its [[notify]] receivers, newest first, with their "
                + "state: queued (not tried yet), retrying (an attempt failed; when the next is due and why), sent, "
                + "or failed (given up on after a final answer or 24 hours of retries; kept in outbox/failed/).",
                "Reads the data dir ($AGENTX_DATA_DIR, else ./agentx-data) without changing it, so it can run "
                        + "beside the server. Receivers are shown by scheme, host and port only: a URL's path can "
                        + "be a credential (a Slack webhook's is). With replicas, run it on each: a notification "
                        + "is listed by the replica that queued or sent it."},
        footer = {"", "Examples:", "  agentx notifications", "  agentx notifications --failed --json"})
final class NotificationsCommand implements Runnable {
    private final CliContext ctx;

    @Option(names = "--failed", description = "Only the notifications given up on.")
    boolean failed;

    @Option(names = "--limit", paramLabel = "N", defaultValue = "50",
            description = "Show at most N notifications (default 50).")
    int limit;

    NotificationsCommand(CliContext ctx) {
        this.ctx = ctx;
    }

    @Override
    public void run() {
        if (limit < 1) {
            throw new ClarifyException(ErrorCode.USAGE, "--limit must be at least 1, got " + limit + ".");
        }
        Path data = EnvFile.dataDir(ctx.env, ctx.cwd);
        Path outbox = data.resolve("outbox");
        if (!Files.isDirectory(outbox)) {
            throw new ClarifyException(ErrorCode.USAGE, data + " has no outbox/: point AGENTX_DATA_DIR at the data "
                    + "dir of 'agentx serve'.");
        }
        List<NotificationListing.Entry> all = NotificationListing.read(outbox).stream()
                .filter(e -> !failed || e.state().equals("failed")).toList();
        List<NotificationListing.Entry> shown = all.subList(0, Math.min(limit, all.size()));
        if (ctx.json()) {
            ObjectNode root = ctx.mapper().createObjectNode();
            root.put("total", all.size());
            ArrayNode arr = root.putArray("notifications");
            for (NotificationListing.Entry e : shown) {
                ObjectNode n = arr.addObject();
                n.put("delivery", e.delivery());
                n.put("event", e.event());
                n.put("state", e.state());
                n.put("receiver", e.receiver());
                n.put("url", e.shown());
                n.put("repository", e.repository());
                n.put("issue", e.issue());
                n.put("clarification", e.clarification());
                n.put("queuedAt", text(e.queuedAt()));
                n.put("at", text(e.at()));
                n.put("attempts", e.attempts());
                n.put("nextAttempt", text(e.nextAttempt()));
                n.put("lastError", e.lastError());
            }
            ctx.printJson(root);
            return;
        }
        if (all.isEmpty()) {
            ctx.out.println(failed ? "No failed notifications in " + outbox + "." : "No notifications in " + outbox
                    + ".");
        }
        for (NotificationListing.Entry e : shown) {
            ctx.out.println(String.format("%-36s %-9s %-8s %s#%d %s -> %s (%d attempt%s)%s", e.delivery(), e.event(),
                    e.state(), Visible.text(e.repository()), e.issue(), e.clarification(), Visible.text(e.shown()),
                    e.attempts(), e.attempts() == 1 ? "" : "s", detail(e)));
        }
        if (shown.size() < all.size()) {
            ctx.out.println("... " + (all.size() - shown.size()) + " more; --limit shows more.");
        }
        ctx.out.flush();
    }

    private static String detail(NotificationListing.Entry e) {
        return switch (e.state()) {
            case "retrying" -> ", next at " + e.nextAttempt() + ": " + Visible.text(String.valueOf(e.lastError()));
            case "failed" -> ": " + Visible.text(String.valueOf(e.lastError()));
            case "sent" -> " at " + e.at();
            default -> "";
        };
    }

    private static String text(Instant at) {
        return at == null ? null : at.toString();
    }
}
