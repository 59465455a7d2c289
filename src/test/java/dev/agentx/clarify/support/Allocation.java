package dev.agentx.clarify.support;

import java.lang.management.ManagementFactory;

/** Heap bytes allocated by the calling thread: tests that hold a path to what it allocates. */
public final class Allocation {
    private static final com.sun.management.ThreadMXBean THREADS =
            (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();

    private Allocation() {
    }

    /** Bytes this thread has allocated so far; the difference of two readings is what ran between them. */
    public static long byThisThread() {
        return THREADS.getCurrentThreadAllocatedBytes();
    }
}
