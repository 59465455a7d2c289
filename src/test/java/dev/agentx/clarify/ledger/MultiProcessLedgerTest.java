package dev.agentx.clarify.ledger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.agentx.clarify.app.LocalMode;
import dev.agentx.clarify.lock.FileLock;
import dev.agentx.clarify.lock.LockManager;
import dev.agentx.clarify.lock.LockObserver;
import dev.agentx.clarify.lock.LockSettings;
import dev.agentx.clarify.lock.ProcessIdentity;
import dev.agentx.clarify.protocol.ClarificationRecord;
import dev.agentx.clarify.protocol.ClarifyException;
import dev.agentx.clarify.protocol.ErrorCode;
import dev.agentx.clarify.protocol.Ledger;
import dev.agentx.clarify.protocol.Status;
import dev.agentx.clarify.status.AgentState;
import dev.agentx.clarify.status.AgentStatus;
import dev.agentx.clarify.status.AgentStatusCodec;
import dev.agentx.clarify.support.Jvm;
import dev.agentx.clarify.support.MutableClock;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.function.IntUnaryOperator;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Real separate JVMs on one ledger: nothing lost, ids gap-free, SIGKILL leaves no torn file. */
class MultiProcessLedgerTest {
    @TempDir
    Path root;

    @Test
    void eightProcessesOfTwentyFivePairsLoseNothing() throws Exception {
        int workers = 8;
        int pairs = 25;
        List<String> outputs = finished(workers("pairs", workers, w -> 1, pairs));
        Ledger ledger = LocalMode.open(root, Clock.systemUTC()).ledgers().read(1).orElseThrow();
        assertEquals(workers * pairs, ledger.clarifications().size());
        Set<String> questions = new HashSet<>();
        for (int i = 0; i < ledger.clarifications().size(); i++) {
            ClarificationRecord r = ledger.clarifications().get(i);
            assertEquals(String.format("CLR-1-%03d", i + 1), r.id(), "ids unique and gap-free, in order");
            assertEquals(Status.ANSWERED, r.status(), r.id());
            String q = r.thread().get(0).body();
            assertEquals("a-" + q, r.thread().get(1).body(), "the answer belongs to its question");
            questions.add(q);
        }
        for (int w = 0; w < workers; w++) {
            for (int i = 0; i < pairs; i++) {
                assertTrue(questions.contains("w" + w + "-q" + i), "missing w" + w + "-q" + i);
            }
        }
        List<String> events = Files.readAllLines(root.resolve(".agentx/state/events.jsonl"));
        assertEquals(2 * workers * pairs, events.size(), "one line per request and per answer, none interleaved");
        for (String line : events) {
            assertTrue(line.startsWith("{\"event\":\"clarification-") && line.endsWith("}"), line);
        }
        System.out.println("multi-process: " + outputs.stream().map(o -> o.substring(o.indexOf("DONE")).trim()).toList());
    }

    /**
     * Processes that write the statuses behind (agentx mcp) hold the status file's turn on one
     * thread while another waits for the issue's: the kernel sees a cycle between processes that
     * is none between threads, and its refusal (EDEADLK) must not fail an operation.
     */
    @Test
    void processesWritingTheStatusesBehindLoseNothingAndEndWithTheStatusesOfTheLedger() throws Exception {
        int workers = 8;
        int pairs = 25;
        finished(workers("pairs-behind", workers, w -> 1 + w % 2, pairs));
        assertAllAnswered(2, workers / 2 * pairs);
        // every process wrote its last statuses, or left them to a holder that wrote them, before it exited
        assertEndWithBothAgentsAtWork();
    }

    /**
     * Operations on different issues do not wait for the status file's lock: one that finds it
     * held leaves its mirror to the holder. Nothing left is ever left without a holder: when the
     * last process has exited, the file as it is on disk holds every issue's outcome.
     */
    @Test
    void processesOnDifferentIssuesLeaveTheirStatusesToTheHolderAndNoneIsLeftUndone() throws Exception {
        int workers = 8;
        int pairs = 15;
        finished(workers("pairs", workers, w -> 1 + w, pairs));
        assertAllAnswered(workers, pairs);
        assertEndWithBothAgentsAtWork();
    }

    /** {@code workers} LedgerWorker processes in {@code mode}, worker w on issue {@code issueOf(w)}. */
    private List<Process> workers(String mode, int workers, IntUnaryOperator issueOf, int pairs) {
        List<Process> procs = new ArrayList<>();
        for (int w = 0; w < workers; w++) {
            procs.add(Jvm.start(LedgerWorker.class, mode, root.toString(), String.valueOf(issueOf.applyAsInt(w)),
                    "w" + w, String.valueOf(pairs)));
        }
        return procs;
    }

    /** Issues 1 to {@code issues} each hold {@code records} records, all answered. */
    private void assertAllAnswered(int issues, int records) {
        LocalMode local = LocalMode.open(root, Clock.systemUTC());
        for (int issue = 1; issue <= issues; issue++) {
            Ledger ledger = local.ledgers().read(issue).orElseThrow();
            assertEquals(records, ledger.clarifications().size());
            ledger.clarifications().forEach(r -> assertEquals(Status.ANSWERED, r.status(), r.id()));
        }
    }

    /** Read from the file itself, not through a store (whose read applies what was left). */
    private void assertEndWithBothAgentsAtWork() throws Exception {
        Path state = root.resolve(".agentx/state");
        Path pending = state.resolve(".runtime/agent-status.pending");
        try (Stream<Path> left = Files.exists(pending) ? Files.list(pending) : Stream.empty()) {
            assertEquals(List.of(), left.toList(), "mirrors left with no holder to apply them");
        }
        Map<String, AgentStatus> statuses = new AgentStatusCodec().decode(
                Files.readAllBytes(state.resolve("agent-status.json")));
        assertEquals(AgentState.WORKING, statuses.get("engineer").status(), statuses.toString());
        assertEquals(AgentState.WORKING, statuses.get("architect").status(), statuses.toString());
    }

    @Test
    void sigkillWhileHoldingTheLockLeavesNoTornLedgerAndTheLockIsTakenOver() throws Exception {
        LocalMode local = LocalMode.open(root, Clock.systemUTC());
        local.engine().execute(new dev.agentx.clarify.routing.ClarifyCommand.Ask(5, "engineer", "architect", null,
                "before the crash", true, List.of(), null));
        byte[] before = Files.readAllBytes(local.files().ledgers().fileOf(5));

        Process holder = Jvm.start(LedgerWorker.class, "hold", root.toString(), "5");
        BufferedReader out = new BufferedReader(new InputStreamReader(holder.getInputStream(), StandardCharsets.UTF_8));
        assertEquals("LOCKED", out.readLine());
        holder.destroyForcibly(); // SIGKILL
        assertTrue(holder.waitFor(30, TimeUnit.SECONDS));
        Path lock = FileLock.lockPathOf(local.files().ledgers().fileOf(5));
        assertTrue(Files.exists(lock), "the killed holder left its lock behind");
        assertTrue(java.util.Arrays.equals(before, Files.readAllBytes(local.files().ledgers().fileOf(5))), "ledger untouched");

        // Seen from another host, the pid cannot be checked: the lock is respected until 30 s old...
        MutableClock clock = new MutableClock(Instant.now());
        ProcessIdentity elsewhere = otherHost();
        LockManager remote = new LockManager(clock, LockSettings.defaults(), clock::advance, elsewhere,
                LockObserver.NONE);
        FileLedgerStore remoteStore = new FileLedgerStore(root.resolve(".agentx/state"), remote);
        ClarifyException timeout = org.junit.jupiter.api.Assertions.assertThrows(ClarifyException.class,
                () -> remoteStore.update(5, "remote", l -> LedgerStore.Mutation.none(null)));
        assertEquals(ErrorCode.LOCK_TIMEOUT, timeout.code());
        assertTrue(Files.exists(lock));
        // ...and taken over once it is past the stale time.
        clock.advance(Duration.ofSeconds(31));
        remoteStore.update(5, "remote", l -> LedgerStore.Mutation.none(null));
        assertFalse(Files.exists(lock));

        // On this host the dead pid is recognised at once.
        Process holder2 = Jvm.start(LedgerWorker.class, "hold", root.toString(), "5");
        BufferedReader out2 = new BufferedReader(new InputStreamReader(holder2.getInputStream(), StandardCharsets.UTF_8));
        assertEquals("LOCKED", out2.readLine());
        holder2.destroyForcibly();
        assertTrue(holder2.waitFor(30, TimeUnit.SECONDS));
        long start = System.nanoTime();
        LocalMode.open(root, Clock.systemUTC()).engine().execute(new dev.agentx.clarify.routing.ClarifyCommand.Answer(
                "CLR-5-001", null, "after the crash"));
        assertTrue(System.nanoTime() - start < TimeUnit.SECONDS.toNanos(4), "no wait for a dead owner");
        Ledger after = local.ledgers().read(5).orElseThrow();
        assertEquals(Status.ANSWERED, after.clarifications().get(0).status());
    }

    @Test
    void sigkillDuringWritesNeverTearsTheLedgerNorLosesAcknowledgedWrites() throws Exception {
        Set<String> acked = new HashSet<>();
        for (int kill = 0; kill < 5; kill++) {
            Process p = Jvm.start(LedgerWorker.class, "loop", root.toString(), "9", "k" + kill);
            BufferedReader out = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
            int target = 3 + kill * 4;
            for (int i = 0; i < target; i++) {
                String line = out.readLine();
                assertTrue(line != null && line.startsWith("ACK "), String.valueOf(line));
                acked.add(line.split(" ")[2]);
            }
            p.destroyForcibly();
            assertTrue(p.waitFor(30, TimeUnit.SECONDS));
            Ledger ledger = LocalMode.open(root, Clock.systemUTC()).ledgers().read(9).orElseThrow();
            Set<String> present = new HashSet<>();
            ledger.clarifications().forEach(r -> present.add(r.thread().get(0).body()));
            assertTrue(present.containsAll(acked), "acknowledged writes survive the kill");
            for (int i = 0; i < ledger.clarifications().size(); i++) {
                assertEquals(String.format("CLR-9-%03d", i + 1), ledger.clarifications().get(i).id());
            }
        }
    }

    /** What each worker printed, once all have exited successfully. */
    private static List<String> finished(List<Process> procs) throws Exception {
        List<String> outputs = new ArrayList<>();
        for (Process p : procs) {
            assertTrue(p.waitFor(240, TimeUnit.SECONDS), "worker finished");
            outputs.add(new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8));
            assertEquals(0, p.exitValue(), outputs.get(outputs.size() - 1));
        }
        return outputs;
    }

    /** This process as seen from another host (for tests of this package). */
    static ProcessIdentity otherHost() {
        ProcessIdentity me = ProcessIdentity.current();
        return new ProcessIdentity() {
            @Override
            public long pid() {
                return me.pid();
            }

            @Override
            public String host() {
                return "some-other-host";
            }

            @Override
            public Instant processStart() {
                return me.processStart();
            }

            @Override
            public boolean isAlive(long pid, Instant start) {
                throw new AssertionError("a lock of another host is never judged by pid");
            }
        };
    }
}
