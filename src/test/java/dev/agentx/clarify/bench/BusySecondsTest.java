package dev.agentx.clarify.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.List;
import org.junit.jupiter.api.Test;

/** The webhook bench's account of a second: cores busy and stolen, the disk's flushes, the JIT. */
class BusySecondsTest {
    @Test
    void sumsTheSamplesOfASecondAndKeepsTheSlowestFlushesApart() {
        // {busy, all, steal, JIT ms, flushes, flush ms} per 100 ms sample
        BusySeconds.Second s = BusySeconds.second(List.of(
                new long[] {18, 20, 8, 5, 40, 4},
                new long[] {20, 20, 0, 0, 2, 60},
                new long[] {10, 20, 2, 1, 38, 6}));
        assertEquals(80, s.busyPercent());
        assertEquals(17, s.stealPercent());
        assertEquals(80, s.flushes());
        assertEquals(70 / 80.0, s.flushMillis(), 1e-9);
        assertEquals(30.0, s.slowestFlushMillis(), 1e-9);
        assertEquals(6, s.jitMillis());
        assertEquals("cores 80% busy, 17% stolen, disk 80 flushes at 0.88 ms (30.0 ms in its slowest 100 ms)",
                s.machine());
    }

    @Test
    void saysWhatItCouldNotReadInsteadOfAZero() {
        // tmpfs: no device; /proc/stat unreadable
        BusySeconds.Second s = BusySeconds.second(List.of(new long[] {-1, -1, -1, 3, -1, -1}));
        assertEquals("cores ?", s.machine());
        assertEquals(3, s.jitMillis());
        BusySeconds.Second idle = BusySeconds.second(List.of(new long[] {1, 20, 0, 0, 0, 0}));
        assertEquals("cores 5% busy, 0% stolen, no disk flushes", idle.machine());
    }
}
