package dev.agentx.clarify.store.postgres;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;

import dev.agentx.clarify.store.DeliveryQueue.Queued;
import dev.agentx.clarify.store.DeliveryQueue.Turn;
import dev.agentx.clarify.support.MutableClock;
import dev.agentx.clarify.support.TestPostgres;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * A replica whose delivery waits for an earlier one of its issue held by another replica is told
 * (NOTIFY) when that one is done with, over a real PostgreSQL server: signalled for the
 * delivery waited for, whether its done mark is a delivery's transaction or a failure recorded on
 * its own, and for no other.
 */
class LineSignalTest {
    private final MutableClock clock = MutableClock.at("2026-11-27T10:00:00Z");

    private static byte[] body(String s) {
        return ("{\"n\":\"" + s + "\"}").getBytes(StandardCharsets.UTF_8);
    }

    @Test
    void theReplicaThatFinishesADeliveryAnotherWaitsForSignalsItAndNoOther() throws Exception {
        try (PostgresDatabase db = TestPostgres.newDatabase().open(6)) {
            PgDeliveryQueue a = db.deliveries("replica-a", clock);
            PgDeliveryQueue b = db.deliveries("replica-b", clock);
            List<Queued> onA = new ArrayList<>();
            List<Queued> onB = new ArrayList<>();
            a.onQueued(onA::add);
            b.onQueued(onB::add);
            db.beat("replica-a");
            db.beat("replica-b");
            BlockingQueue<String> freed = new LinkedBlockingQueue<>();
            b.onLineFreed(freed::add);

            a.accept("d-1", "issue_comment", body("1"), "acme/shop#1");
            a.accept("d-2", "issue_comment", body("2"), "acme/shop#2");
            a.accept("d-3", "issue_comment", body("3"), "acme/shop#3");
            b.accept("d-4", "issue_comment", body("4"), "acme/shop#1");
            b.accept("d-5", "issue_comment", body("5"), "acme/shop#3");
            assertEquals("replica-a", assertInstanceOf(Turn.Wait.class, b.take(onB.get(0), clock.instant())).holder());
            assertInstanceOf(Turn.Wait.class, b.take(onB.get(1), clock.instant()));
            // b listens from its first wait on, on a connection its own thread opens: signal until it hears
            do {
                db.signal(PgDeliveryQueue.LINE_FREED, "probe");
            } while (!"probe".equals(freed.poll(100, TimeUnit.MILLISECONDS)));
            freed.clear();

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
    }
}
