package dev.agentx.clarify.github.outbox;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** The notifications' retry policy: backoff with jitter, Retry-After, final failures, 24 hours from queuing. */
class NotificationRetryTest {
    private static final Instant QUEUED = Instant.parse("2026-03-01T00:00:00Z");
    private static final SendFailure TIMEOUT = new SendFailure("no answer", true, false, false, null);
    private static final SendFailure FORBIDDEN = new SendFailure("403", false, false, false, null);

    private static NotificationRetry with(double random) {
        return new NotificationRetry(Duration.ofSeconds(10), Duration.ofHours(1), Duration.ofHours(24), () -> random);
    }

    @Test
    void theWaitDoublesBetweenHalfAndAllOfTheBackoffUpToAnHour() {
        for (int attempt = 1; attempt <= 15; attempt++) {
            long base = Math.min(10L << (attempt - 1), 3600);
            Duration low = with(0.0).wait(attempt, TIMEOUT);
            Duration high = with(0.999999).wait(attempt, TIMEOUT);
            assertEquals(Duration.ofMillis(base * 500), low, "attempt " + attempt);
            assertTrue(high.compareTo(Duration.ofSeconds(base)) <= 0 && high.compareTo(low) > 0, "attempt " + attempt);
        }
    }

    @Test
    void theReceiversRetryAfterIsTakenAsItIs() {
        SendFailure limited = new SendFailure("429", true, false, false, Duration.ofSeconds(120));
        assertEquals(Optional.of(Duration.ofSeconds(120)), with(0.5).retryAfter(3, limited, QUEUED, QUEUED));
    }

    @Test
    void aFinalFailureIsNotRetried() {
        assertEquals(Optional.empty(), with(0.5).retryAfter(1, FORBIDDEN, QUEUED, QUEUED));
        assertEquals(Optional.empty(), with(0.5).retryAfter(1, FORBIDDEN));
    }

    @Test
    void retriesStopTwentyFourHoursAfterTheNotificationWasQueuedTheLastOneAtThatMoment() {
        NotificationRetry p = with(0.999);
        Instant now = QUEUED;
        int attempts = 0;
        Instant last = null;
        while (true) {
            attempts++;
            Optional<Duration> wait = p.retryAfter(attempts, TIMEOUT, QUEUED, now);
            if (wait.isEmpty()) {
                break;
            }
            now = now.plus(wait.get());
            last = now;
        }
        assertEquals(QUEUED.plus(Duration.ofHours(24)), last, "the last attempt falls at the window's end");
        assertTrue(attempts > 20 && attempts < 40, "about 30 attempts in a day: " + attempts);
        assertEquals(Optional.empty(), p.retryAfter(1, TIMEOUT, QUEUED, QUEUED.plus(Duration.ofHours(25))));
        SendFailure longWait = new SendFailure("429", true, false, false, Duration.ofHours(5));
        assertEquals(Optional.of(Duration.ofHours(1)), p.retryAfter(2, longWait, QUEUED,
                QUEUED.plus(Duration.ofHours(23))), "never past the window");
    }
}
