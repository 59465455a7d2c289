package dev.agentx.clarify.github;

import dev.agentx.clarify.github.support.GitHubRig;
import dev.agentx.clarify.store.postgres.DatabaseUrl;
import dev.agentx.clarify.store.postgres.PostgresDatabase;
import dev.agentx.clarify.support.TestPostgres;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Tag;

/** The same, with the repositories' state and records in PostgreSQL. */
@Tag("postgres")
class RepositoryLifeOnPostgresTest extends RepositoryLifeTest {
    private TestPostgres.Database db;

    @Override
    GitHubRig configure(GitHubRig rig) {
        db = TestPostgres.newDatabase();
        return rig.database(db.url());
    }

    @Override
    List<String> stateFolders() {
        try (PostgresDatabase direct = PostgresDatabase.open(DatabaseUrl.parse(db.url(), Map.of()), 1)) {
            return direct.repositories().stream().sorted().toList();
        }
    }
}
