package dev.agentx.clarify.store;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.agentx.clarify.protocol.ClarifyException;
import dev.agentx.clarify.protocol.ErrorCode;
import dev.agentx.clarify.store.DeliveryQueue.Accepted;
import dev.agentx.clarify.store.DeliveryQueue.Progress;
import dev.agentx.clarify.store.DeliveryQueue.Queued;
import dev.agentx.clarify.store.DeliveryQueue.Turn;
import dev.agentx.clarify.store.postgres.PgDeliveryQueue;
import dev.agentx.clarify.store.postgres.PostgresDatabase;
import dev.agentx.clarify.support.MutableClock;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** The deliveries table as two replicas on one database see it. */
@Tag("postgres")
class PgDeliveryQueueTest {
    private final MutableClock clock = MutableClock.at("2026-05-04T10:00:00Z");
    private dev.agentx.clarify.support.TestPostgres.Database database;
    private PostgresDatabase db;
    private PgDeliveryQueue a;
    private PgDeliveryQueue b;
    private final List<Queued> queuedOnA = new ArrayList<>();

    @BeforeEach
    void open() {
        database = dev.agentx.clarify.support.TestPostgres.newDatabase();
        db = database.open(6);
        a = db.deliveries("replica-a", clock);
        b = db.deliveries("replica-b", clock);
        a.onQueued(queuedOnA::add);
        assertTrue(db.beat("replica-a"));
        assertTrue(db.beat("replica-b"));
    }

    @AfterEach
    void close() {
        db.close();
    }

    private static byte[] body(String s) {
        return ("{\"n\":\"" + s + "\"}").getBytes(StandardCharsets.UTF_8);
    }

    @Test
    void aDeliveryAcknowledgedByOneReplicaIsADuplicateOnEveryOther() {
        assertEquals(Accepted.QUEUED, a.accept("d-1", "issue_comment", body("1"), "acme/shop#1"));
        assertEquals(Accepted.DUPLICATE, b.accept("d-1", "issue_comment", body("1"), "acme/shop#1"));
        assertEquals(Accepted.DUPLICATE, a.accept("d-1", "issue_comment", body("1"), "acme/shop#1"));
        assertTrue(b.received("d-1"));
        assertFalse(b.received("d-2"));
        assertEquals(1, queuedOnA.size(), "its own worker is told once");
        assertEquals(1, a.size(), "a holds it");
        assertEquals(0, b.size());
    }

    @Test
    void replicasAcceptingOneDeliveryAtOnceQueueItOnce() throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(4);
        try {
            for (int round = 0; round < 20; round++) {
                String id = "d-" + round;
                List<Future<Accepted>> tries = new ArrayList<>();
                for (int i = 0; i < 4; i++) {
                    PgDeliveryQueue q = db.deliveries("replica-" + i, clock);
                    tries.add(pool.submit(() -> q.accept(id, "issues", body(id), "")));
                }
                int queued = 0;
                for (Future<Accepted> f : tries) {
                    queued += f.get() == Accepted.QUEUED ? 1 : 0;
                }
                assertEquals(1, queued, id);
            }
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void deliveriesArrivingTogetherAreInsertedTogetherEachQueuedOnceInTheOrderTheyWent() throws Exception {
        // 8 threads, 300 deliveries, each id sent twice (a redelivery racing its first copy)
        java.util.Map<String, Long> seqs = new java.util.concurrent.ConcurrentHashMap<>();
        a.onQueued(q -> assertNull(seqs.put(q.id(), q.seq()), "told once: " + q.id()));
        ExecutorService pool = Executors.newFixedThreadPool(8);
        java.util.concurrent.atomic.AtomicInteger queued = new java.util.concurrent.atomic.AtomicInteger();
        try {
            List<Future<?>> all = new ArrayList<>();
            for (int t = 0; t < 8; t++) {
                int thread = t;
                all.add(pool.submit(() -> {
                    for (int i = 0; i < 300; i++) {
                        String id = "d-" + ((i * 8 + thread) / 2); // threads 2k and 2k+1 send the same ids
                        if (a.accept(id, "issues", body(id), "") == Accepted.QUEUED) {
                            queued.incrementAndGet();
                        }
                    }
                    return null;
                }));
            }
            for (Future<?> f : all) {
                f.get();
            }
        } finally {
            pool.shutdownNow();
        }
        assertEquals(1200, queued.get(), "each of the 1200 ids queued once");
        assertEquals(1200, seqs.size());
        assertEquals(1200, a.size());
        for (String id : seqs.keySet()) {
            assertTrue(b.received(id));
        }
    }

    @Test
    void theReplicaThatAcknowledgedADeliveryProcessesItAndAnotherLiveOneLeavesIt() {
        a.accept("d-1", "issue_comment", body("1"), "acme/shop#1");
        Queued q = queuedOnA.get(0);
        assertInstanceOf(Turn.Gone.class, b.take(q, clock.instant()), "a is alive: it is a's");
        Turn.Mine mine = assertInstanceOf(Turn.Mine.class, a.take(q, clock.instant()));
        assertEquals("d-1", mine.delivery().id());
        assertEquals("issue_comment", mine.delivery().event());
        assertArrayEquals(body("1"), mine.delivery().body());
        assertEquals(Progress.NONE, mine.progress());
        a.done(q);
        assertInstanceOf(Turn.Gone.class, a.take(q, clock.instant()), "done: nothing to take");
        assertEquals(0, a.size());
        assertTrue(a.received("d-1"), "its id is kept: a redelivery is a duplicate");
        assertTrue(a.syncDone().test(q.seq()));
        assertEquals(Arrays.asList((Object) null), column("body", "d-1"), "its body is not");
    }

    private List<Object> column(String name, String id) {
        return db.autoCommit(c -> {
            try (var s = c.prepareStatement("SELECT " + name + " FROM deliveries WHERE id = ?")) {
                s.setString(1, id);
                try (var r = s.executeQuery()) {
                    List<Object> out = new ArrayList<>();
                    while (r.next()) {
                        out.add(r.getObject(1));
                    }
                    return out;
                }
            }
        });
    }

    @Test
    void tidyingTheQueueFreesTheRoomOfDeliveriesDoneWithForTheNextOnes() {
        for (int i = 1; i <= 300; i++) {
            a.accept("d-" + i, "issue_comment", body("x".repeat(4000) + i), "acme/shop#" + i);
        }
        for (Queued q : queuedOnA) {
            assertInstanceOf(Turn.Mine.class, a.take(q, clock.instant()));
            a.done(q);
        }
        long rows = queueBytes("'delivery_queue'");
        long bodies = queueBytes(TOAST);
        assertTrue(rows > 0 && bodies > 0, "the deleted rows and their bodies still take room");
        a.tidy();
        b.tidy(); // another replica: a's turn, so it skips; no error
        for (int i = 301; i <= 600; i++) {
            a.accept("d-" + i, "issue_comment", body("x".repeat(4000) + i), "acme/shop#" + i);
        }
        // kept through the vacuum (no lock that inserts wait for) and filled again
        assertTrue(queueBytes("'delivery_queue'") <= rows, "the next rows went where the vacuum made room");
        assertTrue(queueBytes(TOAST) <= bodies, "and their bodies too");
        Turn.Mine next = assertInstanceOf(Turn.Mine.class, a.take(queuedOnA.get(300), clock.instant()));
        assertArrayEquals(body("x".repeat(4000) + 301), next.delivery().body());
    }

    private static final String TOAST = "(SELECT reltoastrelid FROM pg_class WHERE relname = 'delivery_queue')";

    /** The main data of a table (its name, or an expression giving its oid), in bytes. */
    private long queueBytes(String table) {
        return db.autoCommit(c -> {
            try (var s = c.prepareStatement("SELECT pg_relation_size(" + table + "::regclass)");
                 var r = s.executeQuery()) {
                r.next();
                return r.getLong(1);
            }
        });
    }

    @Test
    void aQueuedDeliveryAlwaysHasItsBody() {
        a.accept("d-1", "issue_comment", body("1"), "acme/shop#1");
        SQLException refused = assertThrows(SQLException.class, () -> {
            try (Connection c = database.dataSource().getConnection(); Statement s = c.createStatement()) {
                s.executeUpdate("UPDATE delivery_queue SET body = NULL");
            }
        });
        assertTrue(refused.getMessage().contains("\"body\" of relation \"delivery_queue\" violates not-null"),
                refused.getMessage());
        a.fail(queuedOnA.get(0), "gave up");
        assertArrayEquals(body("1"), (byte[]) column("body", "d-1").get(0), "a failed one keeps it, to look into");
        assertEquals(List.of("gave up"), column("failure", "d-1"), "and why it failed");
    }

    @Test
    void anIssuesDeliveriesAreTakenInTheOrderReceivedWhicheverReplicaHoldsThem() {
        List<Queued> onB = new ArrayList<>();
        b.onQueued(onB::add);
        a.accept("d-1", "issue_comment", body("1"), "acme/shop#1");
        b.accept("d-2", "issue_comment", body("2"), "acme/shop#1");
        b.accept("d-3", "issue_comment", body("3"), "acme/shop#2");
        Turn.Wait wait = assertInstanceOf(Turn.Wait.class, b.take(onB.get(0), clock.instant()),
                "d-1 of the same issue is still queued on a");
        assertEquals("replica-a", wait.holder());
        assertInstanceOf(Turn.Mine.class, b.take(onB.get(1), clock.instant()), "another issue does not wait");
        assertInstanceOf(Turn.Mine.class, a.take(queuedOnA.get(0), clock.instant()));
        a.done(queuedOnA.get(0));
        assertInstanceOf(Turn.Mine.class, b.take(onB.get(0), clock.instant()), "its turn now");
    }

    @Test
    void aDeliveryAcknowledgedHereIsTakenWithoutAskingAndItsDoneMarkChecksTheTurn() {
        List<Queued> onB = new ArrayList<>();
        b.onQueued(onB::add);
        a.accept("d-1", "issue_comment", body("1"), "acme/shop#1");
        b.accept("d-2", "issue_comment", body("2"), "acme/shop#1");
        b.accept("d-3", "issue_comment", body("3"), "acme/shop#2");
        Turn.Mine early = assertInstanceOf(Turn.Mine.class, b.takeProvisionally(onB.get(0), clock.instant()));
        assertTrue(early.provisional(), "taken from memory: d-1 of its issue, on a, is not seen");
        assertArrayEquals(body("2"), early.delivery().body());
        ClarifyException refused = assertThrows(ClarifyException.class, () -> db.run(() -> {
            b.done(onB.get(0));
            return null;
        }));
        assertEquals(ErrorCode.LOCK_LOST, refused.code(), "its turn had not come: rolled back, to take again");
        assertEquals(2, b.size(), "d-2 and d-3 are still b's");
        assertInstanceOf(Turn.Wait.class, b.takeProvisionally(onB.get(0), clock.instant()),
                "taken again, the queue is asked");

        Turn.Mine other = assertInstanceOf(Turn.Mine.class, b.takeProvisionally(onB.get(1), clock.instant()));
        assertTrue(other.provisional());
        db.run(() -> {
            b.done(onB.get(1)); // first in its line: marked
            return null;
        });
        assertInstanceOf(Turn.Mine.class, a.takeProvisionally(queuedOnA.get(0), clock.instant()));
        a.done(queuedOnA.get(0));
        Turn.Mine turn = assertInstanceOf(Turn.Mine.class, b.takeProvisionally(onB.get(0), clock.instant()));
        assertFalse(turn.provisional(), "asked");
        db.run(() -> {
            b.done(onB.get(0));
            return null;
        });
        assertEquals(0, b.size());
    }

    @Test
    void whatAReplicaThatIsGoneHeldIsTakenOverByAnotherAndItsOldHolderLeavesIt() {
        a.accept("d-1", "issue_comment", body("1"), "acme/shop#1");
        a.accept("d-2", "ping", body("2"), "");
        assertEquals(List.of(), b.adoptable(clock.instant()), "a beats: nothing to take over");
        db.leave("replica-a"); // stopped (or its heartbeat is older than GONE_AFTER)
        List<Queued> left = b.adoptable(clock.instant());
        assertEquals(List.of("d-1", "d-2"), left.stream().map(Queued::id).toList());
        assertInstanceOf(Turn.Mine.class, b.take(left.get(0), clock.instant()));
        assertTrue(db.beat("replica-a")); // a is back, after b took d-1 over
        assertInstanceOf(Turn.Gone.class, a.take(queuedOnA.get(0), clock.instant()), "b holds it now");
        assertInstanceOf(Turn.Mine.class, a.take(queuedOnA.get(1), clock.instant()), "d-2 is still a's");
        a.done(queuedOnA.get(0)); // a done mark from the old holder changes nothing
        assertInstanceOf(Turn.Mine.class, b.take(left.get(0), clock.instant()), "still queued, b's");
        b.done(left.get(0));
        assertInstanceOf(Turn.Gone.class, b.take(left.get(1), clock.instant()), "a took d-2 back");
        assertEquals(0, b.size());
        assertEquals(1, a.size(), "d-2");
    }

    @Test
    void theReplicaThatAcknowledgedADeliveryTakesItsBodyFromMemoryAnotherReadsTheRow() throws Exception {
        a.accept("d-1", "issue_comment", body("1"), "acme/shop#1");
        a.accept("d-2", "issue_comment", body("2"), "acme/shop#2");
        try (java.sql.Connection c = database.dataSource().getConnection(); java.sql.Statement s = c.createStatement()) {
            // the row says something else: only a take that reads it sees that
            s.executeUpdate("UPDATE delivery_queue SET body = convert_to('{\"n\":\"row\"}', 'UTF8')");
        }
        Turn.Mine first = assertInstanceOf(Turn.Mine.class, a.take(queuedOnA.get(0), clock.instant()));
        assertArrayEquals(body("1"), first.delivery().body(), "taken from memory, without reading the body");
        db.leave("replica-a");
        Queued second = b.adoptable(clock.instant()).get(1);
        Turn.Mine taken = assertInstanceOf(Turn.Mine.class, b.take(second, clock.instant()));
        assertArrayEquals(body("row"), taken.delivery().body(), "another replica reads the row");
    }

    @Test
    void aDeliveryThisReplicaHoldsButItsWorkerWasNeverHandedIsHandedAtTheNextTick() {
        // as when an insert committed but its connection broke before the answer: the retry found a duplicate
        db.deliveries("replica-a", clock).accept("d-9", "issues", body("9"), "acme/shop#9");
        assertEquals(List.of(), queuedOnA);
        List<Queued> found = a.adoptable(clock.instant());
        assertEquals(List.of("d-9"), found.stream().map(Queued::id).toList());
        assertInstanceOf(Turn.Mine.class, a.take(found.get(0), clock.instant()));
        assertEquals(List.of(), a.adoptable(clock.instant()), "being worked on here: not handed again");
        assertEquals(1, a.size());
        a.done(found.get(0));
        assertEquals(List.of(), a.adoptable(clock.instant()));
        assertEquals(0, a.size(), "nothing left open");
    }

    @Test
    void aRestartedReplicaFindsWhatItHeldWithItsFailedAttempts() {
        a.accept("d-1", "issue_comment", body("1"), "acme/shop#1");
        b.accept("d-2", "issue_comment", body("2"), "acme/shop#2");
        Queued q = queuedOnA.get(0);
        a.saveProgress(q, new Progress(0, false, 2, clock.instant().plusSeconds(20)));
        PgDeliveryQueue again = db.deliveries("replica-a", clock);
        assertEquals(List.of(q), again.queued());
        assertFalse(again.syncDone().test(q.seq()), "open: its progress note stays");
        Turn.Mine mine = assertInstanceOf(Turn.Mine.class, again.take(q, clock.instant()));
        assertEquals(new Progress(0, false, 2, clock.instant().plusSeconds(20)), mine.progress());
    }

    @Test
    void aFailedDeliveryLeavesTheQueueAndItsRowGoesAfterEightDays() {
        a.accept("d-1", "issue_comment", body("1"), "acme/shop#1");
        a.accept("d-2", "issue_comment", body("2"), "acme/shop#1");
        a.fail(queuedOnA.get(0), "failed 8 times");
        assertInstanceOf(Turn.Mine.class, a.take(queuedOnA.get(1), clock.instant()), "the line goes on");
        a.done(queuedOnA.get(1));
        clock.advance(Duration.ofDays(7));
        a.prune();
        assertTrue(b.received("d-1"));
        clock.advance(Duration.ofDays(2));
        a.prune();
        assertFalse(b.received("d-1"));
        assertFalse(b.received("d-2"));
    }
    /**
     * A database that stops answering: the insert under way waits out its 8 s and fails, and the
     * deliveries that arrived meanwhile and waited behind it fail with it, rather than each trying
     * again for as long (answered past the 10 s GitHub waits). Here a session holding the table's
     * lock stands for the database that does not answer.
     */
    @Test
    void deliveriesWaitingBehindAnInsertTheDatabaseNeverAnsweredFailWithIt() throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(3);
        try (Connection blocker = database.dataSource().getConnection()) {
            blocker.setAutoCommit(false);
            try (var s = blocker.createStatement()) {
                s.execute("LOCK TABLE deliveries IN ACCESS EXCLUSIVE MODE");
            }
            Future<Accepted> first = pool.submit(() -> a.accept("d-1", "issues", body("1"), ""));
            awaitWaitingInserts(1);
            List<Future<Accepted>> behind = List.of(pool.submit(() -> a.accept("d-2", "issues", body("2"), "")),
                    pool.submit(() -> a.accept("d-3", "issues", body("3"), "")));
            Throwable failure = assertThrows(ExecutionException.class, () -> first.get(60, TimeUnit.SECONDS)).getCause();
            for (Future<Accepted> f : behind) {
                assertSame(failure, assertThrows(ExecutionException.class, () -> f.get(60, TimeUnit.SECONDS)).getCause(),
                        "failed with the insert it waited for, not tried again");
            }
            blocker.rollback();
        } finally {
            pool.shutdownNow();
        }
        assertEquals(Accepted.QUEUED, a.accept("d-2", "issues", body("2"), ""), "the database answers again");
    }

    /** Waits until {@code n} inserts into deliveries wait for a lock. */
    private void awaitWaitingInserts(int n) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (System.nanoTime() < deadline) {
            long waiting = db.autoCommit(c -> {
                try (var s = c.prepareStatement("SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' "
                        + "AND query LIKE '%INSERT INTO deliveries%'"); var r = s.executeQuery()) {
                    r.next();
                    return r.getLong(1);
                }
            });
            if (waiting >= n) {
                return;
            }
            Thread.sleep(20);
        }
        throw new AssertionError("no insert waits for the lock");
    }
}
