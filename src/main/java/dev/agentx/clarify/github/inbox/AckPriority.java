package dev.agentx.clarify.github.inbox;

import dev.agentx.clarify.store.UnitOfWork;
import java.time.Clock;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The webhook's acknowledgements come before the worker's deliveries. GitHub waits 10 seconds for
 * the answer to a delivery and counts a slow one as failed (it does not send it again by itself),
 * while a delivery already in the inbox is safe and can wait its turn. On 2 cores the worker's lanes
 * and the webhook's requests compete for the CPU and for the disk's flushes: a lane's delivery
 * flushes its ledger and its outbox records, and on files each of those flushes is a journal commit
 * of the file system that the inbox's next flush, the one an acknowledgement waits for, queues
 * behind ({@code bench/webhook-bench} shows it at saturation).
 *
 * <p>So while {@link #BUSY} or more webhook requests are in flight (requests queue up: the
 * acknowledgements are falling behind; the webhook counts a request once its signature holds, so
 * neither unsigned requests nor a client sending its body slowly hold the worker back), no lane
 * starts applying a delivery's changes ({@link #laneStarting}, {@link #laneDone}); a delivery
 * already started goes on. A burst is acknowledged
 * first and worked off after it on every lane, which takes less time in all than working one lane
 * beside the acknowledgements, whose flushes would slow each other's down. What a lane waits for
 * outside that, a permission looked up on GitHub before or an answer channel (an agent) after,
 * holds no place.
 *
 * <p>Requests that stay queued for {@link #OVERLOAD} are no burst but an overload, which could last:
 * from then on one lane at a time applies deliveries, so the worker slows down under it but never
 * stops. A lane whose delivery waits for its commit to reach the disk (PostgreSQL's WAL flush, a
 * few milliseconds of no CPU) steps aside meanwhile ({@link #stepAsideWhileCommitting}): the next
 * lane may start, so the flushes of several deliveries overlap while one lane at a time computes.
 * Without it one lane's throughput would be one delivery per flush, under the webhook's rate.
 */
public final class AckPriority {
    /** Webhook requests in flight at or above which no lane starts a delivery (one at a time during an overload). */
    public static final int BUSY = 2;
    /**
     * How long requests stay queued before the worker takes it for an overload and one lane works
     * beside the acknowledgements: as long as the worker's {@link Worker#TICK}, the longest it
     * otherwise leaves work waiting. A burst GitHub sends (a bulk edit of labels, a flurry of
     * comments) is acknowledged well within it at the rates bench/README.md shows.
     */
    public static final Duration OVERLOAD = Worker.TICK;
    /** Longest a lane waits before it looks again, should a wake-up be missed (or the burst turn into an overload). */
    private static final long RECHECK_MILLIS = 50;

    private final int lanes;
    private final Clock clock;
    private final AtomicInteger inFlight = new AtomicInteger();
    /** When the requests in flight last reached {@link #BUSY} (clock millis): the burst's start. */
    private volatile long burstFrom;
    /** Lanes working on a delivery; guarded by this. */
    private int working;

    /** {@code clock}: tells how long a burst has lasted ({@link #OVERLOAD}). */
    public AckPriority(int lanes, Clock clock) {
        if (lanes < 1) {
            throw new IllegalArgumentException("lanes must be at least 1");
        }
        this.lanes = lanes;
        this.clock = clock;
    }

    /** A webhook request arrived; {@link #requestEnded()} must follow. */
    public void requestStarted() {
        if (inFlight.incrementAndGet() == BUSY) {
            burstFrom = clock.millis();
        }
    }

    /** A webhook request was answered. */
    public void requestEnded() {
        if (inFlight.decrementAndGet() == BUSY - 1) {
            synchronized (this) {
                notifyAll(); // the burst is over: waiting lanes go on
            }
        }
    }

    /** How many lanes may apply deliveries' changes now: all, none during a burst, one during an overload. */
    public int allowedLanes() {
        if (inFlight.get() < BUSY) {
            return lanes;
        }
        return clock.millis() - burstFrom >= OVERLOAD.toMillis() ? 1 : 0;
    }

    /** Webhook requests being answered now. */
    public int requestsInFlight() {
        return inFlight.get();
    }

    /**
     * A lane is about to apply a delivery's changes: returns once it may. An interrupted lane goes on at once
     * (the worker is stopping) with its interrupt kept; {@link #laneDone()} must follow either way.
     */
    public synchronized void laneStarting() {
        while (working >= allowedLanes()) {
            try {
                wait(RECHECK_MILLIS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                break;
            }
        }
        working++;
    }

    /** A lane finished applying its delivery's changes. */
    public synchronized void laneDone() {
        working--;
        notifyAll();
    }

    /**
     * For the unit of a lane's delivery ({@link UnitOfWork#join}): while the unit waits for its
     * commit, the lane does not count as working, so another may start; once the commit is over
     * (or failed) it counts again and goes on, whatever the limit then: its delivery has started.
     */
    public UnitOfWork.Participant stepAsideWhileCommitting() {
        return new UnitOfWork.Participant() {
            private boolean aside;

            @Override
            public void committing() {
                synchronized (AckPriority.this) {
                    working--;
                    AckPriority.this.notifyAll();
                }
                aside = true;
            }

            @Override
            public void committed() {
                back();
            }

            @Override
            public void rolledBack() {
                back();
            }

            private void back() {
                if (aside) {
                    aside = false;
                    synchronized (AckPriority.this) {
                        working++;
                    }
                }
            }
        };
    }
}
