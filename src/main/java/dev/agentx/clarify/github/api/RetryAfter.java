package dev.agentx.clarify.github.api;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeParseException;
import java.util.List;
import java.util.Map;
import java.util.function.Function;

/**
 * How long GitHub asks us to wait: {@code Retry-After} (seconds or an HTTP date), else, when the
 * rate limit is used up, until {@code x-ratelimit-reset} (epoch seconds). Null when it says nothing.
 */
final class RetryAfter {
    static final Duration MIN = Duration.ofSeconds(1);
    /** GitHub's advice for a secondary rate limit without a Retry-After: wait at least a minute. */
    static final Duration SECONDARY_DEFAULT = Duration.ofMinutes(1);

    private RetryAfter() {
    }

    static Duration of(Function<String, String> header, Clock clock) {
        Instant now = clock.instant();
        String retry = header.apply("Retry-After");
        if (retry != null && !retry.isBlank()) {
            try {
                return atLeastMin(Duration.ofSeconds(Long.parseLong(retry.strip())));
            } catch (NumberFormatException e) {
                try {
                    Instant at = ZonedDateTime.parse(retry.strip(), DateTimeFormatter.RFC_1123_DATE_TIME).toInstant();
                    return atLeastMin(Duration.between(now, at));
                } catch (DateTimeParseException ignored) {
                    // fall through to the reset header
                }
            }
        }
        String remaining = header.apply("X-RateLimit-Remaining");
        String reset = header.apply("X-RateLimit-Reset");
        if ("0".equals(remaining == null ? null : remaining.strip()) && reset != null) {
            try {
                return atLeastMin(Duration.between(now, Instant.ofEpochSecond(Long.parseLong(reset.strip()))));
            } catch (NumberFormatException ignored) {
                return null;
            }
        }
        return null;
    }

    static Duration of(Map<String, List<String>> headers, Clock clock) {
        return of(name -> {
            if (headers == null) {
                return null;
            }
            for (Map.Entry<String, List<String>> e : headers.entrySet()) {
                if (e.getKey() != null && e.getKey().equalsIgnoreCase(name) && e.getValue() != null
                        && !e.getValue().isEmpty()) {
                    return e.getValue().get(0);
                }
            }
            return null;
        }, clock);
    }

    private static Duration atLeastMin(Duration d) {
        return d.compareTo(MIN) < 0 ? MIN : d;
    }
}
