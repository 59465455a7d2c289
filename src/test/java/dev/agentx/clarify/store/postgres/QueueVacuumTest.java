package dev.agentx.clarify.store.postgres;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.agentx.clarify.support.MutableClock;
import dev.agentx.clarify.support.TestPostgres;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The delivery queue is vacuumed by one replica at a time: each vacuum makes every pooled
 * connection of every replica plan the queue's statements again, so one replica's ticks serve all.
 * A vacuum leaves the queues' emptied pages in place: giving them back would take the table's
 * ACCESS EXCLUSIVE lock, and every acknowledgement's insert would wait for it.
 */
@Tag("postgres")
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

    @Test
    void theQueueKeepsItsEmptiedPagesThroughAVacuumSoNoInsertWaitsForItsLock() {
        MutableClock clock = MutableClock.at("2026-11-28T03:00:00Z");
        try (PostgresDatabase db = TestPostgres.newDatabase().open(4)) {
            PgDeliveryQueue queue = db.deliveries("replica-a", clock);
            byte[] body = new byte[16 * 1024]; // a comment's delivery, kept out of line (TOAST)
            for (int i = 0; i < 40; i++) {
                queue.accept("vacuum-" + i, "issue_comment", body, "o/r#" + i);
            }
            long[] full = sizes(db);
            assertTrue(full[0] > 0 && full[1] > 0, "rows and bodies take pages: " + full[0] + ", " + full[1]);
            db.autoCommit(c -> {
                try (Statement s = c.createStatement()) {
                    return s.executeUpdate("DELETE FROM delivery_queue"); // every delivery done with
                }
            });
            assertTrue(queue.vacuum());
            long[] emptied = sizes(db);
            assertEquals(full[0], emptied[0], "the table's pages are kept for the next deliveries");
            assertEquals(full[1], emptied[1], "and its bodies' (TOAST) pages");
        }
    }

    @Test
    void theStatusChangesKeepTheirEmptiedPagesThroughAVacuum() {
        try (PostgresDatabase db = TestPostgres.newDatabase().open(4)) {
            long before = db.autoCommit(c -> {
                try (Statement s = c.createStatement()) {
                    s.executeUpdate("INSERT INTO status_changes (repo, issue, statuses) SELECT 'o/r', i, "
                            + "repeat('x', 200) FROM generate_series(1, 500) i");
                    s.executeUpdate("DELETE FROM status_changes"); // folded
                    return size(s, "'status_changes'");
                }
            });
            assertTrue(before > 0);
            long after = db.autoCommit(c -> {
                try (Statement s = c.createStatement()) {
                    s.execute("VACUUM status_changes"); // what autovacuum does
                    return size(s, "'status_changes'");
                }
            });
            assertEquals(before, after);
        }
    }

    /** The queue's size on disk: its rows' pages, its bodies' (TOAST) pages. */
    private static long[] sizes(PostgresDatabase db) {
        return db.autoCommit(c -> {
            try (Statement s = c.createStatement()) {
                return new long[] {size(s, "'delivery_queue'"),
                    size(s, "(SELECT reltoastrelid FROM pg_class WHERE relname = 'delivery_queue')")};
            }
        });
    }

    private static long size(Statement s, String relation) throws java.sql.SQLException {
        try (ResultSet r = s.executeQuery("SELECT pg_relation_size(" + relation + "::regclass)")) {
            r.next();
            return r.getLong(1);
        }
    }
}
