package dev.agentx.clarify.lock;

import java.time.Duration;

/**
 * Lock timing (docs/architecture.md, the lock protocol): a lock older than {@code staleAfter} may be taken over;
 * while a process of another kind holds the lock file, the head of our queue polls it every
 * {@code baseDelay x 2^n} (n at most 3) with jitter; the total wait is capped at {@code maxWait}.
 */
public record LockSettings(Duration staleAfter, Duration baseDelay, Duration maxWait) {
    public static LockSettings defaults() {
        return new LockSettings(Duration.ofSeconds(staleSeconds()), Duration.ofMillis(10), Duration.ofSeconds(15));
    }

    /**
     * 30 s; the system property {@code agentx.lock.stale-seconds} sets another (tests of a holder
     * paused past the stale time use it so as not to wait 30 s).
     */
    private static long staleSeconds() {
        String v = System.getProperty("agentx.lock.stale-seconds");
        if (v == null || v.isBlank()) {
            return 30;
        }
        try {
            long s = Long.parseLong(v.strip());
            return s > 0 ? s : 30;
        } catch (NumberFormatException e) {
            return 30;
        }
    }
}
