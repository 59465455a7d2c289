package dev.agentx.clarify.store.postgres;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.agentx.clarify.store.DeliveryQueue.Queued;
import dev.agentx.clarify.store.DeliveryQueue.Turn;
import dev.agentx.clarify.support.MutableClock;
import dev.agentx.clarify.support.TestPostgres;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * A replica whose delivery waits for an earlier one of its issue held by another replica is told
 * (NOTIFY) when that one is done with, over a real PostgreSQL server: signalled for the
 * delivery waited for, whether its done mark is a delivery's transaction or a failure recorded on
 * its own, and for no other; and told each time it starts to listen, since what was signalled
 * before could not reach it.
 */
@Tag("postgres")
class LineSignalTest {
    private final MutableClock clock = MutableClock.at("2026-11-27T10:00:00Z");
    private PostgresDatabase db;
    private PgDeliveryQueue a;
    private PgDeliveryQueue b;
    private final List<Queued> onA = new ArrayList<>();
    private final List<Queued> onB = new ArrayList<>();
    /** The lines b is told were freed. */
    private final BlockingQueue<String> freed = new LinkedBlockingQueue<>();
    /** A permit each time b starts to listen. */
    private final Semaphore listening = new Semaphore(0);

    @BeforeEach
    void open() {
        db = TestPostgres.newDatabase().open(6);
        a = db.deliveries("replica-a", clock);
        b = db.deliveries("replica-b", clock);
        a.onQueued(onA::add);
        b.onQueued(onB::add);
        db.beat("replica-a");
        db.beat("replica-b");
        b.onLineFreed(freed::add, listening::release);
    }

    @AfterEach
    void close() {
        db.close();
    }

    private static byte[] body(String s) {
        return ("{\"n\":\"" + s + "\"}").getBytes(StandardCharsets.UTF_8);
    }

    @Test
    void theReplicaThatFinishesADeliveryAnotherWaitsForSignalsItAndNoOther() throws Exception {
        a.accept("d-1", "issue_comment", body("1"), "acme/shop#1");
        a.accept("d-2", "issue_comment", body("2"), "acme/shop#2");
        a.accept("d-3", "issue_comment", body("3"), "acme/shop#3");
        b.accept("d-4", "issue_comment", body("4"), "acme/shop#1");
        b.accept("d-5", "issue_comment", body("5"), "acme/shop#3");
        assertEquals("replica-a", assertInstanceOf(Turn.Wait.class, b.take(onB.get(0), clock.instant())).holder());
        assertInstanceOf(Turn.Wait.class, b.take(onB.get(1), clock.instant()));
        // b listens from its first wait on, on a connection its own thread opens, and says when it does
        assertTrue(listening.tryAcquire(10, TimeUnit.SECONDS), "b listens from its first wait on");

        // nobody waits for d-2: done without a signal
        assertInstanceOf(Turn.Mine.class, a.take(onA.get(1), clock.instant()));
        db.run(() -> {
            a.done(onA.get(1));
            return null;
        });
        // d-1 in a delivery's transaction: signalled once committed
        assertInstanceOf(Turn.Mine.class, a.take(onA.get(0), clock.instant()));
        db.run(() -> {
            a.done(onA.get(0));
            return null;
        });
        assertEquals("acme/shop#1", freed.poll(10, TimeUnit.SECONDS), "the first signal is d-1's line");
        assertInstanceOf(Turn.Mine.class, b.take(onB.get(0), clock.instant()), "its turn now");

        // d-3 failed for good, recorded on its own
        assertInstanceOf(Turn.Mine.class, a.take(onA.get(2), clock.instant()));
        a.fail(onA.get(2), "gave up");
        assertEquals("acme/shop#3", freed.poll(10, TimeUnit.SECONDS));
        assertInstanceOf(Turn.Mine.class, b.take(onB.get(1), clock.instant()));
    }

    /**
     * Signals sent while a replica's listening connection is broken are missed: once it listens
     * again it says so, for its worker to look at its waiting lines, and the signals reach it again.
     */
    @Test
    void aReplicaWhoseListeningConnectionBrokeSaysSoOnceItListensAgain() throws Exception {
        a.accept("d-1", "issue_comment", body("1"), "acme/shop#1");
        b.accept("d-2", "issue_comment", body("2"), "acme/shop#1");
        assertInstanceOf(Turn.Wait.class, b.take(onB.get(0), clock.instant()));
        assertTrue(listening.tryAcquire(10, TimeUnit.SECONDS), "b listens from its first wait on");

        assertEquals(Integer.valueOf(1), db.<Integer>autoCommit(c -> {
            try (var s = c.prepareStatement("SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
                    + "WHERE query = 'LISTEN " + LineSignals.LINE_FREED + "' AND datname = current_database()");
                 var r = s.executeQuery()) {
                r.next();
                return r.getInt(1);
            }
        }), "b's listening connection is ended");
        assertTrue(listening.tryAcquire(10, TimeUnit.SECONDS), "b says so once it listens again");
        db.notifications().signal(LineSignals.LINE_FREED, "acme/shop#9");
        assertEquals("acme/shop#9", freed.poll(10, TimeUnit.SECONDS), "signals reach b again");
    }
}
