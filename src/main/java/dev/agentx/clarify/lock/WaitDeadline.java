package dev.agentx.clarify.lock;

import java.time.Duration;

/**
 * When a wait for a lock ends: once its holder has stayed the same for {@code budget} (no
 * progress), or after {@code all} in all while the holders keep changing (a queue that moves).
 * Times are nanoseconds on one clock of the caller's; holders are compared with {@code equals}
 * (a lock's token: each taking of the lock has its own).
 */
public final class WaitDeadline {
    private final long budget;
    private final long cap;
    private long deadline;
    private Object holder;

    public WaitDeadline(long start, Duration budget, Duration all, Object holder) {
        this(start, budget, budget, all, holder);
    }

    /**
     * As the other constructor, for a wait that goes on from an earlier one: {@code first} is what
     * is left of its budget for {@code holder}; a new holder gives the whole {@code budget}.
     */
    public WaitDeadline(long start, Duration first, Duration budget, Duration all, Object holder) {
        this.budget = budget.toNanos();
        this.cap = start + all.toNanos();
        this.deadline = start + Math.min(first.toNanos(), this.budget);
        this.holder = holder;
    }

    /** The holder seen at {@code now}: one other than the last gives the budget again, up to the limit in all. */
    public void saw(long now, Object holderNow) {
        if (holderNow != null && !holderNow.equals(holder)) {
            holder = holderNow;
            deadline = now + budget - cap > 0 ? cap : now + budget;
        }
    }

    /** Nanoseconds left at {@code now}; none (zero or less): the wait is over. */
    public long remaining(long now) {
        return deadline - now;
    }

    /** Whether the wait ended at the limit in all, not for a holder that stayed. */
    public boolean ranOut(long now) {
        return now - cap >= 0;
    }
}
