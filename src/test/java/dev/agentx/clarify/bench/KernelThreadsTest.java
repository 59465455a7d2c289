package dev.agentx.clarify.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.Map;
import org.junit.jupiter.api.Test;

class KernelThreadsTest {
    @Test
    void aKernelThreadCountsUnderItsNameWithoutItsInstance() {
        assertEquals("kdamond", KernelThreads.group("kdamond.0"));
        assertEquals("kworker", KernelThreads.group("kworker/1:2H-kblockd"));
        assertEquals("jbd2", KernelThreads.group("jbd2/vda-8"));
        assertEquals("rcu_preempt", KernelThreads.group("rcu_preempt"));
        assertEquals("/odd", KernelThreads.group("/odd"));
    }

    @Test
    void theTimeBetweenTwoSnapshotsIsSummedByNameAndTheUnmeasurableLeftOut() {
        Map<String, Long> before = Map.of("83\u0000kdamond", 10_000_000L, "12\u0000kworker", 0L, "13\u0000kworker", 0L);
        Map<String, Long> now = Map.of("83\u0000kdamond", 50_000_000L, "12\u0000kworker", 10_000_000L,
                "13\u0000kworker", 20_000_000L, "14\u0000ksoftirqd", 0L, "15\u0000kswapd", 10_000_000L);
        // a thread that started between the two counts all its time; less than a tick is no measure
        assertEquals(Map.of("kdamond", 40_000_000L, "kworker", 30_000_000L, "kswapd", 10_000_000L),
                KernelThreads.since(before, now));
    }
}
