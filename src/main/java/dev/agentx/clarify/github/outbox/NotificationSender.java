package dev.agentx.clarify.github.outbox;

import dev.agentx.clarify.config.NotifyReceiver;
import dev.agentx.clarify.github.notify.NotificationLog;
import dev.agentx.clarify.github.notify.ReceiverHttp;
import dev.agentx.clarify.metrics.ServerMetrics;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.time.format.DateTimeFormatter;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * POSTs a {@link Effect.Notification} to its receiver ({@link ReceiverHttp}) with {@code
 * X-AgentX-Event}, {@code X-AgentX-Delivery} (the same on every attempt) and, when signed, {@code
 * X-AgentX-Signature-256}. A {@code 2xx} is done; a timeout, a connection that failed, a {@code 5xx}
 * or a {@code 429} is tried again ({@link NotificationRetry}: backoff with jitter, or the receiver's
 * {@code Retry-After}, for up to 24 hours after the notification was queued); any other answer
 * (a {@code 4xx}, a redirect, which is never followed) and a receiver whose address is refused
 * are final. Nothing here waits for GitHub, and GitHub's rate limits do not hold it back.
 */
final class NotificationSender implements EffectSender<Effect.Notification> {
    private static final Logger LOG = LoggerFactory.getLogger(Outbox.class);

    private final ReceiverHttp http;
    private final NotificationLog log;
    private final ServerMetrics metrics;
    private final Clock clock;
    private final RetryPolicy retry;

    NotificationSender(ReceiverHttp http, NotificationLog log, ServerMetrics metrics, Clock clock, RetryPolicy retry) {
        this.http = http;
        this.log = log;
        this.metrics = metrics;
        this.clock = clock;
        this.retry = retry;
    }

    /** A failed attempt, as {@link #failure} reads it. */
    static final class Failed extends RuntimeException {
        final transient SendFailure failure;

        Failed(SendFailure failure) {
            super(failure.message(), null, false, false);
            this.failure = failure;
        }
    }

    @Override
    public void send(Effect.Notification n, Attempt attempt) {
        Map<String, String> headers = new LinkedHashMap<>();
        headers.put("X-AgentX-Event", n.event());
        headers.put("X-AgentX-Delivery", n.delivery());
        if (n.signature() != null) {
            headers.put("X-AgentX-Signature-256", n.signature());
        }
        String to = NotifyReceiver.shown(n.url());
        long start = System.nanoTime();
        ReceiverHttp.Answer answer;
        try {
            answer = http.post(n.url(), n.allowPrivate(), headers, n.body().getBytes(StandardCharsets.UTF_8));
        } catch (ReceiverHttp.Refused e) {
            metrics.notification(n.event(), "refused", start);
            LOG.error("notify: refused to send {} of {} to {} (receiver {}): {}", n.event(), n.clarification(), to,
                    n.receiver(), e.getMessage());
            throw new Failed(new SendFailure("refused: " + e.getMessage(), false, false, false, null));
        } catch (IOException e) {
            metrics.notification(n.event(), "error", start);
            throw new Failed(new SendFailure("no answer from " + to + ": " + e, true, false, false, null));
        }
        int status = answer.status();
        if (status >= 200 && status < 300) {
            metrics.notification(n.event(), "sent", start);
            LOG.info("notify: {} of {} sent to {} (receiver {}, delivery {}, attempt {}): {}", n.event(),
                    n.clarification(), to, n.receiver(), n.delivery(), attempt.number(), status);
            record(n, attempt, status);
            return;
        }
        metrics.notification(n.event(), "error", start);
        String said = to + " answered " + status + (answer.body().isEmpty() ? "" : ": " + cut(answer.body()));
        if (status == 429 || status >= 500) {
            throw new Failed(new SendFailure(said, true, false, false, retryAfter(answer.retryAfter())));
        }
        throw new Failed(new SendFailure(said + (status >= 300 && status < 400 ? " (redirects are not followed)"
                : ""), false, false, false, null));
    }

    private void record(Effect.Notification n, Attempt attempt, int status) {
        try {
            log.append(new NotificationLog.Sent(n.delivery(), n.event(), n.receiver(), NotifyReceiver.shown(n.url()),
                    n.repo().fullName(), n.issue(), n.clarification(), attempt.queuedAt(), clock.instant(),
                    attempt.number(), status));
        } catch (RuntimeException e) {
            LOG.warn("notify: {} sent, but {} could not record it: {}", n.delivery(), NotificationLog.FILE,
                    e.toString());
        }
    }

    @Override
    public Optional<SendFailure> failure(RuntimeException e) {
        return e instanceof Failed f ? Optional.of(f.failure) : Optional.empty();
    }

    @Override
    public RetryPolicy retry() {
        return retry;
    }

    @Override
    public boolean toGitHub() {
        return false;
    }

    @Override
    public void gaveUp(Effect.Notification n, int attempts, String reason) {
        metrics.notificationFailed(n.event());
        LOG.error("notify: gave up on {} of {} to {} (receiver {}, delivery {}) after {} attempt(s): {}; listed by "
                + "'agentx notifications --failed'", n.event(), n.clarification(), NotifyReceiver.shown(n.url()),
                n.receiver(), n.delivery(), attempts, reason);
    }

    /** A {@code Retry-After} of seconds or an HTTP date, as a wait from now; null when absent or unreadable. */
    Duration retryAfter(String value) {
        if (value == null || value.isBlank()) {
            return null;
        }
        String v = value.strip();
        try {
            long seconds = Long.parseLong(v);
            return seconds < 0 ? null : Duration.ofSeconds(Math.min(seconds, Duration.ofDays(1).toSeconds()));
        } catch (NumberFormatException e) {
            try {
                Duration d = Duration.between(clock.instant(), java.time.ZonedDateTime.parse(v,
                        DateTimeFormatter.RFC_1123_DATE_TIME).toInstant());
                return d.isNegative() ? Duration.ZERO : d;
            } catch (java.time.format.DateTimeParseException x) {
                return null;
            }
        }
    }

    private static String cut(String s) {
        return s.length() <= 200 ? s : s.substring(0, 200) + "...";
    }
}
