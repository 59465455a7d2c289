package dev.agentx.clarify.github.inbox;

import dev.agentx.clarify.github.outbox.Outbox;
import dev.agentx.clarify.metrics.ServerMetrics;
import dev.agentx.clarify.store.DeliveryQueue;
import dev.agentx.clarify.store.Replicas;
import dev.agentx.clarify.store.UnitOfWork;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Works through the inbox and sends what the deliveries queued in the outbox; the place to start
 * reading {@code github.inbox}.
 *
 * <p>Order: deliveries with the same {@link dev.agentx.clarify.github.Payloads#orderKey order key}
 * (the same issue) form a line and are processed one at a time, in the order received
 * ({@link Lines}); on a queue that replicas share, a line waits while an earlier delivery of its
 * issue is held by another replica ({@link DeliveryQueue.Turn.Wait}), and the tick takes up
 * deliveries left by replicas that are gone ({@link DeliveryQueue#adoptable}). Lines run side by
 * side on {@link #LANES} threads ({@link Lanes}), so a slow issue (a lock held by an agent, a slow
 * permission check) does not hold up the others, and the file system's waits overlap. Each
 * delivery is one {@link DeliveryAttempt} at a time; one that fails (GitHub unreachable while
 * checking a permission, a lock timeout) stays first in its line and is tried again after a backoff,
 * and after {@link Retries#MAX_ATTEMPTS} it moves to the inbox's {@code failed/}. On the file store
 * the commands a delivery carried out are {@link ProgressNotes} in the outbox journal.
 *
 * <p>Asynchronous (the server's mode): a delivery is handed to a lane as soon as it is queued;
 * after each delivery the lane hands the issues it queued effects for to {@link #SENDERS} sender
 * threads and goes on, so a lane never waits for GitHub while posting ({@link WorkerThreads}); a
 * {@link Tick} every {@link #TICK} sends effects whose wait is over and takes up lines whose retry
 * is due. While webhook requests queue up, lanes apply deliveries' changes one at a time
 * ({@link AckPriority}); what a delivery looks up on GitHub before and hands to answer channels
 * after does not count. Synchronous (tests): {@link #wake()} does all the work on the caller's
 * thread before the webhook is answered, so tests need no sleeps.
 */
public final class Worker implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(Worker.class);
    public static final Duration TICK = Duration.ofSeconds(5);
    /**
     * Lines worked on side by side (threads). A lane mostly waits: for fsyncs (which concurrent
     * lanes share through the file system's journal commits), a permission check or an agent's
     * lock, so there are more lanes than cores; bench/README.md has the figures behind the number.
     */
    public static final int LANES = 12;
    /**
     * Threads sending effects to GitHub, issues side by side. Few: GitHub asks integrators not to
     * send many requests for one installation at once (secondary rate limits).
     */
    public static final int SENDERS = 4;

    private final Outbox outbox;
    private final boolean synchronous;
    private final Clock clock;
    private final AckPriority priority = new AckPriority(LANES);
    private final Lines lines = new Lines();
    private final DeliveryAttempt attempt;
    private final Lanes lanes;
    private final Tick tick;

    /** What readiness needs to know: whether the worker runs, and since when its longest-running delivery runs (or null). */
    public record Health(boolean alive, Instant drainingSince) {
    }

    public Worker(DeliveryQueue inbox, DeliveryProcessor handler, Outbox outbox, Clock clock, boolean synchronous,
                  ServerMetrics metrics) {
        this(inbox, handler, outbox, clock, synchronous, metrics, Replicas.alone("worker"));
    }

    /** {@code replicas}: one of them at a time forgets old claims (a lease). */
    public Worker(DeliveryQueue inbox, DeliveryProcessor handler, Outbox outbox, Clock clock, boolean synchronous,
                  ServerMetrics metrics, Replicas replicas) {
        this(inbox, handler, outbox, clock, synchronous, metrics, replicas, UnitOfWork.NONE);
    }

    /**
     * {@code unit}: the store's unit, in which each delivery's changes and its done mark are made
     * ({@link UnitOfWork#NONE}: each write on its own, the progress recorded after each command).
     */
    public Worker(DeliveryQueue inbox, DeliveryProcessor handler, Outbox outbox, Clock clock, boolean synchronous,
                  ServerMetrics metrics, Replicas replicas, UnitOfWork unit) {
        this.outbox = outbox;
        this.synchronous = synchronous;
        this.clock = clock;
        ProgressNotes notes = new ProgressNotes(inbox, outbox, unit); // forgets those of deliveries done before a crash
        this.attempt = new DeliveryAttempt(inbox, handler, unit, outbox, clock, synchronous, metrics, priority, lines,
                notes);
        this.lanes = new Lanes(lines, attempt, outbox, clock, synchronous);
        this.tick = new Tick(inbox, outbox, replicas, clock, notes, lines, lanes);
        inbox.onQueued(lanes::submit);
        inbox.onLineFreed(lanes::lineFreed, lanes::everyLineFreed);
        inbox.queued().forEach(lanes::submit);
    }

    /** What the webhook tells of its requests in flight, so the lanes step back while acknowledgements queue up. */
    public AckPriority priority() {
        return priority;
    }

    public Health health() {
        boolean alive;
        synchronized (this) {
            alive = !lanes.closed() && (synchronous || lanes.running());
        }
        return new Health(alive, attempt.busySince());
    }

    /** When the oldest delivery that is due (not waiting out a retry) was received, if any waits. */
    public Optional<Instant> oldestDue() {
        return lines.oldestDue(clock.instant());
    }

    /** Starts the lanes, the senders and the tick (asynchronous mode; nothing in the synchronous one). */
    public synchronized void start() {
        if (synchronous || !lanes.startable()) {
            return;
        }
        WorkerThreads threads = WorkerThreads.start();
        lanes.start(threads);
        threads.scheduleTick(tick::run);
    }

    /** New work arrived: do it now (synchronous); asynchronous lanes are handed each delivery as it is queued. */
    public void wake() {
        if (synchronous) {
            drain();
        }
    }

    /** Effects queued outside a delivery (a remote MCP call's command) go to the senders now. */
    public void sendQueued() {
        lanes.handOffQueued();
    }

    /**
     * Processes every due delivery on the caller's thread, line by line in the order their first
     * deliveries were received (lines a lane is working on are left to it), then sends every due
     * effect.
     */
    public void drain() {
        tick.drain();
    }

    /**
     * Stops: the lanes work off the deliveries already queued for up to {@link Lanes#DRAIN} (what is
     * not reached by then, or waits out a retry, stays in the inbox on disk for the next start), then
     * the outbox is flushed once.
     */
    @Override
    public void close() {
        WorkerThreads threads;
        synchronized (this) {
            threads = lanes.close();
        }
        if (threads == null) {
            tick.syncDoneQuietly();
            return;
        }
        threads.stop();
        tick.syncDoneQuietly();
        // Shutdown: what is still queued stays in the inbox and outbox on disk; send what is due once more.
        try {
            Outbox.Flush f = outbox.flush();
            LOG.info("worker stopped; final outbox flush: {} sent, {} failed, {} waiting", f.done(), f.failed(),
                    f.waiting());
        } catch (RuntimeException e) {
            LOG.warn("final outbox flush failed; the effects stay queued on disk: {}", e.toString());
        }
    }
}
