package dev.agentx.clarify.github.inbox;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.agentx.clarify.github.outbox.Outbox;
import dev.agentx.clarify.metrics.ServerMetrics;
import dev.agentx.clarify.store.DeliveryQueue;
import dev.agentx.clarify.store.postgres.PgDeliveryQueue;
import dev.agentx.clarify.store.postgres.PostgresDatabase;
import dev.agentx.clarify.support.MutableClock;
import dev.agentx.clarify.support.TestPostgres;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The worker over the deliveries table that replicas share: an issue's line across replicas, and take-overs. */
class SharedQueueWorkerTest {
    @TempDir
    Path dir;

    private final MutableClock clock = MutableClock.at("2026-11-25T10:00:00Z");
    private final List<String> handled = new ArrayList<>();
    private TestPostgres.Database database;
    private PostgresDatabase db;

    @BeforeEach
    void open() {
        database = TestPostgres.newDatabase();
        db = database.open(6);
        db.beat("replica-a"); // both replicas running
        db.beat("replica-b");
    }

    @AfterEach
    void close() {
        db.close();
    }

    private Worker worker(String name, DeliveryQueue queue) {
        return new Worker(queue, TestProcessors.of((d, payload, progress, save) -> handled.add(name + ":" + d.id())),
                new Outbox(dir.resolve(name + "/outbox"), null, clock, ServerMetrics.create(),
                        db.replicas("replica-" + name, clock)), clock, true, ServerMetrics.create(),
                db.replicas("replica-" + name, clock));
    }

    private static byte[] body(int issue) {
        return ("{\"action\":\"created\",\"repository\":{\"full_name\":\"acme/shop\"},\"issue\":{\"number\":" + issue
                + "}}").getBytes(StandardCharsets.UTF_8);
    }

    @Test
    void whileRequestsQueueUpALaneWaitingForItsCommitLetsTheNextDeliveryStart() throws Exception {
        PgDeliveryQueue a = db.deliveries("replica-a", clock);
        java.util.concurrent.CountDownLatch secondHandled = new java.util.concurrent.CountDownLatch(1);
        java.util.concurrent.atomic.AtomicBoolean overlapped = new java.util.concurrent.atomic.AtomicBoolean();
        java.util.concurrent.CountDownLatch firstCommitted = new java.util.concurrent.CountDownLatch(1);
        DeliveryProcessor processor = TestProcessors.of((d, payload, progress, save) -> {
            synchronized (handled) {
                handled.add(d.id());
            }
            if (d.id().equals("d-1")) {
                // its commit waits (as for a slow flush of the WAL) until the next delivery was handled
                db.join(new dev.agentx.clarify.store.UnitOfWork.Participant() {
                    @Override
                    public void committing() {
                        try {
                            overlapped.set(secondHandled.await(10, java.util.concurrent.TimeUnit.SECONDS));
                        } catch (InterruptedException e) {
                            Thread.currentThread().interrupt();
                        }
                    }

                    @Override
                    public void committed() {
                        firstCommitted.countDown();
                    }
                });
            } else {
                secondHandled.countDown();
            }
        });
        Outbox outbox = new Outbox(dir.resolve("a/outbox"), null, clock, ServerMetrics.create(),
                db.replicas("replica-a", clock));
        try (Worker w = new Worker(a, processor, outbox, clock, false, ServerMetrics.create(),
                db.replicas("replica-a", clock), db)) {
            w.priority().requestStarted(); // two webhook requests in flight: lanes start one at a time
            w.priority().requestStarted();
            w.start();
            a.accept("d-1", "issue_comment", body(1), "acme/shop#1");
            a.accept("d-2", "issue_comment", body(2), "acme/shop#2");
            assertTrue(firstCommitted.await(30, java.util.concurrent.TimeUnit.SECONDS));
            assertTrue(overlapped.get(), "the second delivery started while the first waited for its commit");
            w.priority().requestEnded();
            w.priority().requestEnded();
        }
    }

    /**
     * A worker whose one lane is held by d-0 (two webhook requests in flight: lanes start one at a
     * time, with one delivery each) until {@code release}, with d-1 to d-4, of four other issues,
     * acknowledged meanwhile; the test ends the two requests ({@link #burstOver}).
     * Each delivery's changes are a row of {@code applied} and the id of its transaction; those in
     * {@code failing} then fail; {@code committed} counts the deliveries whose unit committed.
     */
    private Worker backlogged(PgDeliveryQueue a, java.util.concurrent.CountDownLatch release,
                              java.util.Map<String, Long> transactions, java.util.Set<String> failing,
                              java.util.concurrent.CountDownLatch committed) throws Exception {
        return backlogged(a, release, transactions, failing, committed, d -> { });
    }

    /** As above; {@code first} runs first in each delivery's changes. */
    private Worker backlogged(PgDeliveryQueue a, java.util.concurrent.CountDownLatch release,
                              java.util.Map<String, Long> transactions, java.util.Set<String> failing,
                              java.util.concurrent.CountDownLatch committed,
                              java.util.function.Consumer<dev.agentx.clarify.store.InboundDelivery> first)
            throws Exception {
        db.autoCommit(c -> c.createStatement().executeUpdate("CREATE TABLE IF NOT EXISTS applied (id text)"));
        DeliveryProcessor processor = TestProcessors.of((d, payload, progress, save) -> {
            first.accept(d);
            if (d.id().equals("d-0")) {
                try {
                    assertTrue(release.await(30, java.util.concurrent.TimeUnit.SECONDS));
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
            long tx = db.autoCommit(c -> {
                try (var s = c.prepareStatement("INSERT INTO applied (id) VALUES (?)")) {
                    s.setString(1, d.id());
                    s.executeUpdate();
                }
                try (var r = c.createStatement().executeQuery("SELECT txid_current()")) {
                    r.next();
                    return r.getLong(1);
                }
            });
            transactions.put(d.id(), tx);
            if (failing.contains(d.id())) {
                throw new IllegalStateException(d.id() + " fails");
            }
            db.join(new dev.agentx.clarify.store.UnitOfWork.Participant() {
                @Override
                public void committed() {
                    committed.countDown();
                }
            });
        });
        Outbox outbox = new Outbox(dir.resolve("a/outbox"), null, clock, ServerMetrics.create(),
                db.replicas("replica-a", clock));
        Worker w = new Worker(a, processor, outbox, clock, false, ServerMetrics.create(),
                db.replicas("replica-a", clock), db);
        w.priority().requestStarted();
        w.priority().requestStarted();
        w.start();
        a.accept("d-0", "issue_comment", body(10), "acme/shop#10");
        for (int i = 1; i <= 4; i++) {
            a.accept("d-" + i, "issue_comment", body(i), "acme/shop#" + i);
        }
        return w;
    }

    /** The two webhook requests end: every lane may work, and a lane takes the lines that waited together. */
    private static void burstOver(Worker w) {
        w.priority().requestEnded();
        w.priority().requestEnded();
    }

    private List<String> applied() {
        return db.autoCommit(c -> {
            List<String> ids = new ArrayList<>();
            try (var r = c.createStatement().executeQuery("SELECT id FROM applied ORDER BY id")) {
                while (r.next()) {
                    ids.add(r.getString(1));
                }
            }
            return ids;
        });
    }

    @Test
    void deliveriesOfOtherIssuesThatWaitedForALaneAreCommittedInOneTransaction() throws Exception {
        PgDeliveryQueue a = db.deliveries("replica-a", clock);
        var release = new java.util.concurrent.CountDownLatch(1);
        var committed = new java.util.concurrent.CountDownLatch(5);
        java.util.Map<String, Long> tx = new java.util.concurrent.ConcurrentHashMap<>();
        try (Worker w = backlogged(a, release, tx, java.util.Set.of(), committed)) {
            burstOver(w);
            release.countDown();
            assertTrue(committed.await(30, java.util.concurrent.TimeUnit.SECONDS));
            assertEquals(List.of("d-0", "d-1", "d-2", "d-3", "d-4"), applied());
            assertEquals(1, java.util.stream.IntStream.rangeClosed(1, 4).mapToObj(i -> tx.get("d-" + i))
                    .distinct().count(), "d-1 to d-4 in one transaction: " + tx);
            assertTrue(!tx.get("d-0").equals(tx.get("d-1")), "d-0 was taken on its own while requests queued up");
            assertEquals(0, a.size(), "every delivery is done with");
        }
    }

    @Test
    void whileRequestsQueueUpALaneTakesOneDeliveryAtATimeLeavingTheCoresToTheAcknowledgements() throws Exception {
        PgDeliveryQueue a = db.deliveries("replica-a", clock);
        var release = new java.util.concurrent.CountDownLatch(1);
        var committed = new java.util.concurrent.CountDownLatch(5);
        java.util.Map<String, Long> tx = new java.util.concurrent.ConcurrentHashMap<>();
        try (Worker w = backlogged(a, release, tx, java.util.Set.of(), committed)) {
            release.countDown(); // the burst goes on
            assertTrue(committed.await(30, java.util.concurrent.TimeUnit.SECONDS));
            assertEquals(5, tx.values().stream().distinct().count(), "each in a transaction of its own: " + tx);
            burstOver(w);
        }
    }

    @Test
    void whenOneDeliveryOfABatchFailsTheOthersAreCommittedEachOnItsOwnAndItWaitsForItsRetry() throws Exception {
        PgDeliveryQueue a = db.deliveries("replica-a", clock);
        var release = new java.util.concurrent.CountDownLatch(1);
        var committed = new java.util.concurrent.CountDownLatch(4);
        java.util.Map<String, Long> tx = new java.util.concurrent.ConcurrentHashMap<>();
        try (Worker w = backlogged(a, release, tx, java.util.Set.of("d-2"), committed)) {
            burstOver(w);
            release.countDown();
            assertTrue(committed.await(30, java.util.concurrent.TimeUnit.SECONDS));
            // the batch's transaction was rolled back: d-1, d-3 and d-4 count once, d-2 not at all
            assertEquals(List.of("d-0", "d-1", "d-3", "d-4"), applied());
            assertEquals(3, java.util.stream.Stream.of("d-1", "d-3", "d-4").map(tx::get).distinct().count(),
                    "each in a transaction of its own: " + tx);
        }
        assertEquals(1, a.size(), "d-2 waits for its retry");
        int attempts = db.autoCommit(c -> {
            try (var r = c.createStatement().executeQuery("SELECT attempts FROM deliveries WHERE id = 'd-2'")) {
                r.next();
                return r.getInt(1);
            }
        });
        assertEquals(1, attempts, "its failure in the batch is not counted: only its own attempt");
    }

    @Test
    void aLockHeldElsewhereOnOneIssueHoldsUpNoOtherDeliveryOfItsBatch() throws Exception {
        PgDeliveryQueue a = db.deliveries("replica-a", clock);
        var release = new java.util.concurrent.CountDownLatch(1);
        var batchStarted = new java.util.concurrent.CountDownLatch(1);
        var othersCommitted = new java.util.concurrent.CountDownLatch(4); // d-0, d-1, d-3, d-4
        java.util.Map<String, Long> tx = new java.util.concurrent.ConcurrentHashMap<>();
        try (java.sql.Connection holder = database.dataSource().getConnection();
             var hold = holder.createStatement()) {
            // issue #2's lock, held by another session (an agent's CLI, a monitor pass elsewhere)
            hold.execute("SELECT pg_advisory_lock(hashtext('acme/shop'), 2)");
            java.util.function.Consumer<dev.agentx.clarify.store.InboundDelivery> lockIssue = d -> {
                if (d.id().equals("d-1")) {
                    batchStarted.countDown();
                }
                int issue = Integer.parseInt(d.id().substring(2));
                db.autoCommit(c -> {
                    try (var s = c.prepareStatement("SELECT pg_advisory_xact_lock(hashtext('acme/shop'), ?)")) {
                        s.setInt(1, issue);
                        s.execute();
                    }
                    return null;
                });
            };
            try (Worker w = backlogged(a, release, tx, java.util.Set.of(), othersCommitted, lockIssue)) {
                burstOver(w);
                release.countDown();
                assertTrue(batchStarted.await(30, java.util.concurrent.TimeUnit.SECONDS));
                // the batch gives up on #2's lock after a second; the others then commit each on its
                // own while #2 still waits for its lock (up to 15 s): nothing waits behind it
                assertTrue(othersCommitted.await(10, java.util.concurrent.TimeUnit.SECONDS), "committed: " + tx);
                assertEquals(List.of("d-0", "d-1", "d-3", "d-4"), applied());
                hold.execute("SELECT pg_advisory_unlock(hashtext('acme/shop'), 2)");
                for (int i = 0; i < 300 && a.size() > 0; i++) {
                    Thread.sleep(50); // d-2 gets its lock now and commits
                }
                assertEquals(List.of("d-0", "d-1", "d-2", "d-3", "d-4"), applied());
                assertEquals(0, a.size());
            }
        }
    }

    @Test
    void aLineWaitsForTheEarlierDeliveryOfItsIssueThatAnotherReplicaHolds() {
        PgDeliveryQueue a = db.deliveries("replica-a", clock);
        PgDeliveryQueue b = db.deliveries("replica-b", clock);
        List<DeliveryQueue.Queued> onA = new ArrayList<>();
        a.onQueued(onA::add); // a's worker is busy elsewhere: d-1 waits on a
        a.accept("d-1", "issue_comment", body(1), "acme/shop#1");
        try (Worker wb = worker("b", b)) {
            b.accept("d-2", "issue_comment", body(1), "acme/shop#1");
            b.accept("d-3", "issue_comment", body(2), "acme/shop#2");
            wb.drain();
            assertEquals(List.of("b:d-3"), handled, "d-2 waits for d-1 of the same issue; #2 goes on");
            assertEquals(1, b.size(), "b holds d-2; d-3 is done");
            assertInstanceOf(DeliveryQueue.Turn.Mine.class, a.take(onA.get(0), clock.instant()));
            a.done(onA.get(0));
            clock.advance(Duration.ofSeconds(1)); // past the short wait
            wb.drain();
            assertEquals(List.of("b:d-3", "b:d-2"), handled);
        }
    }

    /**
     * Two deliveries of one issue acknowledged at the same moment: their request threads hand them
     * to the worker in either order. Handed over the later first, the line waits for the earlier (the
     * queue takes the later only after it), and takes the earlier as soon as it is handed over.
     */
    @Test
    void deliveriesOfAnIssueHandedOverOutOfOrderAreTakenInTheQueuesOrder() {
        PgDeliveryQueue a = db.deliveries("replica-a", clock);
        List<DeliveryQueue.Queued> queued = new ArrayList<>();
        HandOver handOver = new HandOver(a, queued);
        try (Worker wa = worker("a", handOver)) {
            a.accept("d-1", "issue_comment", body(1), "acme/shop#1");
            a.accept("d-2", "issue_comment", body(1), "acme/shop#1");
            handOver.listener.accept(queued.get(1)); // d-2's thread first
            wa.drain();
            assertEquals(List.of(), handled, "d-2 waits for d-1, queued before it");
            handOver.listener.accept(queued.get(0));
            wa.drain(); // no time passes: the line goes on as soon as d-1 is there
            assertEquals(List.of("a:d-1", "a:d-2"), handled);
            assertEquals(0, a.size());
        }
    }

    @Test
    void aWorkerTakesUpWhatAReplicaThatIsGoneLeftInTheOrderReceived() {
        PgDeliveryQueue a = db.deliveries("replica-a", clock);
        a.accept("d-1", "issue_comment", body(1), "acme/shop#1");
        a.accept("d-2", "issue_comment", body(1), "acme/shop#1");
        try (Worker wb = worker("b", db.deliveries("replica-b", clock))) {
            wb.drain();
            assertEquals(List.of(), handled, "a is alive");
            db.leave("replica-a");
            wb.drain();
            assertEquals(List.of("b:d-1", "b:d-2"), handled);
            wb.drain();
            assertEquals(List.of("b:d-1", "b:d-2"), handled, "once");
        }
    }
}
