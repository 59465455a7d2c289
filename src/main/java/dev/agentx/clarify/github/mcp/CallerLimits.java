package dev.agentx.clarify.github.mcp;

import dev.agentx.clarify.metrics.ServerMetrics;
import java.time.Clock;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * What one caller may use of {@code /mcp}, so that no caller hurts the others: requests a minute
 * (a token bucket per caller, on the server's clock), calls waiting for an answer at once per
 * caller and in all, and sessions per caller. Each refusal is counted in {@link
 * ServerMetrics#MCP_REFUSED} by its reason.
 */
final class CallerLimits {
    private final McpSettings settings;
    private final Clock clock;
    private final ServerMetrics metrics;
    private final Map<String, Bucket> buckets = new ConcurrentHashMap<>();
    private final Map<String, AtomicInteger> waitsByCaller = new ConcurrentHashMap<>();
    private final AtomicInteger waits = new AtomicInteger();

    /** A caller's requests: tokens left and when they were last counted. */
    private static final class Bucket {
        double tokens;
        long atNanos;
    }

    CallerLimits(McpSettings settings, Clock clock, ServerMetrics metrics) {
        this.settings = settings;
        this.clock = clock;
        this.metrics = metrics;
    }

    /** Takes one request of {@code caller}'s rate; empty if allowed, else how long until the next one is. */
    Optional<Duration> request(Caller caller) {
        long now = clock.millis() * 1_000_000L;
        double perNano = settings.requestsPerMinute() / 60e9;
        Bucket b = buckets.computeIfAbsent(caller.key(), k -> {
            Bucket fresh = new Bucket();
            fresh.tokens = settings.requestsPerMinute();
            fresh.atNanos = now;
            return fresh;
        });
        synchronized (b) {
            b.tokens = Math.min(settings.requestsPerMinute(), b.tokens + (now - b.atNanos) * perNano);
            b.atNanos = now;
            if (b.tokens >= 1) {
                b.tokens -= 1;
                return Optional.empty();
            }
            metrics.mcpRefused("rate_limit");
            return Optional.of(Duration.ofNanos((long) Math.ceil((1 - b.tokens) / perNano)));
        }
    }

    /**
     * A place for one waiting call of {@code caller}: the release to run when its wait is over, or
     * empty (said why in {@code refusal}) when the caller or the server has as many waiting as allowed.
     */
    Optional<Runnable> waitSlot(Caller caller, StringBuilder refusal) {
        AtomicInteger mine = waitsByCaller.computeIfAbsent(caller.key(), k -> new AtomicInteger());
        if (mine.incrementAndGet() > settings.waitsPerCaller()) {
            mine.decrementAndGet();
            metrics.mcpRefused("waits");
            refusal.append("you have ").append(settings.waitsPerCaller()).append(" calls waiting for answers "
                    + "already, the most one caller may; call again with wait_seconds 0, or once one of them returned");
            return Optional.empty();
        }
        if (waits.incrementAndGet() > settings.waits()) {
            waits.decrementAndGet();
            mine.decrementAndGet();
            metrics.mcpRefused("waits");
            refusal.append("the server has ").append(settings.waits()).append(" calls waiting for answers, the most "
                    + "it holds; call again with wait_seconds 0, and clarify_wait later");
            return Optional.empty();
        }
        AtomicInteger released = new AtomicInteger();
        return Optional.of(() -> {
            if (released.compareAndSet(0, 1)) {
                mine.decrementAndGet();
                waits.decrementAndGet();
            }
        });
    }

    /** Calls waiting now, in all. */
    int waiting() {
        return waits.get();
    }
}
