package dev.agentx.clarify.store.postgres;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.agentx.clarify.support.MutableClock;
import dev.agentx.clarify.support.TestPostgres;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * The delivery queue is vacuumed by one replica at a time: each vacuum makes every pooled
 * connection of every replica plan the queue's statements again, so one replica's ticks serve all.
 */
class QueueVacuumTest {
    @Test
    void oneReplicaAtATimeVacuumsTheQueueAndAnotherTakesOverWhenItStops() {
        MutableClock clock = MutableClock.at("2026-11-27T06:00:00Z");
        try (PostgresDatabase db = TestPostgres.newDatabase().open(4)) {
            PgDeliveryQueue a = db.deliveries("replica-a", clock);
            PgDeliveryQueue b = db.deliveries("replica-b", clock);
            assertTrue(a.vacuum(), "the first to ask takes the turn");
            assertFalse(b.vacuum(), "the other skips");
            clock.advance(Duration.ofSeconds(5)); // the next tick
            assertTrue(a.vacuum(), "the holder renews its turn");
            assertFalse(b.vacuum());
            clock.advance(PgDeliveryQueue.TIDY_TURN.plusSeconds(1)); // a's ticks stopped
            assertTrue(b.vacuum(), "another replica takes the turn over");
            assertFalse(a.vacuum(), "and keeps it");
        }
    }
}
