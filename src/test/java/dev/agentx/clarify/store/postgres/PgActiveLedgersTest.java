package dev.agentx.clarify.store.postgres;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.agentx.clarify.ledger.ActiveLedgers;
import dev.agentx.clarify.ledger.LedgerStore.Mutation;
import dev.agentx.clarify.protocol.Ledger;
import dev.agentx.clarify.support.TestPostgres;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.util.List;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * A scan reads again only the ledgers whose row changed since the last scan, and never serves a
 * ledger a later write replaced: not after an update, not after a row deleted and made again
 * with the same version, not for a row that was damaged and is mended.
 */
@Tag("postgres")
class PgActiveLedgersTest {
    private static final String OPEN = "{\"issueNumber\":%d,\"clarifications\":[{\"id\":\"CLR-%d-001\",\"from\":"
            + "\"engineer\",\"to\":\"architect\",\"topic\":\"%s\",\"blocking\":true,\"status\":\"pending\",\"round\":1,"
            + "\"maxRounds\":5,\"created\":\"2026-11-26T08:00:00Z\",\"staleAfter\":\"2026-11-26T08:30:00Z\",\"thread\":[{\"round\":1,"
            + "\"from\":\"engineer\",\"type\":\"question\",\"body\":\"Q?\",\"timestamp\":\"2026-11-26T08:00:00Z\"}]}]}";

    private static void upsert(TestPostgres.Database d, int issue, long version, String json) throws Exception {
        try (Connection c = d.dataSource().getConnection(); PreparedStatement s = c.prepareStatement(
                "INSERT INTO ledgers VALUES ('acme/shop', ?, ?, true, ?::jsonb, now()) ON CONFLICT (repo, issue) "
                        + "DO UPDATE SET version = excluded.version, ledger = excluded.ledger")) {
            s.setInt(1, issue);
            s.setLong(2, version);
            s.setString(3, json);
            s.executeUpdate();
        }
    }

    private static List<String> topics(ActiveLedgers.Scan scan) {
        return scan.active().stream().map(l -> l.clarifications().get(0).topic()).toList();
    }

    @Test
    void aScanNeverServesALedgerALaterWriteReplaced() throws Exception {
        TestPostgres.Database d = TestPostgres.newDatabase();
        try (PostgresDatabase db = new PostgresDatabase(d.dataSource(), d.name())) {
            PostgresRepositoryState state = db.repository("acme/shop");
            upsert(d, 1, 1, OPEN.formatted(1, 1, "first"));
            upsert(d, 2, 1, OPEN.formatted(2, 2, "second"));
            ActiveLedgers ledgers = state.activeLedgers();
            assertEquals(List.of("first", "second"), topics(ledgers.scan()));
            assertEquals(List.of("first", "second"), topics(ledgers.scan()), "unchanged rows, same ledgers");

            // a write through the store raises the version
            state.ledgers().update(1, "engineer", l -> Mutation.write(Ledger.empty(1), null));
            assertEquals(List.of("second"), topics(ledgers.scan()), "closed on issue 1: no longer active");

            // the same version with another document: a row deleted and made again
            try (Connection c = d.dataSource().getConnection();
                 PreparedStatement s = c.prepareStatement("DELETE FROM ledgers WHERE issue = 2")) {
                s.executeUpdate();
            }
            upsert(d, 2, 1, OPEN.formatted(2, 2, "made again"));
            assertEquals(List.of("made again"), topics(ledgers.scan()));

            // damaged, then mended by a later write
            upsert(d, 3, 1, "{\"issueNumber\":4,\"clarifications\":[]}");
            ActiveLedgers.Scan damaged = ledgers.scan();
            assertTrue(damaged.damaged().containsKey(3), damaged.damaged().toString());
            upsert(d, 3, 2, OPEN.formatted(3, 3, "mended"));
            ActiveLedgers.Scan mended = ledgers.scan();
            assertEquals(List.of("made again", "mended"), topics(mended));
            assertTrue(mended.damaged().isEmpty());
        }
    }
}
