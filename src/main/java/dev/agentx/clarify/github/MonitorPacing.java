package dev.agentx.clarify.github;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * When the monitor pass after a delivered event runs: at once, unless a pass of the same
 * repository started less than {@link #PACE} ago; then one pass runs when that time is up, for
 * every event of the repository in between, with the newest of their contexts. A pass reads every
 * open clarification of the repository, so under a stream of events one pass per event would
 * spend most of the server's time looking at the same records again; at one pass a second a
 * deadlock or stuck record that an event made is acted on within a second, and stale records
 * (minutes) as before. {@link #inline()}: every pass at once (synchronous mode, tests).
 */
public final class MonitorPacing {
    private static final Logger LOG = LoggerFactory.getLogger(MonitorPacing.class);
    /** The shortest time between the starts of two passes of one repository after events. */
    public static final Duration PACE = Duration.ofSeconds(1);

    /** Runs {@code pass} after {@code delay}, on a thread of its own. */
    @FunctionalInterface
    public interface Later {
        void run(Duration delay, Runnable pass);
    }

    private final Clock clock;
    private final Duration pace;
    private final Later later;
    private final Map<String, State> states = new ConcurrentHashMap<>();

    private static final class State {
        /** When the last pass started, or null before the first. */
        Instant started;
        /** A pass is scheduled: events meanwhile leave it their pass, and it runs the newest. */
        boolean scheduled;
        Runnable newest;
    }

    public MonitorPacing(Clock clock, Duration pace, Later later) {
        this.clock = clock;
        this.pace = pace;
        this.later = later;
    }

    /** Every pass at once, on the caller's thread. */
    public static MonitorPacing inline() {
        return new MonitorPacing(Clock.systemUTC(), Duration.ZERO, (delay, pass) -> pass.run());
    }

    /**
     * An event of {@code repository} was delivered: runs {@code pass} now on the caller's thread,
     * or leaves it to the pass scheduled for when the pace allows.
     */
    public void after(String repository, Runnable pass) {
        State s = states.computeIfAbsent(repository, r -> new State());
        Duration wait;
        synchronized (s) {
            s.newest = pass;
            if (s.scheduled) {
                return;
            }
            Instant now = clock.instant();
            Instant due = s.started == null ? now : s.started.plus(pace);
            if (!now.isBefore(due)) {
                s.started = now;
                wait = null;
            } else {
                s.scheduled = true;
                wait = Duration.between(now, due);
            }
        }
        if (wait == null) {
            pass.run();
            return;
        }
        try {
            later.run(wait, () -> runScheduled(repository, s));
        } catch (java.util.concurrent.RejectedExecutionException stopping) {
            synchronized (s) {
                s.scheduled = false; // the server is stopping: the next start's first event runs a pass
            }
        }
    }

    private void runScheduled(String repository, State s) {
        Runnable pass;
        synchronized (s) {
            s.scheduled = false;
            s.started = clock.instant();
            pass = s.newest;
        }
        try {
            pass.run();
        } catch (RuntimeException e) {
            // the next event runs a pass again
            LOG.warn("monitor pass of {} failed: {}", repository, e.toString(), e);
        }
    }
}
