package dev.agentx.clarify.github.inbox;

import dev.agentx.clarify.metrics.ServerMetrics;
import dev.agentx.clarify.store.DeliveryQueue;
import dev.agentx.clarify.store.InboundDelivery;
import java.time.Duration;
import java.time.Instant;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A delivery whose attempt failed (GitHub unreachable while checking a permission, a lock timeout)
 * stays first in its line and is tried again after a backoff that doubles from 10 s (10 s, 20 s,
 * 40 s and so on); at its {@link #MAX_ATTEMPTS}th failure it moves to the inbox's {@code failed/}.
 */
final class Retries {
    /** The worker's log: its parts log as one. */
    private static final Logger LOG = LoggerFactory.getLogger(Worker.class);
    static final int MAX_ATTEMPTS = 8;

    private final DeliveryQueue inbox;
    private final ServerMetrics metrics;

    Retries(DeliveryQueue inbox, ServerMetrics metrics) {
        this.inbox = inbox;
        this.metrics = metrics;
    }

    /**
     * Counts the failed attempt at {@code d} ({@code before}: its progress before it, {@code action}:
     * the payload's, {@code started}: its System.nanoTime()); null when the delivery moved to
     * {@code failed/}, otherwise when to try it again, which the queue keeps with its attempts.
     */
    Instant failed(DeliveryQueue.Queued q, InboundDelivery d, String action, DeliveryQueue.Progress before,
                   RuntimeException e, Instant now, long started) {
        int attempts = before.attempts() + 1;
        if (attempts >= MAX_ATTEMPTS) {
            LOG.error("delivery {} ({}) failed {} times; moved to the inbox's failed/: {}", d.id(), d.event(),
                    attempts, e.toString());
            inbox.fail(q, "failed " + attempts + " times, last: " + e);
            metrics.deliveryAttempt(d.event(), "failed", started);
            metrics.delivery(d.event(), action, "failed");
            return null;
        }
        Duration wait = Duration.ofSeconds(5L << Math.min(attempts, 10));
        LOG.warn("delivery {} ({}) failed (attempt {}), retrying in {} s: {}", d.id(), d.event(), attempts,
                wait.toSeconds(), e.toString(), e);
        Instant retryAt = now.plus(wait);
        inbox.saveProgress(q, new DeliveryQueue.Progress(before.commandsDone(), before.refused(), attempts, retryAt));
        metrics.deliveryAttempt(d.event(), "retry", started);
        return retryAt;
    }
}
