package dev.agentx.clarify.store.postgres;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.agentx.clarify.store.DeliveryQueue;
import dev.agentx.clarify.support.MutableClock;
import dev.agentx.clarify.support.TestPostgres;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * A delivery whose row is committed but whose accepting thread has not handed it to the worker
 * yet is not taken up by the worker's tick as well: the worker could finish that copy first, and
 * the accepting thread would then count it as open for good (its replica's queue never empty).
 */
@Tag("postgres")
class AcceptedNotAdoptedTest {
    @Test
    void aDeliveryBeingAcceptedIsNotAdoptableAndIsDoneWithOnce() {
        MutableClock clock = MutableClock.at("2026-11-27T21:00:00Z");
        try (PostgresDatabase db = TestPostgres.newDatabase().open(4)) {
            db.beat("replica-a");
            PgDeliveryQueue a = db.deliveries("replica-a", clock);
            List<DeliveryQueue.Queued> handed = new ArrayList<>();
            a.onQueued(handed::add);
            List<DeliveryQueue.Queued> foundMeanwhile = new ArrayList<>();
            a.afterInsert(() -> foundMeanwhile.addAll(a.adoptable(clock.instant()))); // the tick, in the window
            assertEquals(DeliveryQueue.Accepted.QUEUED, a.accept("d-1", "issue_comment",
                    "{}".getBytes(StandardCharsets.UTF_8), "acme/shop#1"));
            assertEquals(List.of(), foundMeanwhile, "its accepting thread hands it over");
            assertEquals(1, handed.size());
            assertEquals(1, a.size());

            a.afterInsert(() -> { });
            assertInstanceOf(DeliveryQueue.Turn.Mine.class, a.take(handed.get(0), clock.instant()));
            a.done(handed.get(0));
            assertEquals(0, a.size(), "nothing left open");
            assertEquals(List.of(), a.adoptable(clock.instant()));

            // the case adoption is for: a row of this replica that no accept hands over (its insert
            // committed though the connection broke before the answer, and the retry found it)
            db.deliveries("replica-a", clock).accept("d-2", "issue_comment", "{}".getBytes(StandardCharsets.UTF_8),
                    "acme/shop#2");
            List<DeliveryQueue.Queued> left = a.adoptable(clock.instant());
            assertEquals(List.of("d-2"), left.stream().map(DeliveryQueue.Queued::id).toList());
            assertTrue(a.received("d-2"));
        }
    }
}
