package dev.agentx.clarify.github;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.agentx.clarify.github.support.GitHubRig;
import dev.agentx.clarify.protocol.Status;
import dev.agentx.clarify.store.postgres.DatabaseUrl;
import dev.agentx.clarify.store.postgres.PostgresDatabase;
import dev.agentx.clarify.support.TestPostgres;
import java.nio.file.Files;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Every GitHub Mode end-to-end test again, with the repositories' ledgers, statuses and events in
 * a real PostgreSQL database (AGENTX_DATABASE_URL) instead of files under the data dir.
 */
class GitHubModeOnPostgresTest extends GitHubModeTest {
    private TestPostgres.Database db;

    @Override
    GitHubRig configure(GitHubRig rig) {
        db = TestPostgres.newDatabase();
        return rig.database(db.url());
    }

    @Test
    void theLedgerIsARowOfTheDatabaseAndNoFile() {
        assertEquals(202, rig.deliver("issue_comment", rig.comment("eng", 1, "/clarify @architect Which DB?")).status());
        assertEquals(Status.PENDING, rig.ledger(1).clarifications().get(0).status());
        assertFalse(Files.exists(dir.resolve("data/repos/Codertocat/Hello-World/.agentx/state/clarifications")),
                "no ledger file");
        try (PostgresDatabase direct = PostgresDatabase.open(DatabaseUrl.parse(db.url(), Map.of()), 1)) {
            assertEquals(java.util.List.of("Codertocat/Hello-World"), direct.repositories());
            assertEquals(Status.PENDING, direct.repository("Codertocat/Hello-World").ledgers().read(1).orElseThrow()
                    .clarifications().get(0).status());
            assertTrue(direct.repository("Codertocat/Hello-World").statuses().read().containsKey("engineer"));
        }
    }
}
