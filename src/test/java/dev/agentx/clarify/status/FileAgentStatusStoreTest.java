package dev.agentx.clarify.status;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.agentx.clarify.app.LocalMode;
import dev.agentx.clarify.ledger.FileLedgerStore;
import dev.agentx.clarify.lock.LockManager;
import dev.agentx.clarify.routing.ClarifyCommand;
import dev.agentx.clarify.routing.Outcome;
import dev.agentx.clarify.support.MutableClock;
import dev.agentx.clarify.support.TestRoot;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class FileAgentStatusStoreTest {
    @TempDir
    Path dir;

    private static final Instant AT = Instant.parse("2026-11-22T10:00:00Z");

    private static FileAgentStatusStore store(Path dir) {
        LockManager locks = LockManager.standard(Clock.systemUTC());
        FileLedgerStore ledgers = new FileLedgerStore(dir, locks);
        return new FileAgentStatusStore(dir, locks, ledgers,
                new dev.agentx.clarify.ledger.ActiveLedgerIndex(ledgers, dir.resolve("monitor-index.json")));
    }

    private static Map<String, AgentStatus> with(Map<String, AgentStatus> m, String agent, int issue) {
        Map<String, AgentStatus> out = new TreeMap<>(m);
        out.put(agent, AgentStatus.working(issue, AT));
        return out;
    }

    @Test
    void concurrentUpdatesOfOneProcessAllLandAndEachReturnsWithItsChangeOnDisk() throws Exception {
        FileAgentStatusStore store = store(dir);
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
                        assertEquals(AgentState.WORKING, store(dir).read().get(agent).status());
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
        FileAgentStatusStore store = store(dir);
        store.update("a", m -> with(m, "a", 1));
        IllegalStateException boom = new IllegalStateException("boom");
        IllegalStateException thrown = assertThrows(IllegalStateException.class, () -> store.update("b", m -> {
            throw boom;
        }));
        assertSame(boom, thrown);
        store.update("c", m -> with(m, "c", 3));
        assertEquals(List.of("a", "c"), new ArrayList<>(store.read().keySet()));
    }
    @Test
    void writtenBehindTheProcessReadsItsOwnStatusesAtOnceAndAFlushPutsThemOnDisk() {
        MutableClock clock = MutableClock.at("2026-11-22T10:00:00Z");
        LocalMode local = new TestRoot(dir, clock).local();
        local.statuses().writeBehind();
        Outcome asked = local.engine().execute(new ClarifyCommand.Ask(3, "engineer", "architect", null, "Q?", true,
                List.of(), null));
        assertEquals(AgentState.BLOCKED_CLARIFICATION, local.statuses().read().get("engineer").status());
        local.engine().execute(new ClarifyCommand.Answer(asked.record().id(), "architect", "A."));
        local.statuses().flush();
        Map<String, AgentStatus> onDisk = store(dir.resolve(".agentx").resolve("state")).read();
        assertEquals(AgentStatus.working(3, AT), onDisk.get("engineer"));
        assertEquals(AgentStatus.working(3, AT), onDisk.get("architect"));
    }

    @Test
    void aLateWriteForAnIssueDoesNotPutBackAStatusItsLedgerHasMovedPast() {
        MutableClock clock = MutableClock.at("2026-11-22T10:00:00Z");
        LocalMode local = new TestRoot(dir, clock).local();
        Outcome asked = local.engine().execute(new ClarifyCommand.Ask(3, "engineer", "architect", null, "Q?", true,
                List.of(), null));
        clock.advance(Duration.ofMinutes(2));
        local.engine().execute(new ClarifyCommand.Answer(asked.record().id(), "architect", "A."));
        Map<String, AgentStatus> answered = local.statuses().read();
        assertEquals(AgentState.WORKING, answered.get("engineer").status());
        // the request's write reaching the file only now (another process, late): it reads the
        // ledger as it is, answered, and changes nothing
        store(dir.resolve(".agentx").resolve("state")).mirror("engineer", 3, Set.of("engineer",
                "architect"));
        assertEquals(answered, store(dir.resolve(".agentx").resolve("state")).read());
    }

    @Test
    void anOperationLeavesItsStatusesToWhoeverHoldsTheFilesLockAndTheNextReaderAppliesThem() throws Exception {
        MutableClock clock = MutableClock.at("2026-11-22T10:00:00Z");
        LocalMode local = new TestRoot(dir, clock).local();
        Path state = dir.resolve(".agentx").resolve("state");
        Path file = state.resolve("agent-status.json");
        CountDownLatch held = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        ExecutorService other = Executors.newSingleThreadExecutor();
        try {
            // another process of ours holding the file's lock (a lock manager of its own)
            Future<?> holder = other.submit(() -> LockManager.standard(Clock.systemUTC()).withLock(file, "other",
                    () -> {
                        held.countDown();
                        try {
                            return release.await(60, TimeUnit.SECONDS);
                        } catch (InterruptedException e) {
                            throw new IllegalStateException(e);
                        }
                    }));
            held.await(30, TimeUnit.SECONDS);
            // returns while the lock is held: it does not wait for it
            Outcome asked = local.engine().execute(new ClarifyCommand.Ask(3, "engineer", "architect", null, "Q?", true,
                    List.of(), null));
            try (Stream<Path> left = Files.list(state.resolve(".runtime/agent-status.pending"))) {
                assertEquals(1, left.count(), "its mirror is left for the holder");
            }
            release.countDown();
            holder.get(30, TimeUnit.SECONDS);
            // the holder here was no status store: the next reader applies what it left
            Map<String, AgentStatus> read = store(state).read();
            assertEquals(AgentStatus.blocked(3, AT, asked.record().id(), "architect"), read.get("engineer"));
            try (Stream<Path> left = Files.list(state.resolve(".runtime/agent-status.pending"))) {
                assertEquals(0, left.count());
            }
        } finally {
            release.countDown();
            other.shutdownNow();
        }
    }

    /**
     * A holder of another kind (a script that knows only the lock-file protocol) is not waited for
     * either: the operation leaves its statuses and returns at once, and whoever takes the lock
     * next (here the next reader) applies them.
     */
    @Test
    void anOperationDoesNotWaitForAHolderOfAnotherKindAndTheNextReaderAppliesItsStatuses() throws Exception {
        MutableClock clock = MutableClock.at("2026-11-22T10:00:00Z");
        LocalMode local = new TestRoot(dir, clock).local();
        Path state = dir.resolve(".agentx").resolve("state");
        Files.createDirectories(state);
        Path lock = state.resolve("agent-status.json.lock");
        // fresh, from another host: neither stale nor a process of ours
        Files.writeString(lock, "{\"pid\":1,\"timestamp\":\"" + Instant.now() + "\",\"agent\":\"script\","
                + "\"token\":\"t9\",\"host\":\"elsewhere\"}");
        Outcome asked = local.engine().execute(new ClarifyCommand.Ask(3, "engineer", "architect", null, "Q?", true,
                List.of(), null));
        try (Stream<Path> left = Files.list(state.resolve(".runtime/agent-status.pending"))) {
            assertEquals(1, left.count(), "its statuses are left for whoever takes the lock next");
        }
        Files.delete(lock);
        Map<String, AgentStatus> read = store(state).read();
        assertEquals(AgentStatus.blocked(3, AT, asked.record().id(), "architect"), read.get("engineer"));
    }

    /**
     * What another process leaves after the holder listed what was left, and before it lets go,
     * is applied by the holder's look after it lets go: nothing left is ever left without a
     * holder to apply it.
     */
    @Test
    void whatIsLeftWhileTheHolderWritesIsAppliedByTheHolderOnceItLetsGo() throws Exception {
        MutableClock clock = MutableClock.at("2026-11-22T10:00:00Z");
        LocalMode local = new TestRoot(dir, clock).local();
        LocalMode other = new TestRoot(dir, clock).local(); // another process: its own locks and stores
        Path state = dir.resolve(".agentx").resolve("state");
        AtomicBoolean once = new AtomicBoolean();
        ExecutorService elsewhere = Executors.newSingleThreadExecutor();
        try {
            ((FileAgentStatusStore) local.statuses()).afterListing(() -> {
                if (once.compareAndSet(false, true)) {
                    try {
                        // it finds the lock held, leaves its statuses and returns without waiting
                        elsewhere.submit(() -> other.engine().execute(new ClarifyCommand.Ask(5, "engineer",
                                "product-manager", null, "Scope?", true, List.of(), null))).get(30, TimeUnit.SECONDS);
                    } catch (Exception e) {
                        throw new IllegalStateException(e);
                    }
                }
            });
            local.engine().execute(new ClarifyCommand.Ask(3, "engineer", "architect", null, "Q?", true, List.of(),
                    null));
        } finally {
            elsewhere.shutdownNow();
        }
        assertEquals(true, once.get());
        try (Stream<Path> left = Files.list(state.resolve(".runtime/agent-status.pending"))) {
            assertEquals(0, left.count(), "applied by the holder once it let go");
        }
        Map<String, AgentStatus> onDisk = new AgentStatusCodec().decode(
                Files.readAllBytes(state.resolve("agent-status.json")));
        assertEquals(AgentState.CLARIFYING, onDisk.get("product-manager").status(), onDisk.toString());
        assertEquals(Integer.valueOf(5), onDisk.get("product-manager").issue());
        assertEquals(AgentState.CLARIFYING, onDisk.get("architect").status(), onDisk.toString());
    }
}
