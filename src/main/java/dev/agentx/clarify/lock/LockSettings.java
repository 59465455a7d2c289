package dev.agentx.clarify.lock;

import java.time.Duration;

/**
 * Lock timing (docs/architecture.md, the lock protocol): a lock older than {@code staleAfter} may be taken over;
 * waits back off {@code baseDelay x 2^n} with jitter; the total wait is capped at {@code maxWait}.
 */
public record LockSettings(Duration staleAfter, Duration baseDelay, Duration maxWait) {
    public static LockSettings defaults() {
        return new LockSettings(Duration.ofSeconds(30), Duration.ofMillis(200), Duration.ofSeconds(5));
    }
}
