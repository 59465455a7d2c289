package dev.agentx.clarify.github.outbox;

import dev.agentx.clarify.config.NotifyReceiver;
import dev.agentx.clarify.files.JsonSupport;
import dev.agentx.clarify.github.notify.NotificationLog;
import dev.agentx.clarify.store.files.OutboxJournal;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.stream.Stream;

/**
 * The notifications an outbox folder knows of, for {@code agentx notifications}: those still queued
 * (in its journal: not tried yet, or waiting for their next attempt), those given up on (its
 * {@code failed/}) and those sent ({@link NotificationLog}). Read without changing anything, beside
 * a running server. With replicas each has its own outbox: a notification is listed by the replica
 * that queued or sent it.
 */
public final class NotificationListing {
    private NotificationListing() {
    }

    /**
     * One notification. {@code state}: {@code queued} (no attempt yet), {@code retrying} (an attempt
     * failed; {@code nextAttempt} says when the next is due), {@code sent} or {@code failed}.
     * {@code at}: when it was sent or given up on (null while queued).
     */
    public record Entry(String delivery, String event, String receiver, String shown, String repository, int issue,
                        String clarification, String state, Instant queuedAt, Instant at, int attempts,
                        Instant nextAttempt, String lastError) {
    }

    /** Every notification of the outbox in {@code outboxDir}, newest first (by when it was queued). */
    public static List<Entry> read(Path outboxDir) {
        List<Entry> out = new ArrayList<>();
        for (NotificationLog.Sent s : NotificationLog.read(outboxDir)) {
            out.add(new Entry(s.delivery(), s.event(), s.receiver(), s.shown(), s.repository(), s.issue(),
                    s.clarification(), "sent", s.queuedAt(), s.sentAt(), s.attempts(), null, null));
        }
        for (OutboxJournal.Pending p : OutboxJournal.readOnly(outboxDir.resolve("journal")).pending()) {
            QueuedEffect q = entry(p.entry().toString(), "the outbox journal's record " + p.seq());
            if (q.effect() instanceof Effect.Notification n) {
                out.add(of(n, q, q.attempts() == 0 ? "queued" : "retrying", null));
            }
        }
        Path failed = outboxDir.resolve("failed");
        if (Files.isDirectory(failed)) {
            try (Stream<Path> files = Files.list(failed)) {
                for (Path f : files.filter(p -> p.getFileName().toString().endsWith(".json")).sorted().toList()) {
                    QueuedEffect q = entry(Files.readString(f), f.toString());
                    if (q.effect() instanceof Effect.Notification n) {
                        out.add(of(n, q, "failed", Files.getLastModifiedTime(f).toInstant()));
                    }
                }
            } catch (IOException e) {
                throw new UncheckedIOException("cannot read " + failed + ": " + e.getMessage(), e);
            }
        }
        out.sort(Comparator.comparing(Entry::queuedAt, Comparator.nullsLast(Comparator.reverseOrder()))
                .thenComparing(Entry::delivery));
        return out;
    }

    private static Entry of(Effect.Notification n, QueuedEffect q, String state, Instant at) {
        return new Entry(n.delivery(), n.event(), n.receiver(), NotifyReceiver.shown(n.url()), n.repo().fullName(),
                n.issue(), n.clarification(), state, q.queuedAt(), at, q.attempts(),
                "retrying".equals(state) ? q.notBefore() : null, q.lastError());
    }

    private static QueuedEffect entry(String json, String where) {
        try {
            return JsonSupport.shared().readValue(json, QueuedEffect.class);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + where + ": " + e.getMessage(), e);
        }
    }
}
