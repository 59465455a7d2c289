package dev.agentx.clarify.github.outbox;

import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.DoubleSupplier;

/**
 * When a notification whose attempt failed is tried again: a failure that is not retryable (a
 * {@code 4xx} other than {@code 429}, a redirect, a receiver refused for its address) is final; a
 * timeout, a refused or reset connection, a {@code 5xx} or a {@code 429} is tried again after
 * {@code first} doubling up to {@code max}, each wait between half and all of that (jitter, so
 * that notifications held back by one outage do not all come back at one moment), or after the
 * receiver's own {@code Retry-After}; for up to {@code window} after the notification was queued
 * (the last attempt falls at the window's end), then it is given up on.
 *
 * @param random numbers in [0, 1) for the jitter
 */
record NotificationRetry(Duration first, Duration max, Duration window, DoubleSupplier random) implements RetryPolicy {
    /** 10 s doubling to 1 h, for 24 hours. */
    static final NotificationRetry STANDARD = new NotificationRetry(Duration.ofSeconds(10), Duration.ofHours(1),
            Duration.ofHours(24), () -> ThreadLocalRandom.current().nextDouble());

    /** Without the time it was queued: the backoff alone. */
    @Override
    public Optional<Duration> retryAfter(int attempts, SendFailure failure) {
        return failure.retryable() ? Optional.of(wait(attempts, failure)) : Optional.empty();
    }

    @Override
    public Optional<Duration> retryAfter(int attempts, SendFailure failure, Instant queuedAt, Instant now) {
        if (!failure.retryable()) {
            return Optional.empty();
        }
        if (queuedAt == null) {
            return retryAfter(attempts, failure);
        }
        Duration left = Duration.between(now, queuedAt.plus(window));
        if (left.isNegative() || left.isZero()) {
            return Optional.empty();
        }
        Duration wait = wait(attempts, failure);
        return Optional.of(wait.compareTo(left) > 0 ? left : wait);
    }

    /** The wait after {@code attempts} failed attempts: the receiver's, else the backoff with jitter. */
    Duration wait(int attempts, SendFailure failure) {
        if (failure.retryAfter() != null && !failure.retryAfter().isNegative()) {
            return failure.retryAfter();
        }
        Duration base = first.multipliedBy(1L << Math.min(Math.max(attempts, 1) - 1, 20));
        if (base.compareTo(max) > 0) {
            base = max;
        }
        long half = base.toMillis() / 2;
        return Duration.ofMillis(half + (long) (random.getAsDouble() * (base.toMillis() - half)));
    }
}
