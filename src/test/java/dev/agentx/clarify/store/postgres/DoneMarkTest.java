package dev.agentx.clarify.store.postgres;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.agentx.clarify.support.TestPostgres;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Instant;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The done mark turns {@code synchronous_commit} off for its transaction exactly when the
 * transaction wrote nothing before it (a delivery that changed nothing), in the same statement.
 */
@Tag("postgres")
class DoneMarkTest {
    private static String markAndShow(Connection c, long seq, boolean writeFirst) throws Exception {
        c.setAutoCommit(false);
        try {
            try (PreparedStatement s = c.prepareStatement("SET LOCAL synchronous_commit = on")) {
                s.execute(); // the test server's default is off
            }
            if (writeFirst) {
                try (PreparedStatement s = c.prepareStatement("INSERT INTO leases (name, holder, expires_at) "
                        + "VALUES ('test', 'r1', now())")) {
                    s.executeUpdate();
                }
            }
            try (PreparedStatement s = c.prepareStatement(DoneMarks.DONE_MARK)) {
                DoneMarks.markBinder(seq, "r1", "processed", null, Instant.now(), "not r1's")
                        .bind(new Pipeline.Params(s, c));
                try (ResultSet marked = s.executeQuery()) {
                    assertTrue(marked.next(), "the row marked");
                    assertFalse(marked.getBoolean(1), "no later delivery of its line waited for it");
                }
            }
            try (PreparedStatement s = c.prepareStatement("SHOW synchronous_commit"); ResultSet r = s.executeQuery()) {
                r.next();
                return r.getString(1);
            }
        } finally {
            c.rollback();
            c.setAutoCommit(true);
        }
    }

    @Test
    void aTransactionThatWroteNothingBeforeTheMarkCommitsWithoutWaitingForTheFlush() throws Exception {
        TestPostgres.Database d = TestPostgres.newDatabase();
        try (PostgresDatabase db = new PostgresDatabase(d.dataSource(), d.name());
             Connection c = d.dataSource().getConnection()) {
            long seq;
            try (PreparedStatement s = c.prepareStatement("WITH h AS (INSERT INTO deliveries (id, event, received_at, "
                    + "replica) VALUES ('d-1', 'issue_comment', now(), 'r1') RETURNING seq) INSERT INTO delivery_queue "
                    + "(seq, order_key, body, replica) SELECT seq, '', '{}'::bytea, 'r1' FROM h RETURNING seq");
                 ResultSet r = s.executeQuery()) {
                r.next();
                seq = r.getLong(1);
            }
            assertEquals("off", markAndShow(c, seq, false));
            assertEquals("on", markAndShow(c, seq, true));
        }
    }
}
