package dev.agentx.clarify.github.inbox;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.agentx.clarify.files.JsonSupport;
import dev.agentx.clarify.github.outbox.Outbox;
import dev.agentx.clarify.metrics.ServerMetrics;
import dev.agentx.clarify.protocol.ClarifyException;
import dev.agentx.clarify.protocol.ErrorCode;
import dev.agentx.clarify.store.DeliveryQueue;
import dev.agentx.clarify.store.InboundDelivery;
import dev.agentx.clarify.store.UnitOfWork;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Comparator;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One attempt at a delivery, top to bottom: take it from the queue (whose turn it is), read how far
 * earlier attempts got, {@link DeliveryProcessor#prepare prepare} it, apply its changes and mark it
 * done in the store's unit (as one of the lanes {@link AckPriority} lets apply at once), then run
 * what follows the commit. A failure goes to {@link Retries}.
 */
final class DeliveryAttempt {
    /** The worker's log: its parts log as one. */
    private static final Logger LOG = LoggerFactory.getLogger(Worker.class);
    /**
     * How soon a line waiting for an earlier delivery another replica holds is tried again, should
     * that replica's signal of its done mark not come first ({@link DeliveryQueue#onLineFreed}).
     */
    static final Duration WAIT_ELSEWHERE = Duration.ofMillis(200);

    private final DeliveryQueue inbox;
    private final DeliveryProcessor handler;
    private final UnitOfWork unit;
    private final Outbox outbox;
    private final Clock clock;
    private final boolean synchronous;
    private final ServerMetrics metrics;
    private final AckPriority priority;
    private final Lines lines;
    private final ProgressNotes notes;
    private final Retries retries;
    private final ObjectMapper json = JsonSupport.mapper();
    private final Map<Thread, Instant> busySince = new ConcurrentHashMap<>();

    DeliveryAttempt(DeliveryQueue inbox, DeliveryProcessor handler, UnitOfWork unit, Outbox outbox, Clock clock,
                    boolean synchronous, ServerMetrics metrics, AckPriority priority, Lines lines,
                    ProgressNotes notes) {
        this.inbox = inbox;
        this.handler = handler;
        this.unit = unit;
        this.outbox = outbox;
        this.clock = clock;
        this.synchronous = synchronous;
        this.metrics = metrics;
        this.priority = priority;
        this.lines = lines;
        this.notes = notes;
        this.retries = new Retries(inbox, metrics);
    }

    /** Since when the longest-running delivery runs, or null when none does. */
    Instant busySince() {
        return busySince.values().stream().min(Comparator.naturalOrder()).orElse(null);
    }

    /**
     * Processes one delivery. Null when it is done with (processed, or moved to {@code failed/});
     * otherwise when to try it again.
     */
    Instant process(DeliveryQueue.Queued q) {
        Instant now = clock.instant();
        boolean waitedBefore = lines.stopWaitingElsewhere(q.seq());
        // in one transaction with its done mark, the turn may be checked by the mark instead of first
        DeliveryQueue.Turn turn = unit.atomic() ? inbox.takeProvisionally(q, now) : inbox.take(q, now);
        if (turn instanceof DeliveryQueue.Turn.Wait w) {
            // an earlier delivery about the same issue is held by another replica: its line goes first;
            // that replica signals when it is done with it (onLineFreed), else the line looks again then
            LOG.debug("delivery {} ({}) waits for an earlier delivery of its issue held by replica {}", q.id(),
                    q.event(), w.holder());
            lines.waitElsewhere(q.seq());
            if (!waitedBefore) {
                metrics.deliveryWaited(); // a delivery counts once, however often it looks
            }
            return now.plus(WAIT_ELSEWHERE);
        }
        if (turn instanceof DeliveryQueue.Turn.Gone g) {
            LOG.info("delivery {} ({}) is not this replica's to process ({}); dropped here", q.id(), q.event(), g.why());
            return null;
        }
        if (turn instanceof DeliveryQueue.Turn.Unreadable u) {
            inbox.fail(q, u.why());
            metrics.delivery(q.event(), "", "failed");
            return null;
        }
        DeliveryQueue.Turn.Mine mine = (DeliveryQueue.Turn.Mine) turn;
        DeliveryQueue.Progress progress = notes.of(q, mine.progress());
        if (progress.notBefore() != null && now.isBefore(progress.notBefore())) {
            return progress.notBefore(); // a retry planned before a restart
        }
        InboundDelivery d = mine.delivery();
        JsonNode payload = DeliveryContext.parse(json, d.body());
        String action = DeliveryContext.put(d, payload);
        busySince.put(Thread.currentThread(), now);
        long started = System.nanoTime();
        try {
            DeliveryProcessor.Changes changes = handler.prepare(d, payload);
            Runnable after = apply(q, progress, changes);
            afterCommit(d, after);
            LOG.info("delivery {} ({}{}) processed", d.id(), d.event(), action.isEmpty() ? "" : "." + action);
            // each delivery counts once in agentx_deliveries_total, at its final outcome; attempts
            // that will be retried are only timed (outcome "retry" of the processing histogram)
            metrics.deliveryAttempt(d.event(), "processed", started);
            metrics.delivery(d.event(), action, "processed");
            return null;
        } catch (RuntimeException e) {
            if (mine.provisional() && e instanceof ClarifyException c && c.code() == ErrorCode.LOCK_LOST) {
                // its turn had not come (or was another replica's): nothing of it committed; the
                // next take asks the queue, and waits or drops it as the queue says
                LOG.debug("delivery {} ({}) was not this replica's to finish yet; taking it again: {}", d.id(),
                        d.event(), e.getMessage());
                return clock.instant();
            }
            if (unit.atomic()) {
                // the transaction may have committed though this side saw it fail (its COMMIT's answer
                // lost): its effects' claims are then this replica's, and in no queue here
                outbox.checkOwnClaimsAgain();
            }
            return retries.failed(q, d, action, notes.of(q, mine.progress()), e, now, started);
        } finally {
            busySince.remove(Thread.currentThread());
            DeliveryContext.clear();
        }
    }

    /**
     * Applies the delivery's changes and marks it done, as one of the lanes {@link AckPriority}
     * lets apply at once: the CPU's part of a delivery, with nothing inside that waits for GitHub or
     * an agent (looking up permissions comes before, in {@code prepare}; routing questions to
     * channels after, in what this returns). Returns what is left for after the commit.
     */
    private Runnable apply(DeliveryQueue.Queued q, DeliveryQueue.Progress progress, DeliveryProcessor.Changes changes) {
        boolean gated = !synchronous;
        if (gated) {
            priority.laneStarting(); // the webhook's acknowledgements first
        }
        try {
            if (unit.atomic()) {
                // one transaction: the delivery's changes, their effects' claims and its done mark
                // commit together, or nothing of them does and the next attempt starts afresh
                return unit.run(() -> {
                    if (gated) {
                        unit.join(priority.stepAsideWhileCommitting());
                    }
                    Runnable then = changes.apply(progress, p -> { });
                    inbox.done(q);
                    return then;
                });
            }
            // a command is recorded as done by a note in the outbox journal, written after the
            // effects it queued and made durable by the handler's sync of them (one fdatasync per
            // command, shared with other lanes), so the inbox's journal needs no sync per command
            Runnable after = changes.apply(progress, p -> notes.note(q, p));
            outbox.sync();
            inbox.done(q);
            return after;
        } finally {
            if (gated) {
                priority.laneDone();
            }
        }
    }

    /**
     * Runs what a delivery leaves for after its changes are committed (routing new questions, the
     * monitor): the delivery is done with whatever happens here, so a failure is logged; the
     * monitor runs again at the next delivery.
     */
    private void afterCommit(InboundDelivery d, Runnable after) {
        try {
            after.run();
            outbox.sync();
        } catch (RuntimeException e) {
            LOG.warn("delivery {} ({}): its changes are committed, but what follows them failed: {}", d.id(),
                    d.event(), e.toString(), e);
        }
    }
}
