package dev.agentx.clarify.bench;

/** A stretch of time on the {@link System#nanoTime()} scale: a GC pause or a stall of the JVM. */
interface Interval {
    long startNanos();

    long endNanos();

    default double millis() {
        return (endNanos() - startNanos()) / 1e6;
    }

    default boolean overlaps(long from, long to) {
        return startNanos() < to && endNanos() > from;
    }
}
