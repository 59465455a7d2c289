package dev.agentx.clarify.status;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.agentx.clarify.lock.LockManager;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class FileAgentStatusStoreTest {
    @TempDir
    Path dir;

    private static final Instant AT = Instant.parse("2026-11-22T10:00:00Z");

    private static Map<String, AgentStatus> with(Map<String, AgentStatus> m, String agent, int issue) {
        Map<String, AgentStatus> out = new TreeMap<>(m);
        out.put(agent, AgentStatus.working(issue, AT));
        return out;
    }

    @Test
    void concurrentUpdatesOfOneProcessAllLandAndEachReturnsWithItsChangeOnDisk() throws Exception {
        FileAgentStatusStore store = new FileAgentStatusStore(dir, LockManager.standard(Clock.systemUTC()));
        ExecutorService pool = Executors.newFixedThreadPool(12);
        CountDownLatch start = new CountDownLatch(1);
        List<Future<?>> all = new ArrayList<>();
        try {
            for (int t = 0; t < 12; t++) {
                int thread = t;
                all.add(pool.submit(() -> {
                    start.await();
                    for (int i = 0; i < 40; i++) {
                        String agent = "agent-" + thread + "-" + i;
                        store.update(agent, m -> with(m, agent, thread));
                        // a fresh reader (another process) sees it as soon as update returns
                        assertEquals(AgentState.WORKING, new FileAgentStatusStore(dir,
                                LockManager.standard(Clock.systemUTC())).read().get(agent).status());
                    }
                    return null;
                }));
            }
            start.countDown();
            for (Future<?> f : all) {
                f.get(120, TimeUnit.SECONDS);
            }
        } finally {
            pool.shutdownNow();
        }
        assertEquals(12 * 40, store.read().size());
    }

    @Test
    void aChangeThatThrowsFailsAloneAndTheOthersAreKept() {
        FileAgentStatusStore store = new FileAgentStatusStore(dir, LockManager.standard(Clock.systemUTC()));
        store.update("a", m -> with(m, "a", 1));
        IllegalStateException boom = new IllegalStateException("boom");
        IllegalStateException thrown = assertThrows(IllegalStateException.class, () -> store.update("b", m -> {
            throw boom;
        }));
        assertSame(boom, thrown);
        store.update("c", m -> with(m, "c", 3));
        assertEquals(List.of("a", "c"), new ArrayList<>(store.read().keySet()));
    }
}
