package dev.agentx.clarify.store.postgres;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.agentx.clarify.support.TestPostgres;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The plans a pooled connection keeps for the queue's statements, made while the queue is empty
 * and freshly vacuumed (its statistics say no rows and no pages), look deliveries up by key: they
 * must stay good once a backlog of thousands has built up behind them.
 */
@Tag("postgres")
class QueuePlansTest {
    @Test
    void theQueuesStatementsPlannedWhileItIsEmptyLookDeliveriesUpByKey() throws Exception {
        try (PostgresDatabase db = TestPostgres.newDatabase().open(1)) {
            db.autoCommit(c -> {
                try (Statement s = c.createStatement()) {
                    s.execute("INSERT INTO delivery_queue (seq, order_key, body, replica) SELECT g, 'acme/shop#' || g, "
                            + "'{}'::bytea, 'r1' FROM generate_series(1, 2000) g");
                    s.execute("DELETE FROM delivery_queue");
                    s.execute("VACUUM delivery_queue");
                }
                return null;
            });
            db.autoCommit(c -> { // the pool's connection, as the server sets it up
                String take = plan(c, DeliveryTurns.TAKE_HELD, "true, 1, 'r1'");
                assertUsesKeys(take, "delivery_queue_pkey");
                assertTrue(take.contains("delivery_queue_line"), "the line check by its index:\n" + take);
                assertUsesKeys(plan(c, DeliveryTurns.TAKE_OVER, "'r1', 1, 'r1', true"), "delivery_queue_pkey");
                assertUsesKeys(plan(c, DeliveryTurns.WAIT_FOR_HEAD, "'acme/shop#1', 2"), "delivery_queue_line");
                String done = plan(c, DoneMarks.DONE_MARK,
                        "1, 'r1', true, false, 'processed', null, now(), true, 'not r1''s'");
                assertUsesKeys(done, "delivery_queue_pkey");
                assertTrue(done.contains("delivery_queue_line"), "the line check by its index:\n" + done);
                return null;
            });
        }
    }

    private static void assertUsesKeys(String plan, String index) {
        assertTrue(plan.contains("using " + index), "by " + index + ":\n" + plan);
        assertFalse(plan.contains("Seq Scan"), "no table read whole:\n" + plan);
        // the line index is never read whole for a lookup by seq alone
        assertFalse(Pattern.compile("using delivery_queue_line on delivery_queue\\s*\\(.*\\)\\s*\\n\\s*Index Cond: "
                + "\\(seq = ").matcher(plan).find(), plan);
    }

    private static int statements;

    /** The generic plan (the one a pooled connection keeps) of {@code sql} with its {@code ?} numbered, run with {@code args}. */
    private static String plan(Connection c, String sql, String args) throws java.sql.SQLException {
        String name = "plan_" + (++statements);
        StringBuilder out = new StringBuilder();
        try (Statement s = c.createStatement()) {
            s.execute("PREPARE " + name + " AS " + QueuePlansBench.numbered(sql));
            try (ResultSet r = s.executeQuery("EXPLAIN EXECUTE " + name + "(" + args + ")")) {
                while (r.next()) {
                    out.append(r.getString(1)).append('\n');
                }
            }
            s.execute("DEALLOCATE " + name);
        }
        return out.toString();
    }
}
