package dev.agentx.clarify.github.inbox;

import dev.agentx.clarify.store.UnitOfWork;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The webhook's acknowledgements come before the worker's deliveries. GitHub waits 10 seconds for
 * the answer to a delivery and counts a slow one as failed, while a delivery already in the
 * inbox is safe and can wait its turn. On 2 cores the worker's lanes and the webhook's requests
 * compete for CPU, and with every lane working the acknowledgements slow down several times over
 * ({@code bench/webhook-bench} shows it at saturation).
 *
 * <p>So while {@link #BUSY} or more webhook requests are in flight (requests queue up: the
 * acknowledgements are falling behind; the webhook counts a request once its signature holds, so
 * neither unsigned requests nor a client sending its body slowly hold the worker back), lanes
 * apply deliveries' changes ({@link #laneStarting}, {@link #laneDone}) one at a time; a delivery
 * already started goes on. What a lane waits for outside that, a permission looked up on GitHub
 * before or an answer channel (an agent) after, holds no place, so a slow GitHub or agent does not
 * stop the others. One lane always works, so a long burst delays the worker but never stops it.
 * When the burst ends the backlog is worked off on every lane.
 *
 * <p>A lane whose delivery waits for its commit to reach the disk (PostgreSQL's WAL flush, a few
 * milliseconds of no CPU) steps aside meanwhile ({@link #stepAsideWhileCommitting}): the next lane
 * may start, so the flushes of several deliveries overlap while one lane at a time computes.
 * Without it one lane's throughput would be one delivery per flush, under the webhook's rate.
 */
public final class AckPriority {
    /** Webhook requests in flight at or above which the worker steps back to one lane. */
    public static final int BUSY = 2;
    /** Longest a lane waits before it looks again, should a wake-up be missed. */
    private static final long RECHECK_MILLIS = 50;

    private final int lanes;
    private final AtomicInteger inFlight = new AtomicInteger();
    /** Lanes working on a delivery; guarded by this. */
    private int working;

    public AckPriority(int lanes) {
        if (lanes < 1) {
            throw new IllegalArgumentException("lanes must be at least 1");
        }
        this.lanes = lanes;
    }

    /** A webhook request's signature held and its delivery is being queued; {@link #requestEnded()} must follow. */
    public void requestStarted() {
        inFlight.incrementAndGet();
    }

    /** That request was answered. */
    public void requestEnded() {
        if (inFlight.decrementAndGet() == BUSY - 1) {
            synchronized (this) {
                notifyAll(); // the burst is over: waiting lanes go on
            }
        }
    }

    /** How many lanes may apply deliveries' changes now. */
    public int allowedLanes() {
        return inFlight.get() >= BUSY ? 1 : lanes;
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
