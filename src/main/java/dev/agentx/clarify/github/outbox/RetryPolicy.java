package dev.agentx.clarify.github.outbox;

import java.time.Duration;
import java.time.Instant;
import java.util.Optional;

/** When an effect whose attempt failed is tried again, or that it is given up on. */
interface RetryPolicy {
    /**
     * The wait before the next attempt after {@code attempts} failed ones, the last with
     * {@code failure}; empty: give up (the effect moves to {@code outbox/failed/}).
     */
    Optional<Duration> retryAfter(int attempts, SendFailure failure);

    /**
     * As {@link #retryAfter(int, SendFailure)}, for an effect queued at {@code queuedAt} (null if
     * not known), the attempt having failed at {@code now}: for a policy that gives up a while after
     * the effect was queued.
     */
    default Optional<Duration> retryAfter(int attempts, SendFailure failure, Instant queuedAt, Instant now) {
        return retryAfter(attempts, failure);
    }

    /**
     * GitHub's calls: a failure that is not retryable (a 4xx other than a rate limit) is final;
     * others back off exponentially (10 s doubling, at most 10 min, or the wait GitHub asked for),
     * for at most 40 attempts.
     */
    RetryPolicy GITHUB = new Exponential(Duration.ofSeconds(10), Duration.ofMinutes(10), 40);

    /** Waits of {@code first} doubling up to {@code max}, or the receiver's; at most {@code maxAttempts}. */
    record Exponential(Duration first, Duration max, int maxAttempts) implements RetryPolicy {
        @Override
        public Optional<Duration> retryAfter(int attempts, SendFailure failure) {
            if (!failure.retryable() || attempts >= maxAttempts) {
                return Optional.empty();
            }
            return Optional.of(failure.retryAfter() != null ? failure.retryAfter() : backoff(attempts));
        }

        Duration backoff(int attempts) {
            Duration d = first.multipliedBy(1L << Math.min(attempts - 1, 16));
            return d.compareTo(max) > 0 ? max : d;
        }
    }
}
