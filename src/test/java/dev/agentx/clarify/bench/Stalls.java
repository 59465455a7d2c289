package dev.agentx.clarify.bench;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.locks.LockSupport;

/**
 * A stall detector (the idea of jHiccup): a thread of normal priority that asks to wake every
 * millisecond and notes each time it woke more than {@link #LATE_NANOS} late. What it notes is
 * what any thread of the JVM would have suffered then: a collection's or another safepoint's
 * pause, or both cores busy with something else. It costs about 1,000 wake-ups a second, so the
 * bench runs it only during the steady runs.
 */
final class Stalls implements AutoCloseable {
    /** Later than this (on top of the 1 ms asked for) counts as a stall. */
    static final long LATE_NANOS = 2_000_000L;

    /** One stall: when the detector should have woken (nanoTime) and when it did. */
    record Stall(long startNanos, long endNanos) implements Interval {
    }

    private final List<Stall> stalls = new ArrayList<>();
    private final Thread thread;
    private volatile boolean running = true;

    Stalls() {
        thread = new Thread(this::watch, "bench-stall-detector");
        thread.setDaemon(true);
        thread.start();
    }

    private void watch() {
        long due = System.nanoTime() + 1_000_000L;
        while (running) {
            LockSupport.parkNanos(due - System.nanoTime());
            long now = System.nanoTime();
            if (now - due > LATE_NANOS) {
                synchronized (stalls) {
                    stalls.add(new Stall(due, now));
                }
            }
            due = Math.max(due, now) + 1_000_000L;
        }
    }

    /** The stalls that ended after {@code fromNanos}. */
    List<Stall> since(long fromNanos) {
        synchronized (stalls) {
            return stalls.stream().filter(s -> s.endNanos() > fromNanos).toList();
        }
    }

    @Override
    public void close() throws InterruptedException {
        running = false;
        thread.join();
    }
}
