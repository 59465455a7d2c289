package dev.agentx.clarify.github.inbox;

import dev.agentx.clarify.github.outbox.Outbox;
import dev.agentx.clarify.store.DeliveryQueue;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Works through the {@link Lines}: a line that is claimed is worked on by one thread at a time, a
 * lane of the running worker or (synchronous mode, and the caller of {@link Worker#drain}) the
 * caller's thread. A lane takes up to {@link #TURN} deliveries of a line before other lines get a
 * turn; a line whose first delivery is to be tried again is let go, and taken up again by the tick,
 * or sooner when its wait ends before the next tick (a line waiting for another replica) or another
 * replica signals that the line is free.
 */
final class Lanes {
    /** The worker's log: its parts log as one. */
    private static final Logger LOG = LoggerFactory.getLogger(Worker.class);
    /** Deliveries of one line a lane works through before other lines get a turn. */
    static final int TURN = 16;
    /**
     * How long the lanes go on taking up deliveries once the worker is closing (the webhook takes no
     * more by then): the inbox is usually worked off, so a replica that is scaled down leaves no
     * acknowledged delivery behind on its volume. Within the 30 s a stop is given (Kubernetes'
     * grace period, systemd's TimeoutStopSec), with time left for the outbox's last flush.
     */
    static final Duration DRAIN = Duration.ofSeconds(20);

    private final Lines lines;
    private final DeliveryAttempt attempt;
    private final Outbox outbox;
    private final Clock clock;
    private final boolean synchronous;
    /** The running worker's threads; null before the start, in the synchronous mode and once closing. */
    private volatile WorkerThreads threads;
    private volatile boolean closed;
    /** While closing: until when (System.nanoTime) the lanes go on taking up deliveries. */
    private volatile long drainUntil;

    Lanes(Lines lines, DeliveryAttempt attempt, Outbox outbox, Clock clock, boolean synchronous) {
        this.lines = lines;
        this.attempt = attempt;
        this.outbox = outbox;
        this.clock = clock;
        this.synchronous = synchronous;
    }

    /**
     * The senders send what was queued outside a delivery (a remote MCP call's command); in the
     * synchronous mode it is sent now, on the caller's thread.
     */
    void handOffQueued() {
        WorkerThreads t = threads;
        if (t != null) {
            t.handOff(outbox);
        } else if (synchronous) {
            outbox.flush();
        }
    }

    /** The lanes run on these threads from now on; the caller holds the worker's monitor. */
    void start(WorkerThreads running) {
        threads = running;
    }

    /**
     * No more lanes are dispatched; those at work go on for up to {@link #DRAIN}. Returns the threads
     * to stop, or null if none ran. The caller holds the worker's monitor.
     */
    WorkerThreads close() {
        drainUntil = System.nanoTime() + DRAIN.toNanos();
        closed = true;
        WorkerThreads running = threads;
        threads = null;
        return running;
    }

    boolean closed() {
        return closed;
    }

    /** Whether lanes may start: not started yet, and not closing. */
    boolean startable() {
        return threads == null && !closed;
    }

    /** Whether lanes run (started, not closing, their threads not shut down). */
    boolean running() {
        WorkerThreads t = threads;
        return !closed && t != null && !t.lanes().isShutdown();
    }

    /** A delivery was queued (or found at start, or left by a replica that is gone): into its line, and a lane for the line. */
    void submit(DeliveryQueue.Queued q) {
        if (!lines.track(q.seq())) {
            return;
        }
        while (true) {
            Line line = lines.lineFor(q.key());
            boolean start;
            synchronized (line) {
                if (!line.add(q)) {
                    continue; // retired meanwhile: a new line for the key
                }
                start = claimForLane(line, clock.instant());
            }
            if (start) {
                dispatch(line);
            }
            return;
        }
    }

    /**
     * Another replica has done with the delivery a line of this one waited for: the line is taken
     * up now instead of at its next look ({@link DeliveryAttempt#WAIT_ELSEWHERE}).
     */
    void lineFreed(String key) {
        Line line = lines.get(key);
        if (line == null) {
            return;
        }
        boolean start;
        synchronized (line) {
            line.freed = true; // a lane taking its delivery now looks again at once should it find it waits
            DeliveryQueue.Queued head = line.items.peek();
            if (head == null || line.running || !lines.waitsElsewhere(head.seq())) {
                return; // not waiting for another replica (a retry's wait is not cut short)
            }
            line.notBefore = null;
            start = claimForLane(line, clock.instant());
        }
        if (start) {
            dispatch(line);
        }
    }

    /**
     * Signals of lines freed may have been missed (the store began listening for them after a
     * line's wait was marked, or listens anew after losing its connection): every line waiting for
     * another replica looks again now.
     */
    void everyLineFreed() {
        lines.keys().forEach(this::lineFreed);
    }

    /** The tick: a lane for every line nobody works on whose wait is over. */
    void takeUpDue(Instant now) {
        for (Line line : lines.all()) {
            boolean start;
            synchronized (line) {
                start = claimForLane(line, now);
            }
            if (start) {
                dispatch(line);
            }
        }
    }

    /** Claims the line for a lane if lanes run and it is idle and due; the caller holds the line's monitor. */
    private boolean claimForLane(Line line, Instant now) {
        return threads != null && !closed && line.claim(now);
    }

    private void dispatch(Line line) {
        WorkerThreads t = threads;
        try {
            if (t == null) {
                throw new RejectedExecutionException("stopped");
            }
            t.lanes().execute(() -> {
                if (work(line, TURN)) {
                    dispatch(line); // other lines get a turn first
                }
            });
        } catch (RejectedExecutionException e) {
            synchronized (line) {
                line.running = false; // stopping: the deliveries stay in the inbox on disk
            }
        }
    }

    /**
     * Works through a line the caller has claimed, at most {@code limit} deliveries. True when it
     * stopped at the limit with deliveries left (the line stays claimed); false when the line is
     * released (empty, waiting out a retry, or the worker is closing).
     */
    boolean work(Line line, int limit) {
        for (int done = 0; ; done++) {
            DeliveryQueue.Queued head;
            synchronized (line) {
                head = line.items.peek();
                if (head == null || (closed && !synchronous && System.nanoTime() - drainUntil > 0)) {
                    line.running = false;
                    lines.retireIfIdle(line);
                    return false;
                }
                if (done >= limit && !closed) { // closing: no new turns are dispatched, so a lane finishes its line
                    return true;
                }
                line.freed = false;
            }
            Instant retryAt;
            try {
                retryAt = attempt.process(head);
            } catch (RuntimeException e) {
                // the inbox itself failed (disk full, permissions): try the line again on a later tick
                LOG.error("worker: {}", e.toString(), e);
                retryAt = clock.instant().plus(Worker.TICK);
            }
            synchronized (line) {
                if (retryAt != null && line.items.peek() != head) {
                    continue; // an earlier delivery of the line was handed over meanwhile: it goes first
                }
                if (retryAt != null && line.freed && lines.waitsElsewhere(head.seq())) {
                    continue; // the replica it waited for signalled while it looked: look again now
                }
                if (retryAt != null) {
                    line.notBefore = retryAt;
                    line.running = false;
                    retakeAt(line, retryAt);
                    return false;
                }
                lines.remove(line, head);
            }
            WorkerThreads t = threads;
            if (!synchronous && t != null) {
                t.handOff(outbox); // the lane goes on with its next delivery meanwhile
            }
        }
    }

    /**
     * Takes the line up again at {@code when} if that comes before the next tick (a line waiting
     * for another replica's delivery); later retries are the tick's.
     */
    private void retakeAt(Line line, Instant when) {
        WorkerThreads t = threads;
        Duration wait = Duration.between(clock.instant(), when);
        if (t == null || synchronous || wait.compareTo(Worker.TICK) >= 0) {
            return;
        }
        // rounded up, and a millisecond more: the scheduler keeps its own time, and a wake-up a hair
        // before the clock reaches the time finds the line not due and leaves it to the next tick
        long delayMicros = Math.max(0, (wait.toNanos() + 999) / 1000) + 1000;
        try {
            t.ticker().schedule(() -> {
                boolean start;
                synchronized (line) {
                    start = claimForLane(line, clock.instant());
                }
                if (start) {
                    dispatch(line);
                }
            }, delayMicros, TimeUnit.MICROSECONDS);
        } catch (RejectedExecutionException e) {
            // stopping: what is left stays queued for the next start or another replica
        }
    }
}
