package dev.agentx.clarify.store.postgres;

import java.time.Duration;
import java.util.Map;
import java.util.OptionalLong;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.LongSupplier;

/**
 * The terms of the replicas that beat through one database: a term is an unbroken run of a
 * replica's heartbeats, each begun less than {@link #HOLD} after the one before. While its term
 * lasts, a replica's claims are certainly its own: the database recorded a heartbeat begun less
 * than {@link #HOLD} ago, so no other replica can take the replica for gone
 * ({@link Heartbeats#GONE_AFTER} without a heartbeat) for at least five more seconds. Once
 * {@link #HOLD} passes without a heartbeat (the replica was paused, or cut off from the
 * database), the term has lapsed: another replica may be taking its claims over, so it sends
 * nothing on the strength of a claim until a heartbeat starts a new term, and then checks each
 * claim from the old term in the database first.
 *
 * <p>Time is measured with a monotonic ticker (nanoseconds, {@link System#nanoTime} in a server):
 * a wall clock set back would make a lapse look shorter than it was.
 */
final class ClaimTerms {
    /** The longest a heartbeat covers: {@link Heartbeats#GONE_AFTER} less a margin of {@link Heartbeats#STEADY_GAP}. */
    static final Duration HOLD = Heartbeats.GONE_AFTER.minus(Heartbeats.STEADY_GAP);

    private final Map<String, Term> terms = new ConcurrentHashMap<>();
    private volatile LongSupplier ticker = System::nanoTime;

    /** Measures time with {@code ticker} (nanoseconds, never going back). */
    void tickWith(LongSupplier ticker) {
        this.ticker = ticker;
    }

    /** The ticker's time now: taken before a heartbeat is sent, and given to {@link #beaten} once it is recorded. */
    long now() {
        return ticker.getAsLong();
    }

    /** The database recorded a heartbeat of {@code replica} sent at {@code sentAt} ({@link #now}). */
    void beaten(String replica, long sentAt) {
        terms.computeIfAbsent(replica, r -> new Term()).beaten(sentAt);
    }

    /** The term of {@code replica} now; empty when it never beat or its last heartbeat was sent more than {@link #HOLD} ago. */
    OptionalLong current(String replica) {
        Term t = terms.get(replica);
        return t == null ? OptionalLong.empty() : t.current(now());
    }

    private static final class Term {
        private boolean beaten;
        private long lastSent;
        private long number;

        synchronized void beaten(long sentAt) {
            if (beaten && sentAt - lastSent <= 0) {
                return; // an older heartbeat answered late: the newer one counts
            }
            if (!beaten || sentAt - lastSent > HOLD.toNanos()) {
                number++;
            }
            beaten = true;
            lastSent = sentAt;
        }

        synchronized OptionalLong current(long now) {
            return beaten && now - lastSent <= HOLD.toNanos() ? OptionalLong.of(number) : OptionalLong.empty();
        }
    }
}
