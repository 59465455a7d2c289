package dev.agentx.clarify.store;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.agentx.clarify.store.DashboardSessions.Session;
import dev.agentx.clarify.store.postgres.PostgresDatabase;
import dev.agentx.clarify.support.TestPostgres;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Instant;
import java.util.Optional;
import java.util.Set;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** The dashboard's sessions, in memory and in PostgreSQL: the same contract. */
class DashboardSessionsTest {
    static final Instant NOW = Instant.parse("2026-11-25T10:00:00Z");

    abstract static class Contract {
        abstract DashboardSessions sessions();

        @Test
        void aSessionIsFoundByItsIdUntilItExpires() {
            DashboardSessions s = sessions();
            Session alice = new Session("alice", Set.of("acme/shop", "acme/web"), NOW.plusSeconds(3600));
            s.put("id-1", alice, NOW);
            assertEquals(Optional.of(alice), s.get("id-1", NOW));
            assertEquals(Optional.empty(), s.get("id-2", NOW));
            assertEquals(Optional.empty(), s.get("id-1", NOW.plusSeconds(3600)), "expired");
        }

        @Test
        void expiredSessionsAreForgottenAtTheNextSignIn() {
            DashboardSessions s = sessions();
            s.put("old", new Session("bob", Set.of(), NOW.plusSeconds(10)), NOW);
            s.put("new", new Session("carol", Set.of("acme/shop"), NOW.plusSeconds(3600)), NOW.plusSeconds(20));
            assertEquals(Optional.empty(), s.get("old", NOW), "forgotten, even asked with an earlier time");
            assertTrue(s.get("new", NOW).isPresent());
        }
    }

    @Nested
    class InMemory extends Contract {
        @Override
        DashboardSessions sessions() {
            return DashboardSessions.inMemory();
        }
    }

    @Nested
    @Tag("postgres")
    class InPostgres extends Contract {
        private final PostgresDatabase db = TestPostgres.newDatabase().open(2);

        @AfterEach
        void close() {
            db.close();
        }

        @Override
        DashboardSessions sessions() {
            return db.dashboardSessions();
        }

        @Test
        void theTableHoldsNoSessionIdOnlyItsHash() {
            sessions().put("secret-session-id", new Session("alice", Set.of(), NOW.plusSeconds(60)), NOW);
            String key = db.inTransaction(c -> {
                try (PreparedStatement s = c.prepareStatement("SELECT id_hash FROM dashboard_sessions");
                     ResultSet r = s.executeQuery()) {
                    r.next();
                    return r.getString(1);
                }
            });
            assertFalse(key.contains("secret-session-id"), key);
            assertEquals(64, key.length(), "SHA-256 in hex");
        }
    }
}
