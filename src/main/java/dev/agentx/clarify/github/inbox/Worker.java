package dev.agentx.clarify.github.inbox;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.agentx.clarify.github.handlers.DeliveryHandler;
import dev.agentx.clarify.github.outbox.Outbox;
import dev.agentx.clarify.metrics.Metrics;
import dev.agentx.clarify.metrics.ServerMetrics;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.slf4j.MDC;

/**
 * Works through the inbox in order, then flushes the outbox. Asynchronous (the server's mode): one
 * background thread, woken by each accepted delivery and every {@link #TICK} to send effects whose
 * wait is over. Synchronous (tests): {@link #wake()} does the work on the caller's thread before the
 * webhook is answered, so tests need no sleeps. Either way one drain runs at a time.
 *
 * <p>A delivery that fails (GitHub unreachable while checking a permission, a lock timeout) stays
 * first in line and is tried again after a backoff; after {@link #MAX_ATTEMPTS} it moves to the
 * inbox's {@code failed/}.
 */
public final class Worker implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(Worker.class);
    public static final Duration TICK = Duration.ofSeconds(5);
    static final int MAX_ATTEMPTS = 8;

    private final Inbox inbox;
    private final DeliveryHandler handler;
    private final Outbox outbox;
    private final Clock clock;
    private final boolean synchronous;
    private final Metrics metrics;
    private final ObjectMapper json = new ObjectMapper();
    private final Object drainLock = new Object();
    private ScheduledExecutorService executor;
    private Instant lastPrune = Instant.MIN;
    private volatile Instant drainingSince;
    private volatile boolean closed;

    /** What readiness needs to know: whether the worker runs, and since when its current drain runs (or null). */
    public record Health(boolean alive, Instant drainingSince) {
    }

    public Worker(Inbox inbox, DeliveryHandler handler, Outbox outbox, Clock clock, boolean synchronous,
                  Metrics metrics) {
        this.inbox = inbox;
        this.handler = handler;
        this.outbox = outbox;
        this.clock = clock;
        this.synchronous = synchronous;
        this.metrics = metrics;
    }

    public Health health() {
        boolean alive;
        synchronized (this) {
            alive = !closed && (synchronous || (executor != null && !executor.isShutdown()));
        }
        return new Health(alive, drainingSince);
    }

    public synchronized void start() {
        if (!synchronous && executor == null) {
            executor = Executors.newSingleThreadScheduledExecutor(r -> {
                Thread t = new Thread(r, "agentx-worker");
                t.setDaemon(true);
                return t;
            });
            executor.scheduleWithFixedDelay(this::safeDrain, 0, TICK.toMillis(), TimeUnit.MILLISECONDS);
        }
    }

    /** New work arrived: do it now (synchronous) or soon (asynchronous). */
    public void wake() {
        ScheduledExecutorService ex;
        synchronized (this) {
            ex = executor;
        }
        if (ex == null) {
            safeDrain();
        } else {
            ex.execute(this::safeDrain);
        }
    }

    private void safeDrain() {
        try {
            drain();
        } catch (RuntimeException e) {
            LOG.error("worker: {}", e.toString(), e);
        }
    }

    /** Processes every due delivery in order, then sends every due effect; forgets old ids once a day. */
    public void drain() {
        synchronized (drainLock) {
            drainingSince = clock.instant();
            try {
                drainLocked();
            } finally {
                drainingSince = null;
            }
        }
    }

    private void drainLocked() {
        if (clock.instant().isAfter(lastPrune.plus(Duration.ofDays(1)))) {
            inbox.prune();
            outbox.prune();
            lastPrune = clock.instant();
        }
        for (Path file : inbox.pending()) {
            Inbox.Progress progress = inbox.progress(file);
            Instant now = clock.instant();
            if (progress.notBefore() != null && now.isBefore(progress.notBefore())) {
                break;
            }
            InboundDelivery d;
            try {
                d = inbox.read(file);
            } catch (RuntimeException e) {
                inbox.fail(file, "unreadable: " + e.getMessage());
                continue;
            }
            String action = putContext(d);
            try {
                handler.handle(d, progress, p -> inbox.saveProgress(file, p));
                inbox.done(file);
                LOG.info("delivery {} ({}{}) processed", d.id(), d.event(), action.isEmpty() ? "" : "." + action);
                metrics.increment(ServerMetrics.DELIVERIES, "event", d.event(), "action", action, "outcome", "processed");
            } catch (RuntimeException e) {
                Inbox.Progress now2 = inbox.progress(file);
                int attempts = now2.attempts() + 1;
                if (attempts >= MAX_ATTEMPTS) {
                    LOG.error("delivery {} ({}) failed {} times; moved to the inbox's failed/: {}", d.id(), d.event(),
                            attempts, e.toString());
                    inbox.fail(file, "failed " + attempts + " times, last: " + e);
                    metrics.increment(ServerMetrics.DELIVERIES, "event", d.event(), "action", action, "outcome", "failed");
                    continue;
                }
                Duration wait = Duration.ofSeconds(5L << Math.min(attempts, 10));
                LOG.warn("delivery {} ({}) failed (attempt {}), retrying in {} s: {}", d.id(), d.event(), attempts,
                        wait.toSeconds(), e.toString(), e);
                inbox.saveProgress(file, new Inbox.Progress(now2.commandsDone(), now2.refused(), attempts, now.plus(wait)));
                metrics.increment(ServerMetrics.DELIVERIES, "event", d.event(), "action", action, "outcome", "retry");
                break;
            } finally {
                clearContext();
            }
        }
        outbox.flush();
    }

    /** MDC keys every log line of a delivery's work carries (LOG_FORMAT=json writes them as fields). */
    public static final String MDC_DELIVERY = "delivery";
    public static final String MDC_REPOSITORY = "repository";
    public static final String MDC_ISSUE = "issue";

    /** Puts the delivery id, repository and issue into the MDC; returns the payload's action. */
    private String putContext(InboundDelivery d) {
        MDC.put(MDC_DELIVERY, d.id());
        try {
            JsonNode p = json.readTree(d.body());
            String repo = p.path("repository").path("full_name").asText("");
            int issue = p.path("issue").path("number").asInt(0);
            if (!repo.isEmpty()) {
                MDC.put(MDC_REPOSITORY, repo);
            }
            if (issue > 0) {
                MDC.put(MDC_ISSUE, String.valueOf(issue));
            }
            return p.path("action").asText("");
        } catch (IOException e) {
            return "";
        }
    }

    private static void clearContext() {
        MDC.remove(MDC_DELIVERY);
        MDC.remove(MDC_REPOSITORY);
        MDC.remove(MDC_ISSUE);
    }

    /** Stops the background thread after the drain under way, if any, then flushes the outbox once. */
    @Override
    public void close() {
        ScheduledExecutorService ex;
        synchronized (this) {
            ex = executor;
            executor = null;
            closed = true;
        }
        if (ex == null) {
            return;
        }
        ex.shutdown();
        try {
            if (!ex.awaitTermination(30, TimeUnit.SECONDS)) {
                ex.shutdownNow();
            }
        } catch (InterruptedException e) {
            ex.shutdownNow();
            Thread.currentThread().interrupt();
        }
        // Shutdown: what is still queued stays in the inbox and outbox on disk; send what is due once more.
        synchronized (drainLock) {
            try {
                Outbox.Flush f = outbox.flush();
                LOG.info("worker stopped; final outbox flush: {} sent, {} failed, {} waiting", f.done(), f.failed(),
                        f.waiting());
            } catch (RuntimeException e) {
                LOG.warn("final outbox flush failed; the effects stay queued on disk: {}", e.toString());
            }
        }
    }
}
