package dev.agentx.clarify.github.inbox;

import dev.agentx.clarify.github.outbox.Outbox;
import java.util.OptionalInt;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The threads of a running worker (asynchronous mode): {@link Worker#LANES} lanes, {@link
 * Worker#SENDERS} senders, the tick, and one thread for the outbox's short timed work; all of the
 * lowest priority, made together at start and stopped in order at close. After each delivery a lane
 * {@link #handOff hands} the issues it queued effects for to the senders and goes on, so a lane
 * never waits for GitHub while posting.
 *
 * @param outboxTimers the outbox's short timed work (a look again at an issue waiting for another
 *     replica, the done marks of what the senders sent): a thread of its own, since the tick can take
 *     seconds (its flush sends what is due one effect after another), and other replicas wait for both
 */
record WorkerThreads(ExecutorService lanes, ExecutorService senders, ScheduledExecutorService ticker,
                     ScheduledExecutorService outboxTimers) {
    /** The worker's log: its parts log as one. */
    private static final Logger LOG = LoggerFactory.getLogger(Worker.class);

    /** Makes the threads; the first lane logs whether it runs below the caller's priority. */
    static WorkerThreads start() {
        AtomicInteger n = new AtomicInteger();
        ExecutorService lanes = Executors.newFixedThreadPool(Worker.LANES,
                r -> daemon(r, "agentx-worker-" + n.incrementAndGet()));
        OptionalInt starterNice = ThreadNice.ofCurrentThread();
        lanes.execute(() -> logPriority(starterNice, ThreadNice.ofCurrentThread()));
        AtomicInteger s = new AtomicInteger();
        ExecutorService senders = Executors.newFixedThreadPool(Worker.SENDERS,
                r -> daemon(r, "agentx-sender-" + s.incrementAndGet()));
        ScheduledExecutorService ticker = Executors.newSingleThreadScheduledExecutor(
                r -> daemon(r, "agentx-worker-tick"));
        ScheduledExecutorService outboxTimers = Executors.newSingleThreadScheduledExecutor(
                r -> daemon(r, "agentx-outbox-timers"));
        return new WorkerThreads(lanes, senders, ticker, outboxTimers);
    }

    /** Runs {@code tick} now and every {@link Worker#TICK} after it ends. */
    void scheduleTick(Runnable tick) {
        ticker.scheduleWithFixedDelay(tick, 0, Worker.TICK.toMillis(), TimeUnit.MILLISECONDS);
    }

    /** The senders send what a lane queued in the outbox, while the lane goes on with its next delivery. */
    void handOff(Outbox outbox) {
        outbox.sendQueued(senders, outboxTimers);
    }

    /**
     * Stops in order: the tick; the lanes, once they finished (a lane whose worker is closing works
     * off its line for up to {@link Lanes#DRAIN}); the senders after them, so what the lanes queued
     * last is sent or left to the final flush; the outbox's timers, whose work is left to that flush.
     */
    void stop() {
        ticker.shutdown();
        lanes.shutdown();
        try {
            if (!lanes.awaitTermination(30, TimeUnit.SECONDS)) {
                lanes.shutdownNow();
            }
            senders.shutdown();
            if (!senders.awaitTermination(30, TimeUnit.SECONDS)) {
                senders.shutdownNow();
            }
            ticker.awaitTermination(30, TimeUnit.SECONDS);
            outboxTimers.shutdownNow();
            outboxTimers.awaitTermination(30, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            lanes.shutdownNow();
            senders.shutdownNow();
            outboxTimers.shutdownNow();
            Thread.currentThread().interrupt();
        }
    }

    /**
     * A thread of the worker (lane, sender, tick): a daemon of the lowest priority, so that with
     * {@code -XX:ThreadPriorityPolicy=1} (the deployment's flags) Linux runs it at nice 4 and the
     * webhook's threads (nice 0) get the CPU first when both want it. On 2 cores this is what
     * keeps acknowledgements quick while the worker is busy (bench/README.md).
     */
    private static Thread daemon(Runnable r, String name) {
        Thread t = new Thread(r, name);
        t.setDaemon(true);
        t.setPriority(Thread.MIN_PRIORITY);
        return t;
    }

    private static void logPriority(OptionalInt starter, OptionalInt lane) {
        if (starter.isEmpty() || lane.isEmpty()) {
            LOG.debug("worker: thread priorities unknown here (no /proc/thread-self/stat)");
        } else if (lane.getAsInt() > starter.getAsInt()) {
            LOG.info("worker: lanes and senders run at nice {}, below the webhook's threads (nice {}){}",
                    lane.getAsInt(), starter.getAsInt(), "root".equals(System.getProperty("user.name")) ? ""
                            : "; the JVM's warning at start about -XX:ThreadPriorityPolicy=1 concerns raising "
                                    + "priorities and does not apply");
        } else {
            LOG.info("worker: lanes and senders run at the webhook's priority (nice {}); the JVM flag "
                    + "-XX:ThreadPriorityPolicy=1 lets them step back for acknowledgements (bench/README.md)",
                    lane.getAsInt());
        }
    }
}
