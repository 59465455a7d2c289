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
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The worker over the deliveries table that replicas share: an issue's line across replicas, and take-overs. */
@Tag("postgres")
class SharedQueueWorkerTest {
    @TempDir
    Path dir;

    private final MutableClock clock = MutableClock.at("2026-11-25T10:00:00Z");
    private final List<String> handled = new ArrayList<>();
    private PostgresDatabase db;

    @BeforeEach
    void open() {
        db = TestPostgres.newDatabase().open(6);
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
     * While webhook requests queue up one lane at a time applies a delivery's changes; a delivery
     * waiting for GitHub before (a permission looked up) or for an agent after (its answer channel)
     * holds no place, so the next delivery is applied meanwhile.
     */
    @Test
    void whileRequestsQueueUpADeliveryWaitingForGitHubOrAnAgentHoldsUpNoOther() throws Exception {
        java.util.concurrent.CountDownLatch lookingUp = new java.util.concurrent.CountDownLatch(1);
        java.util.concurrent.CountDownLatch routing = new java.util.concurrent.CountDownLatch(1);
        java.util.concurrent.CountDownLatch answer = new java.util.concurrent.CountDownLatch(1);
        java.util.concurrent.CountDownLatch otherApplied = new java.util.concurrent.CountDownLatch(1);
        java.util.concurrent.CountDownLatch bothDone = new java.util.concurrent.CountDownLatch(2);
        DeliveryProcessor processor = (d, payload) -> {
            if (d.id().equals("looks-up")) {
                lookingUp.countDown();
                await(answer); // a permission looked up on GitHub, answered late
            }
            return (progress, save) -> {
                if (d.id().equals("other")) {
                    otherApplied.countDown();
                    return DeliveryProcessor.NOTHING_AFTER;
                }
                return () -> {
                    if (d.id().equals("routes")) {
                        routing.countDown();
                        await(answer); // its question put to an agent that takes its time
                    }
                    bothDone.countDown();
                };
            };
        };
        PgDeliveryQueue a = db.deliveries("replica-a", clock);
        Outbox outbox = new Outbox(dir.resolve("a/outbox"), null, clock, ServerMetrics.create(),
                db.replicas("replica-a", clock));
        try (Worker w = new Worker(a, processor, outbox, clock, false, ServerMetrics.create(),
                db.replicas("replica-a", clock), db)) {
            w.priority().requestStarted(); // two webhook requests in flight: one lane at a time
            w.priority().requestStarted();
            assertEquals(1, w.priority().allowedLanes());
            w.start();
            a.accept("looks-up", "issue_comment", body(1), "acme/shop#1");
            a.accept("routes", "issue_comment", body(2), "acme/shop#2");
            assertTrue(lookingUp.await(30, java.util.concurrent.TimeUnit.SECONDS));
            assertTrue(routing.await(30, java.util.concurrent.TimeUnit.SECONDS));
            a.accept("other", "issue_comment", body(3), "acme/shop#3");
            assertTrue(otherApplied.await(30, java.util.concurrent.TimeUnit.SECONDS),
                    "applied while one delivery waits for GitHub and one for an agent");
            answer.countDown();
            assertTrue(bothDone.await(30, java.util.concurrent.TimeUnit.SECONDS));
            w.priority().requestEnded();
            w.priority().requestEnded();
        }
    }

    /**
     * While other replicas run, what the senders sent has its claim marked done within
     * milliseconds (another replica's effects of the issue wait for it), also while the tick is
     * busy: here its flush waits on GitHub for a comment queued before the worker started.
     */
    @Test
    void theClaimsOfWhatTheSendersSentAreMarkedDoneWhileTheTickWaitsOnGitHub() throws Exception {
        java.util.concurrent.CountDownLatch slowSending = new java.util.concurrent.CountDownLatch(1);
        java.util.concurrent.CountDownLatch release = new java.util.concurrent.CountDownLatch(1);
        dev.agentx.clarify.github.outbox.FlakyGitHub github = new dev.agentx.clarify.github.outbox.FlakyGitHub();
        github.beforePost = body -> {
            if (body.contains("slow")) {
                slowSending.countDown();
                await(release);
            }
        };
        dev.agentx.clarify.github.RepoRef repo = new dev.agentx.clarify.github.RepoRef("acme", "shop");
        Outbox outbox = new Outbox(dir.resolve("a/outbox"), github, clock, ServerMetrics.create(),
                db.replicas("replica-a", clock), db);
        outbox.enqueue(new dev.agentx.clarify.github.outbox.Effect.Comment("slow", 7, repo, 9, "slow")); // the tick's
        DeliveryProcessor processor = TestProcessors.of((d, payload, progress, save) -> outbox.enqueue(
                new dev.agentx.clarify.github.outbox.Effect.Comment("answer-" + d.id(), 7, repo, 1, "answer")));
        PgDeliveryQueue a = db.deliveries("replica-a", clock);
        try (Worker w = new Worker(a, processor, outbox, clock, false, ServerMetrics.create(),
                db.replicas("replica-a", clock), db)) {
            w.start();
            await(slowSending); // the first tick's flush sends it and waits for GitHub
            a.accept("d-1", "issue_comment", body(1), "acme/shop#1");
            awaitTrue(() -> count("SELECT count(*) FROM effect_claims WHERE done") == 1,
                    "the answer's claim marked done while the tick waits");
            release.countDown(); // before the worker closes, which waits for its tick
        } finally {
            release.countDown();
        }
    }

    private long count(String query) {
        return db.autoCommit(c -> {
            try (var s = c.prepareStatement(query); var r = s.executeQuery()) {
                r.next();
                return r.getLong(1);
            }
        });
    }

    private static void await(java.util.concurrent.CountDownLatch latch) {
        try {
            if (!latch.await(30, java.util.concurrent.TimeUnit.SECONDS)) {
                throw new IllegalStateException("not released within 30 s");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
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
     * A running worker whose delivery waits for one another replica holds goes on when that replica
     * signals its done mark: the clock stands still, so the wait's own end never comes.
     */
    @Test
    void aWaitingLineGoesOnWhenTheReplicaItWaitsForSignalsItsDoneMark() throws Exception {
        PgDeliveryQueue a = db.deliveries("replica-a", clock);
        PgDeliveryQueue b = db.deliveries("replica-b", clock);
        List<DeliveryQueue.Queued> onA = new ArrayList<>();
        a.onQueued(onA::add);
        java.util.concurrent.CountDownLatch handledD0 = new java.util.concurrent.CountDownLatch(1);
        java.util.concurrent.CountDownLatch handledD2 = new java.util.concurrent.CountDownLatch(1);
        java.util.Map<String, Integer> applied = new java.util.concurrent.ConcurrentHashMap<>();
        DeliveryProcessor processor = committing(applied, id -> (id.equals("d-0") ? handledD0 : handledD2).countDown());
        ServerMetrics metrics = ServerMetrics.create();
        try (Worker wb = running("b", b, processor, metrics)) {
            b.accept("d-0", "issue_comment", body(2), "acme/shop#2");
            assertTrue(handledD0.await(30, java.util.concurrent.TimeUnit.SECONDS), "d-0 processed");
            assertEquals(0, listening(), "no connection listens while the replica has not waited");
            a.accept("d-1", "issue_comment", body(1), "acme/shop#1");
            b.accept("d-2", "issue_comment", body(1), "acme/shop#1");
            awaitTrue(() -> metrics.counterValue(ServerMetrics.DELIVERY_WAITS) == 1, "d-2 waits for d-1");
            assertEquals(1, handledD2.getCount(), "not before d-1");
            // acknowledged by b, d-2 was applied at once, on a turn its done mark found was d-1's
            assertEquals(1, applied.get("d-2"), "applied once in vain, rolled back");
            assertEquals(0, attempts("d-2"), "which is no failed attempt");
            awaitTrue(() -> listening() >= 1, "b listens for signals from its first wait on");

            doneWith(a, onA.get(0));
            assertTrue(handledD2.await(30, java.util.concurrent.TimeUnit.SECONDS), "taken up on a's signal");
            assertEquals(2, applied.get("d-2"));
            assertEquals(1, applied.get("d-0"), "a delivery whose turn it was: applied once");
        }
    }

    /**
     * A processor whose work on a delivery counts ({@code onCommit}) once the delivery's transaction
     * commits, as a delivery's changes do; {@code applied} counts how often each was applied.
     */
    private DeliveryProcessor committing(java.util.Map<String, Integer> applied,
                                         java.util.function.Consumer<String> onCommit) {
        return TestProcessors.of((d, payload, progress, save) -> {
            applied.merge(d.id(), 1, Integer::sum);
            db.join(new dev.agentx.clarify.store.UnitOfWork.Participant() {
                @Override
                public void committed() {
                    onCommit.accept(d.id());
                }
            });
        });
    }

    /** The failed attempts the queue records for the delivery {@code id}. */
    private int attempts(String id) {
        return db.autoCommit(c -> {
            try (java.sql.PreparedStatement s = c.prepareStatement("SELECT q.attempts FROM delivery_queue q "
                    + "JOIN deliveries h ON h.seq = q.seq WHERE h.id = ?")) {
                s.setString(1, id);
                try (java.sql.ResultSet r = s.executeQuery()) {
                    assertTrue(r.next(), id + " is queued");
                    return r.getInt(1);
                }
            }
        });
    }

    /**
     * The signal a waiting line's replica missed (its listening connection was broken when the
     * other replica sent it) does not leave the line waiting: once the replica listens again its
     * worker looks at its waiting lines. The clock stands still, so the wait's own end never comes.
     */
    @Test
    void aWaitingLineWhoseSignalWasMissedGoesOnOnceItsReplicaListensAgain() throws Exception {
        PgDeliveryQueue a = db.deliveries("replica-a", clock);
        PgDeliveryQueue b = db.deliveries("replica-b", clock);
        List<DeliveryQueue.Queued> onA = new ArrayList<>();
        a.onQueued(onA::add);
        java.util.concurrent.CountDownLatch handledD2 = new java.util.concurrent.CountDownLatch(1);
        DeliveryProcessor processor = committing(new java.util.concurrent.ConcurrentHashMap<>(),
                id -> handledD2.countDown());
        ServerMetrics metrics = ServerMetrics.create();
        try (Worker wb = running("b", b, processor, metrics)) {
            a.accept("d-1", "issue_comment", body(1), "acme/shop#1");
            b.accept("d-2", "issue_comment", body(1), "acme/shop#1");
            awaitTrue(() -> metrics.counterValue(ServerMetrics.DELIVERY_WAITS) == 1, "d-2 waits for d-1");
            awaitTrue(() -> listening() == 1, "b listens from its first wait on");

            db.autoCommit(c -> {
                try (java.sql.Statement s = c.createStatement()) {
                    return s.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE query = "
                            + "'LISTEN agentx_line_freed' AND datname = current_database()");
                }
            });
            awaitTrue(() -> listening() == 0, "b's listening connection ended");
            doneWith(a, onA.get(0)); // its signal reaches nobody
            assertTrue(handledD2.await(30, java.util.concurrent.TimeUnit.SECONDS),
                    "taken up once b listens again");
        }
    }

    /** A started worker of replica {@code name} over {@code queue}, which listens for the other replicas' signals. */
    private Worker running(String name, DeliveryQueue queue, DeliveryProcessor processor, ServerMetrics metrics) {
        Worker w = new Worker(queue, processor, new Outbox(dir.resolve(name + "/outbox"), null, clock, metrics,
                db.replicas("replica-" + name, clock)), clock, false, metrics, db.replicas("replica-" + name, clock), db);
        w.start();
        return w;
    }

    /** Takes {@code q} on {@code queue} and marks it done in a delivery's transaction, as a worker does. */
    private void doneWith(PgDeliveryQueue queue, DeliveryQueue.Queued q) {
        assertInstanceOf(DeliveryQueue.Turn.Mine.class, queue.take(q, clock.instant()));
        db.run(() -> {
            queue.done(q);
            return null;
        });
    }

    /** The connections listening for the replicas' signals. */
    private long listening() {
        return db.autoCommit(c -> {
            try (java.sql.PreparedStatement s = c.prepareStatement("SELECT count(*) FROM pg_stat_activity "
                    + "WHERE query = 'LISTEN agentx_line_freed' AND datname = current_database()");
                 java.sql.ResultSet r = s.executeQuery()) {
                r.next();
                return r.getLong(1);
            }
        });
    }

    private static void awaitTrue(java.util.function.BooleanSupplier condition, String what) throws InterruptedException {
        for (int i = 0; i < 300 && !condition.getAsBoolean(); i++) {
            Thread.sleep(100);
        }
        assertTrue(condition.getAsBoolean(), what + " within 30 s");
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
