package dev.agentx.clarify.ledger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.agentx.clarify.app.LocalMode;
import dev.agentx.clarify.events.ClarificationEvent;
import dev.agentx.clarify.events.EventType;
import dev.agentx.clarify.ledger.LedgerStore.Mutation;
import dev.agentx.clarify.lock.LockManager;
import dev.agentx.clarify.lock.LockObserver;
import dev.agentx.clarify.lock.LockSettings;
import dev.agentx.clarify.lock.ProcessIdentity;
import dev.agentx.clarify.lock.Sleeper;
import dev.agentx.clarify.protocol.ClarificationRecord;
import dev.agentx.clarify.protocol.ClarifyException;
import dev.agentx.clarify.protocol.EntryType;
import dev.agentx.clarify.protocol.ErrorCode;
import dev.agentx.clarify.protocol.Ledger;
import dev.agentx.clarify.protocol.Status;
import dev.agentx.clarify.protocol.ThreadEntry;
import dev.agentx.clarify.routing.ClarifyCommand;
import dev.agentx.clarify.routing.LedgerChange;
import dev.agentx.clarify.routing.LedgerChangeCodec;
import dev.agentx.clarify.routing.Outcome;
import dev.agentx.clarify.support.ChannelRoot;
import dev.agentx.clarify.support.MutableClock;
import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Group commit (FileLedgerStore#submit): the changes queued behind a holder, carried out by it. */
class LedgerGroupCommitTest {
    @TempDir
    Path dir;

    private static final int ISSUE = 7;

    private static ClarifyCommand.Ask ask(String question) {
        return new ClarifyCommand.Ask(ISSUE, "engineer", "architect", null, question, true, List.of(), null);
    }

    private static List<ThreadEntry> entries(Ledger ledger) {
        List<ThreadEntry> out = new ArrayList<>();
        ledger.clarifications().forEach(r -> out.addAll(r.thread()));
        return out;
    }

    private static Path queueDir(LocalMode local) {
        return local.root().resolve(".agentx/state/.runtime/changes");
    }

    private static int waiting(Path queue) {
        String[] names = queue.toFile().list();
        int n = 0;
        for (String name : names == null ? new String[0] : names) {
            n += name.endsWith(".req") ? 1 : 0;
        }
        return n;
    }

    /** A thread holding the issue's lock, inside an update, until {@code release}; returned once it holds it. */
    private static Thread holding(LedgerStore store, String actor, CountDownLatch release) throws InterruptedException {
        CountDownLatch holds = new CountDownLatch(1);
        Thread holder = new Thread(() -> store.update(ISSUE, actor, ledger -> {
            holds.countDown();
            try {
                release.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            return Mutation.none(null);
        }));
        holder.setDaemon(true);
        holder.start();
        assertTrue(holds.await(10, TimeUnit.SECONDS), "the holder took the lock");
        return holder;
    }

    @Test
    void theChangesQueuedBehindAHolderAreCarriedOutByOneOfThemInOneTurn() throws Exception {
        LocalMode local = LocalMode.open(dir, Clock.systemUTC());
        local.engine().execute(ask("first"));
        LedgerStore store = local.ledgers();
        CountDownLatch release = new CountDownLatch(1);
        Thread holder = holding(store, "test", release);
        ExecutorService pool = Executors.newFixedThreadPool(5);
        try {
            List<Future<Outcome>> asked = new ArrayList<>();
            for (int i = 0; i < 5; i++) {
                String q = "queued " + i;
                asked.add(pool.submit(() -> local.engine().execute(ask(q))));
            }
            long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
            while (waiting(queueDir(local)) < 5) {
                assertTrue(System.nanoTime() < until, "the five asks never queued");
                Thread.sleep(5);
            }
            release.countDown();
            holder.join(10_000);
            Set<String> ids = new HashSet<>();
            for (Future<Outcome> f : asked) {
                Outcome o = f.get(30, TimeUnit.SECONDS);
                assertEquals(Status.PENDING, o.record().status());
                ids.add(o.record().id());
            }
            assertEquals(5, ids.size(), ids.toString());
        } finally {
            pool.shutdownNow();
        }
        Ledger ledger = store.read(ISSUE).orElseThrow();
        assertEquals(6, ledger.clarifications().size());
        // one of the five took the turn and carried out the other four: theirs carry their keys,
        // its own (and the first ask, made alone) carry none
        long keyed = entries(ledger).stream().filter(e -> e.request() != null).count();
        assertEquals(4, keyed, entries(ledger).toString());
        assertTrue(entries(ledger).stream().filter(e -> e.request() != null)
                .allMatch(e -> e.request().startsWith(LedgerChange.LOCAL)));
        assertEquals(0, waiting(queueDir(local)));
        String[] left = queueDir(local).toFile().list();
        assertEquals(0, left == null ? 0 : left.length, left == null ? "" : String.join(", ", left));
    }

    @Test
    void aChangeWrittenByAHolderThatDiedBeforeItsReplyIsFoundByItsKeyAndNotDoneTwice() throws Exception {
        LocalMode local = LocalMode.open(dir, Clock.systemUTC());
        Outcome asked = local.engine().execute(ask("Which auth?"));
        LedgerChangeCodec codec = new LedgerChangeCodec((issue, outcomes) -> { });
        LedgerChange.Answer answer = new LedgerChange.Answer(asked.record().id(), null, "OAuth", null,
                Instant.parse("2026-11-26T10:00:00Z"), LedgerChange.LOCAL + "abc123");
        // the dead holder's work: the answer in the ledger, with its key; the request still claimed
        local.ledgers().update(ISSUE, "holder", ledger -> answer.forAnother().apply(ledger));
        ChangeQueue queue = new ChangeQueue(dir.resolve(".agentx/state/.runtime"), ProcessIdentity.current(),
                Clock.systemUTC());
        ChangeQueue.Request request = queue.enqueue(ISSUE, codec.writeChange(answer), 0);
        Files.move(queue.directory().resolve(request.name() + ".req"), queue.directory().resolve(request.name() + ".taken"));

        local.engine().execute(ask("Which database?")); // the next holder finds the claim left behind

        ClarificationRecord answered = local.ledgers().read(ISSUE).orElseThrow().find(asked.record().id()).orElseThrow();
        assertEquals(Status.ANSWERED, answered.status());
        assertEquals(1, answered.thread().stream().filter(e -> e.type() == EntryType.ANSWER).count());
        Optional<ChangeQueue.Reply> reply = queue.takeReply(request);
        assertTrue(reply.isPresent(), "the waiting submitter gets a reply");
        Outcome replayed = codec.readResult(((ChangeQueue.Done) reply.get()).result());
        assertTrue(replayed.replayed());
        assertEquals(Status.ANSWERED, replayed.record().status());
        // the submitter heard nothing of the dead holder's run: it gets that run's event to record
        assertEquals(List.of(new ClarificationEvent(EventType.ANSWERED, asked.record().id(), ISSUE, "engineer",
                "architect", asked.record().topic(), true, 1, Status.ANSWERED,
                answered.lastAnswer().orElseThrow().timestamp())),
                replayed.events());
        assertFalse(Files.exists(queue.directory().resolve(request.name() + ".taken")));
    }

    /**
     * A question carried out for its command by a holder that died before its reply: the command,
     * finding it done, records its event and puts it to the target's channel (here one that answers
     * at once), as it would have with the reply; a question whose round moved on since is not put
     * to the channel again.
     */
    @Test
    void aQuestionWrittenByAHolderThatDiedBeforeItsReplyIsRoutedAndLoggedByItsCommand() throws Exception {
        MutableClock clock = MutableClock.at("2026-11-26T10:00:00Z");
        ChannelRoot root = new ChannelRoot(dir, clock);
        root.config("[agents.architect]\nchannel = \"auto\"\n");
        LocalMode local = root.local();
        Instant at = clock.instant();
        String key = LedgerChange.LOCAL + "dead-holder-1";
        LedgerChange.Ask change = new LedgerChange.Ask(ISSUE, "engineer", "architect", "auth", true, 5, at,
                at.plus(Duration.ofMinutes(30)), List.of("OAuth (default)", "SAML"), "Which auth?", null, null, List.of(), key);
        local.ledgers().update(ISSUE, "holder", ledger -> change.forAnother().apply(ledger)); // its write, then death

        Outcome o = local.engine().execute(new ClarifyCommand.Ask(ISSUE, "engineer", "architect", "auth",
                "Which auth?", true, List.of("OAuth (default)", "SAML"), null), key);
        assertEquals("CLR-7-001", o.record().id());
        assertEquals(Status.ANSWERED, o.record().status(), "routed: the auto channel answered " + o);
        assertEquals("OAuth", o.record().lastAnswer().orElseThrow().body());
        Ledger ledger = local.ledgers().read(ISSUE).orElseThrow();
        assertEquals(1, ledger.clarifications().size(), "asked once");
        assertEquals(List.of("clarification-requested CLR-7-001", "clarification-answered CLR-7-001"), events(dir));

        // the same again, with the round answered meanwhile: recorded, not asked again
        String second = LedgerChange.LOCAL + "dead-holder-2";
        LedgerChange.Ask again = new LedgerChange.Ask(ISSUE, "engineer", "architect", "db", true, 5, at,
                at.plus(Duration.ofMinutes(30)), List.of("SQLite (default)", "PostgreSQL"), "Which database?", null, null,
                List.of(), second);
        local.ledgers().update(ISSUE, "holder", l -> again.forAnother().apply(l));
        local.engine().execute(new ClarifyCommand.Answer("CLR-7-002", null, "PostgreSQL"));
        Outcome late = local.engine().execute(new ClarifyCommand.Ask(ISSUE, "engineer", "architect", "db",
                "Which database?", true, List.of("SQLite (default)", "PostgreSQL"), null), second);
        assertEquals(Status.ANSWERED, late.record().status());
        assertEquals("PostgreSQL", late.record().lastAnswer().orElseThrow().body(), "not answered again by the channel");
        assertEquals(List.of("clarification-requested CLR-7-001", "clarification-answered CLR-7-001",
                "clarification-answered CLR-7-002", "clarification-requested CLR-7-002"), events(dir));
    }

    /**
     * An acceptance carried out for its command by a holder that died before its reply: the
     * command, run again with its key, finds it done (the accepted answer carries the key) and
     * is not refused for the proposal no longer waiting.
     */
    @Test
    void anAcceptanceWrittenByAHolderThatDiedBeforeItsReplyIsFoundDoneByItsCommand() throws Exception {
        LocalMode local = LocalMode.open(dir, Clock.systemUTC());
        Outcome asked = local.engine().execute(ask("Which auth?"));
        String id = asked.record().id();
        Instant at = Instant.parse("2026-11-26T10:00:00Z");
        local.ledgers().update(ISSUE, "holder", ledger -> new LedgerChange.Propose(id, 1, "OAuth", null, "auto", at,
                LedgerChange.LOCAL + "proposal").forAnother().apply(ledger));
        String key = LedgerChange.LOCAL + "dead-holder-accept";
        local.ledgers().update(ISSUE, "holder", ledger -> new LedgerChange.Accept(id, "alice", at.plusSeconds(60), key)
                .forAnother().apply(ledger)); // its write, then death

        Outcome again = local.engine().execute(new ClarifyCommand.Accept(id, "alice"), key);
        assertEquals(Status.ANSWERED, again.record().status());
        ClarificationRecord r = local.ledgers().read(ISSUE).orElseThrow().find(id).orElseThrow();
        assertEquals(1, r.thread().stream().filter(ThreadEntry::isAnswer).count(), "accepted once");
        assertEquals(List.of(EventType.ANSWERED), again.events().stream().map(ClarificationEvent::event).toList(),
                "the acceptance's event, for the command to record");
    }

    /** The event log's lines as "event id". */
    private static List<String> events(Path root) throws java.io.IOException {
        List<String> out = new ArrayList<>();
        for (String line : Files.readAllLines(root.resolve(".agentx/state/events.jsonl"))) {
            com.fasterxml.jackson.databind.JsonNode e = new com.fasterxml.jackson.databind.ObjectMapper().readTree(line);
            out.add(e.get("event").asText() + " " + e.get("clarificationId").asText());
        }
        return out;
    }

    /**
     * A holder that lets go wakes one waiter, the one of this host that has waited longest (it takes
     * the lock and carries out the others' changes too), not every waiter.
     */
    @Test
    void aHolderThatLetsGoRingsTheBellOfTheLongestWaitingSubmitterOfThisHostAlone() {
        Path runtime = dir.resolve(".agentx/state/.runtime");
        Instant t = Instant.now();
        ProcessIdentity here = ProcessIdentity.current();
        ProcessIdentity elsewhere = MultiProcessLedgerTest.otherHost();
        byte[] change = "{}".getBytes(java.nio.charset.StandardCharsets.UTF_8);
        ChangeQueue queue = new ChangeQueue(runtime, here, Clock.fixed(t, ZoneOffset.UTC));
        assertEquals(List.of(), queue.nextBell(ISSUE), "nobody waits");
        ChangeQueue.Request third = new ChangeQueue(runtime, here, Clock.fixed(t.plusMillis(2), ZoneOffset.UTC))
                .enqueue(ISSUE, change, 3002);
        new ChangeQueue(runtime, elsewhere, Clock.fixed(t, ZoneOffset.UTC)).enqueue(ISSUE, change, 3000);
        ChangeQueue.Request second = new ChangeQueue(runtime, here, Clock.fixed(t.plusMillis(1), ZoneOffset.UTC))
                .enqueue(ISSUE, change, 3001);
        new ChangeQueue(runtime, here, Clock.fixed(t.minusMillis(5), ZoneOffset.UTC)).enqueue(ISSUE + 1, change, 2999);

        assertEquals(List.of(3001), queue.nextBell(ISSUE), "the longest waiting of this host; another issue's apart");
        assertTrue(queue.withdraw(second));
        assertEquals(List.of(3002), queue.nextBell(ISSUE));
        assertTrue(queue.withdraw(third));
        assertEquals(List.of(), queue.nextBell(ISSUE), "the other host's submitter looks for itself");
        assertEquals(List.of(2999), queue.nextBell(ISSUE + 1));
    }

    @Test
    void aRequestWhoseProcessIsGoneIsRemovedUnread() throws Exception {
        LocalMode local = LocalMode.open(dir, Clock.systemUTC());
        Outcome asked = local.engine().execute(ask("Which auth?"));
        Process gone = new ProcessBuilder("true").start();
        gone.waitFor();
        ProcessIdentity real = ProcessIdentity.current();
        ProcessIdentity dead = new ProcessIdentity() {
            @Override
            public long pid() {
                return gone.pid();
            }

            @Override
            public String host() {
                return real.host();
            }

            @Override
            public Instant processStart() {
                return gone.info().startInstant().orElse(Instant.parse("2026-11-26T09:00:00Z"));
            }

            @Override
            public boolean isAlive(long pid, Instant start) {
                return real.isAlive(pid, start);
            }
        };
        // made a minute ago by a process that has since exited
        Clock past = Clock.fixed(Instant.now().minus(Duration.ofMinutes(1)), ZoneOffset.UTC);
        ChangeQueue queue = new ChangeQueue(dir.resolve(".agentx/state/.runtime"), dead, past);
        LedgerChangeCodec codec = new LedgerChangeCodec((issue, outcomes) -> { });
        ChangeQueue.Request request = queue.enqueue(ISSUE, codec.writeChange(new LedgerChange.Answer(
                asked.record().id(), null, "never", null, Instant.now(), LedgerChange.LOCAL + "dead")), 0);

        local.engine().execute(ask("Which database?"));

        assertEquals(Status.PENDING, local.ledgers().read(ISSUE).orElseThrow().find(asked.record().id()).orElseThrow()
                .status());
        File[] left = queue.directory().toFile().listFiles((d, name) -> name.startsWith(request.name()));
        assertEquals(0, left == null ? 0 : left.length);
    }

    @Test
    void aChangeThatWaitedOutAHolderOfOursSaysWhoHoldsTheLockAndIsNotCarriedOutLater() throws Exception {
        LocalMode local = LocalMode.open(dir, Clock.systemUTC());
        Outcome asked = local.engine().execute(ask("Which auth?"));
        LockManager locks = new LockManager(Clock.systemUTC(), new LockSettings(Duration.ofSeconds(30),
                Duration.ofMillis(10), Duration.ofSeconds(1)), Sleeper.real(), ProcessIdentity.current(), LockObserver.NONE);
        FileLedgerStore store = new FileLedgerStore(dir.resolve(".agentx/state"), locks);
        CountDownLatch release = new CountDownLatch(1);
        Thread holder = holding(store, "architect", release);
        try {
            LedgerChange.Answer answer = new LedgerChange.Answer(asked.record().id(), null, "OAuth", null,
                    Instant.now(), LedgerChange.LOCAL + "waiter");
            ClarifyException e = assertThrows(ClarifyException.class,
                    () -> store.submit(ISSUE, "engineer", answer, new LedgerChangeCodec((issue, outcomes) -> { })));
            assertEquals(ErrorCode.LOCK_TIMEOUT, e.code());
            assertTrue(e.getMessage().contains("held by the same holder for 1s. It is held by 'architect' (pid "
                    + ProcessHandle.current().pid()), e.getMessage());
        } finally {
            release.countDown();
            holder.join(10_000);
        }
        local.engine().execute(ask("Which database?")); // a later turn finds no change left to carry out
        assertEquals(Status.PENDING, store.read(ISSUE).orElseThrow().find(asked.record().id()).orElseThrow().status());
        assertEquals(0, waiting(queueDir(local)));
    }
}
