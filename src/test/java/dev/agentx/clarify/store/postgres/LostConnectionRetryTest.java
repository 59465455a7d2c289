package dev.agentx.clarify.store.postgres;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.agentx.clarify.protocol.ClarifyException;
import dev.agentx.clarify.protocol.ErrorCode;
import dev.agentx.clarify.support.TestPostgres;
import java.sql.SQLException;
import java.sql.SQLTransientConnectionException;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * Work whose connection broke (the database restarted) is tried once more on a new connection;
 * work that got no connection in the pool's time (the database is gone) is not, so that a
 * webhook's insert answers within the time its sender waits instead of waiting twice.
 */
class LostConnectionRetryTest {
    @Test
    void aBrokenConnectionIsTriedOnceMoreAndNoConnectionInTimeIsNot() {
        try (PostgresDatabase db = TestPostgres.newDatabase().open(2)) {
            AtomicInteger tries = new AtomicInteger();
            assertEquals("done", db.retryingLostConnections(() -> {
                if (tries.incrementAndGet() == 1) {
                    throw failure(new SQLException("An I/O error occurred while sending to the backend.", "08006"));
                }
                return "done";
            }));
            assertEquals(2, tries.get(), "a broken connection: once more");

            tries.set(0);
            assertThrows(ClarifyException.class, () -> db.retryingLostConnections(() -> {
                tries.incrementAndGet();
                throw failure(new SQLTransientConnectionException("agentx-db - Connection is not available, request "
                        + "timed out after 5000ms", "08001"));
            }));
            assertEquals(1, tries.get(), "no connection within the pool's timeout: not again");

            tries.set(0);
            assertThrows(ClarifyException.class, () -> db.retryingLostConnections(() -> {
                tries.incrementAndGet();
                throw failure(new SQLException("duplicate key value violates unique constraint", "23505"));
            }));
            assertEquals(1, tries.get(), "any other failure: not again");
        }
    }

    private static ClarifyException failure(SQLException cause) {
        return new ClarifyException(ErrorCode.INTERNAL, "PostgreSQL: " + cause.getMessage(), cause);
    }
}
