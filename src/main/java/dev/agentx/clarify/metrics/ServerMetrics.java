package dev.agentx.clarify.metrics;

import dev.agentx.clarify.lock.LockObserver;
import io.prometheus.metrics.config.EscapingScheme;
import io.prometheus.metrics.core.metrics.Counter;
import io.prometheus.metrics.core.metrics.GaugeWithCallback;
import io.prometheus.metrics.core.metrics.Histogram;
import io.prometheus.metrics.expositionformats.PrometheusTextFormatWriter;
import io.prometheus.metrics.instrumentation.jvm.JvmMetrics;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The metrics of {@code agentx serve}, served at {@code /metrics} of the management port
 * (docs/operations.md, "Metrics", has the table of names, types, labels and meanings; a test keeps
 * it and the server in step). One instance per server, with its own Prometheus registry: counters
 * and histograms are updated as things happen, gauges are read by their callbacks at scrape time.
 * Only GitHub Mode creates one; the Local Mode CLI loads none of these classes.
 *
 * <p>Latencies are classic histograms (buckets in seconds, {@code _count} and {@code _sum}), so
 * Prometheus can aggregate quantiles over time and over instances.
 */
public final class ServerMetrics {
    private static final Logger LOG = LoggerFactory.getLogger(ServerMetrics.class);
    public static final String DELIVERIES = "agentx_deliveries_total";
    public static final String WEBHOOK_REFUSED = "agentx_webhook_refused_total";
    public static final String COMMANDS = "agentx_commands_total";
    public static final String OUTBOX_EFFECTS = "agentx_outbox_effects_total";
    public static final String OUTBOX_DEPTH = "agentx_outbox_depth";
    public static final String INBOX_DEPTH = "agentx_inbox_depth";
    public static final String WEBHOOK_IN_FLIGHT = "agentx_webhook_requests_in_flight";
    public static final String WORKER_LANES_ALLOWED = "agentx_worker_lanes_allowed";
    public static final String RATE_LIMIT_REMAINING = "agentx_github_rate_limit_remaining";
    public static final String CLARIFICATIONS = "agentx_clarifications";
    public static final String WEBHOOK_ACK = "agentx_webhook_ack_seconds";
    public static final String WEBHOOK_QUEUE = "agentx_webhook_queue_seconds";
    public static final String DELIVERY_PROCESSING = "agentx_delivery_processing_seconds";
    public static final String GITHUB_CALL = "agentx_github_api_call_seconds";
    public static final String OUTBOX_EFFECT_AGE = "agentx_outbox_effect_age_seconds";
    public static final String LOCK_WAIT = "agentx_lock_wait_seconds";
    public static final String MONITOR_PASS = "agentx_monitor_pass_seconds";
    public static final String REDELIVERY_MISSING = "agentx_redelivery_missing_total";
    public static final String REDELIVERY_REQUESTED = "agentx_redelivery_requested_total";
    public static final String REDELIVERY_FAILED = "agentx_redelivery_failed_total";
    public static final String DELIVERY_WAITS = "agentx_delivery_waits_total";
    public static final String NOTIFICATION_ATTEMPTS = "agentx_notification_attempts_total";
    public static final String NOTIFICATIONS_FAILED = "agentx_notifications_failed_total";
    public static final String NOTIFICATION_ATTEMPT = "agentx_notification_attempt_seconds";
    // /mcp: remote agents' calls and what was refused
    public static final String MCP_REQUESTS = "agentx_mcp_requests_total";
    public static final String MCP_REFUSED = "agentx_mcp_refused_total";
    public static final String MCP_SESSIONS = "agentx_mcp_sessions";
    public static final String MCP_WAITS = "agentx_mcp_waiting_calls";

    /** Sub-millisecond to seconds: answering a webhook, its inbox append, waiting for a lock. */
    private static final double[] FAST = {0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5};
    /** Milliseconds to a minute: work that calls GitHub (whose client gives up after 30 s). */
    private static final double[] CALLS = {0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60};
    /** Seconds to hours: an effect waits out GitHub's failures and rate limits (backoff up to 10 min). */
    private static final double[] AGES = {0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900, 3600, 14400};

    private final PrometheusRegistry registry = new PrometheusRegistry();
    private final PrometheusTextFormatWriter writer = PrometheusTextFormatWriter.create();
    private volatile boolean jvm;

    /**
     * The JVM's and the process's series, in a registry of their own made once per process: the
     * JVM instrumentation remembers every registry it was registered with for good, which would
     * keep each server's registry (and through its gauges the server) alive after it closed.
     */
    private static final class Jvm {
        static final PrometheusRegistry REGISTRY = new PrometheusRegistry();

        static {
            JvmMetrics.builder().register(REGISTRY);
        }
    }

    /** Final outcome of each delivery received (labels event, action, outcome), counted once. */
    private final Counter deliveries = counter(DELIVERIES, "Webhook deliveries by event, action and final outcome: "
            + "duplicate (id seen before, at the webhook), processed, failed (moved to inbox/failed/). Each delivery "
            + "received is counted once; those not finished yet are agentx_inbox_depth.", "event", "action", "outcome");
    private final Counter redeliveryMissing = counter(REDELIVERY_MISSING, "Deliveries GitHub lists that this "
            + "server never received, found by the recovery pass");
    private final Counter redeliveryRequested = counter(REDELIVERY_REQUESTED, "Redeliveries the recovery pass asked "
            + "GitHub for");
    private final Counter redeliveryFailed = counter(REDELIVERY_FAILED, "Redeliveries GitHub refused, or failed "
            + "to take after every retry");
    private final Counter deliveryWaits = counter(DELIVERY_WAITS, "Deliveries whose turn found an earlier delivery "
            + "of their issue held by another replica, whose done mark they then waited for (each once)");
    private final Counter refused = counter(WEBHOOK_REFUSED, "Webhook requests refused before the inbox, by HTTP "
            + "status.", "status");
    private final Counter commands = counter(COMMANDS, "Comment commands run, by type and outcome (accepted, "
            + "refused).", "type", "outcome");
    private final Counter effects = counter(OUTBOX_EFFECTS, "Outbox effect attempts by type and outcome (done, "
            + "retry, failed).", "type", "outcome");
    private final Histogram webhookAck = histogram(WEBHOOK_ACK, "Time to answer a webhook request, from the "
            + "handler's first line to its answer, by HTTP status.", FAST, "status");
    private final Histogram webhookQueue = histogram(WEBHOOK_QUEUE, "Time to queue a delivery durably before its "
            + "202 (the inbox append and its fdatasync).", FAST);
    private final Histogram processing = histogram(DELIVERY_PROCESSING, "Time of one attempt at processing a "
            + "delivery, by event and outcome (processed, retry, failed).", CALLS, "event", "outcome");
    private final Histogram githubCall = histogram(GITHUB_CALL, "Time of one GitHub API request until its whole "
            + "answer is read, by method, route and status (2xx, the HTTP status of a failure, or io_error).", CALLS,
            "method", "route", "status");
    private final Histogram effectAge = histogram(OUTBOX_EFFECT_AGE, "Time from an effect's queueing in the outbox "
            + "to GitHub's confirmation, retries included, by type.", AGES, "type");
    private final Histogram lockWait = histogram(LOCK_WAIT, "Time spent acquiring ledger and status locks.", FAST);
    private final Histogram monitorPass = histogram(MONITOR_PASS, "Time of one monitor pass over a repository.",
            CALLS);

    // notifications to [[notify]] receivers
    private final Counter notificationAttempts = counter(NOTIFICATION_ATTEMPTS, "Attempts to send a notification "
            + "to a [[notify]] receiver, by event and outcome: sent (a 2xx), error (no answer, or a failure status; "
            + "retried unless final), refused (the receiver's address is not public and not allowed).", "event",
            "outcome");
    private final Counter notificationsFailed = counter(NOTIFICATIONS_FAILED, "Notifications given up on (a final "
            + "failure, or 24 hours of retries), by event; listed by 'agentx notifications --failed'.", "event");
    private final Histogram notificationAttempt = histogram(NOTIFICATION_ATTEMPT, "Time of one attempt to send a "
            + "notification, by outcome.", CALLS, "outcome");
    // /mcp: remote agents' calls and what was refused
    private final Counter mcpRequests = counter(MCP_REQUESTS, "Requests to /mcp by the caller's kind (user, "
            + "actions) and HTTP method, once authenticated.", "caller", "method");
    private final Counter mcpRefused = counter(MCP_REFUSED, "Requests and tool calls to /mcp refused, by reason "
            + "(unauthenticated, rate_limit, body_size, sessions, waits, no_role, repository).", "reason");

    private ServerMetrics() {
    }

    /** An authenticated request to /mcp. */
    public void mcpRequest(String caller, String method) {
        mcpRequests.labelValues(caller, method).inc();
    }

    /** A request or tool call to /mcp refused, by {@code reason}. */
    public void mcpRefused(String reason) {
        mcpRefused.labelValues(reason).inc();
    }

    /** A new registry with every counter and histogram registered; gauges come with {@link #gauge}. */
    public static ServerMetrics create() {
        return new ServerMetrics();
    }

    private Counter counter(String name, String help, String... labels) {
        return Counter.builder().name(name).help(help).labelNames(labels).withoutExemplars().register(registry);
    }

    private Histogram histogram(String name, String help, double[] bounds, String... labels) {
        return Histogram.builder().name(name).help(help).labelNames(labels).classicOnly().classicUpperBounds(bounds)
                .withoutExemplars().register(registry);
    }

    private static double seconds(Duration d) {
        return d.toNanos() / 1e9;
    }

    private static double secondsSince(long startNanos) {
        return (System.nanoTime() - startNanos) / 1e9;
    }

    /**
     * A gauge read at scrape time: {@code callback} calls {@code call(value, labelValues...)} once per
     * series. It must be cheap. If it throws (a ledger that cannot be read), the scrape has the
     * values it gave before that and the rest of the page as usual, and the failure is logged.
     */
    public ServerMetrics gauge(String name, String help, Consumer<GaugeWithCallback.Callback> callback,
                               String... labels) {
        GaugeWithCallback.builder().name(name).help(help).labelNames(labels).callback(g -> {
            try {
                callback.accept(g);
            } catch (RuntimeException e) {
                LOG.warn("metric {}: {}", name, e.toString());
            }
        }).register(registry);
        return this;
    }

    /** Makes the scrape include the JVM's and the process's series ({@code jvm_*}, {@code process_*}). */
    public ServerMetrics withJvm() {
        jvm = true;
        return this;
    }

    // ---- what happens -------------------------------------------------------------------------

    /** A delivery reached its final outcome: duplicate, processed or failed. */
    public void delivery(String event, String action, String outcome) {
        deliveries.labelValues(event, action, outcome).inc();
    }

    /** The recovery pass found a delivery never received: {@code outcome} requested or failed. */
    public void redelivery(boolean requested) {
        redeliveryMissing.inc();
        (requested ? redeliveryRequested : redeliveryFailed).inc();
    }

    /** A delivery waits for an earlier one of its issue that another replica holds. */
    public void deliveryWaited() {
        deliveryWaits.inc();
    }

    public void webhookRefused(int status) {
        refused.labelValues(String.valueOf(status)).inc();
    }

    /** A webhook request answered with {@code status}; {@code startNanos} from System.nanoTime. */
    public void webhookAnswered(int status, long startNanos) {
        webhookAck.labelValues(String.valueOf(status)).observe(secondsSince(startNanos));
    }

    public void webhookQueued(long nanos) {
        webhookQueue.observe(nanos / 1e9);
    }

    /** One attempt at a delivery: processed, retry or failed. */
    public void deliveryAttempt(String event, String outcome, long startNanos) {
        processing.labelValues(event, outcome).observe(secondsSince(startNanos));
    }

    public void command(String type, boolean accepted) {
        commands.labelValues(type, accepted ? "accepted" : "refused").inc();
    }

    /** An effect attempt: done, retry or failed. */
    public void effect(String type, String outcome) {
        effects.labelValues(type, outcome).inc();
    }

    /** An effect GitHub confirmed, {@code age} after it was queued. */
    public void effectConfirmed(String type, Duration age) {
        effectAge.labelValues(type).observe(Math.max(0, seconds(age)));
    }

    /** One GitHub API request: {@code status} is 2xx, a failure's HTTP status, or io_error. */
    public void githubCall(String method, String route, String status, long startNanos) {
        githubCall.labelValues(method, route, status).observe(secondsSince(startNanos));
    }

    /** One attempt to send a notification of {@code event}: sent, error or refused. */
    public void notification(String event, String outcome, long startNanos) {
        notificationAttempts.labelValues(event, outcome).inc();
        notificationAttempt.labelValues(outcome).observe(secondsSince(startNanos));
    }

    /** A notification of {@code event} given up on. */
    public void notificationFailed(String event) {
        notificationsFailed.labelValues(event).inc();
    }

    public void monitorPass(long startNanos) {
        monitorPass.observe(secondsSince(startNanos));
    }

    /** For the server's lock manager: each lock's wait goes into {@link #LOCK_WAIT}. */
    public LockObserver lockObserver() {
        return new LockObserver() {
            @Override
            public void acquired(Path file, Duration waited) {
                lockWait.observe(seconds(waited));
            }
        };
    }

    // ---- reading ------------------------------------------------------------------------------

    /** The content type of {@link #scrape(OutputStream)}: the Prometheus text format 0.0.4. */
    public static String contentType() {
        return PrometheusTextFormatWriter.CONTENT_TYPE;
    }

    /** Every metric in the Prometheus text format. */
    public void scrape(OutputStream out) throws IOException {
        writer.write(out, registry.scrape(), EscapingScheme.UNDERSCORE_ESCAPING);
        if (jvm) {
            writer.write(out, Jvm.REGISTRY.scrape(), EscapingScheme.UNDERSCORE_ESCAPING);
        }
    }

    /** Every metric in the Prometheus text format, as a string (tests, the benchmark). */
    public String scrape() {
        ByteArrayOutputStream out = new ByteArrayOutputStream(16384);
        try {
            scrape(out);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return out.toString(StandardCharsets.UTF_8);
    }

    /** The value of a counter series (0 when never touched); for tests. */
    public double counterValue(String name, String... labelValues) {
        Counter c = switch (name) {
            case DELIVERIES -> deliveries;
            case WEBHOOK_REFUSED -> refused;
            case COMMANDS -> commands;
            case OUTBOX_EFFECTS -> effects;
            case DELIVERY_WAITS -> deliveryWaits;
            case NOTIFICATION_ATTEMPTS -> notificationAttempts;
            case NOTIFICATIONS_FAILED -> notificationsFailed;
            case MCP_REQUESTS -> mcpRequests;
            case MCP_REFUSED -> mcpRefused;
            default -> throw new IllegalArgumentException("no counter named " + name);
        };
        return c.labelValues(labelValues).get();
    }
}
