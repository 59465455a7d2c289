package dev.agentx.clarify.metrics;

import dev.agentx.clarify.metrics.Metrics.Type;

/**
 * The names of the metrics {@code agentx serve} exposes at {@code /metrics} (README "Operations"
 * lists each with its labels and meaning), and the registry with its counters and summaries
 * declared. Gauges are registered by the composition root, which owns what they read.
 */
public final class ServerMetrics {
    public static final String DELIVERIES = "agentx_deliveries_total";
    public static final String WEBHOOK_REFUSED = "agentx_webhook_refused_total";
    public static final String COMMANDS = "agentx_commands_total";
    public static final String OUTBOX_DEPTH = "agentx_outbox_depth";
    public static final String OUTBOX_EFFECTS = "agentx_outbox_effects_total";
    public static final String INBOX_DEPTH = "agentx_inbox_depth";
    public static final String WEBHOOK_IN_FLIGHT = "agentx_webhook_requests_in_flight";
    public static final String WORKER_LANES_ALLOWED = "agentx_worker_lanes_allowed";
    public static final String GITHUB_CALLS = "agentx_github_api_calls_total";
    public static final String RATE_LIMIT_REMAINING = "agentx_github_rate_limit_remaining";
    public static final String LOCK_WAIT = "agentx_lock_wait_seconds";
    public static final String MONITOR_PASS = "agentx_monitor_pass_seconds";
    public static final String WEBHOOK_QUEUE = "agentx_webhook_queue_seconds";
    public static final String CLARIFICATIONS = "agentx_clarifications";

    private ServerMetrics() {
    }

    /** A new registry with every counter and summary declared. */
    public static Metrics create() {
        return new Metrics()
                .declare(DELIVERIES, Type.COUNTER, "Webhook deliveries by event, action and outcome "
                        + "(queued, duplicate, processed, retry, failed).")
                .declare(WEBHOOK_REFUSED, Type.COUNTER, "Webhook requests refused before the inbox, by HTTP status.")
                .declare(COMMANDS, Type.COUNTER, "Comment commands run, by type and outcome (accepted, refused).")
                .declare(OUTBOX_EFFECTS, Type.COUNTER, "Outbox effect attempts by type and outcome "
                        + "(done, retry, failed).")
                .declare(GITHUB_CALLS, Type.COUNTER, "GitHub API calls by status (2xx, the HTTP status of a "
                        + "failure, or io_error).")
                .declare(LOCK_WAIT, Type.SUMMARY, "Time spent waiting for ledger and status locks.")
                .declare(MONITOR_PASS, Type.SUMMARY, "Time of one monitor pass over a repository.")
                .declare(WEBHOOK_QUEUE, Type.SUMMARY, "Time to queue a delivery durably before its 202 "
                        + "(the inbox append and its fdatasync).");
    }
}
