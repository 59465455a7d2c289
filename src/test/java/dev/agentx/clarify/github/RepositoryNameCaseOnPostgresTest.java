package dev.agentx.clarify.github;

import dev.agentx.clarify.github.support.GitHubRig;
import dev.agentx.clarify.store.postgres.DatabaseUrl;
import dev.agentx.clarify.store.postgres.PostgresDatabase;
import dev.agentx.clarify.support.TestPostgres;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Tag;

/** The same, with the repositories' state in PostgreSQL. */
@Tag("postgres")
class RepositoryNameCaseOnPostgresTest extends RepositoryNameCaseTest {
    private TestPostgres.Database db;

    @Override
    GitHubRig configure(GitHubRig rig) {
        if (db == null) {
            db = TestPostgres.newDatabase();
        }
        return rig.database(db.url());
    }

    /** The SQL docs/operations.md gives, run as written for Codertocat/Hello-World. */
    @Override
    void moveAside() throws Exception {
        String doc = Files.readString(Path.of("docs/operations.md"));
        int from = doc.indexOf("<<'SQL'\n", doc.indexOf("## A repository name used again"));
        String sql = doc.substring(from + "<<'SQL'\n".length(), doc.indexOf("\nSQL\n", from))
                .replace("acme/widgets", "Codertocat/Hello-World");
        try (PostgresDatabase direct = PostgresDatabase.open(DatabaseUrl.parse(db.url(), Map.of()), 1)) {
            direct.autoCommit(c -> {
                for (String statement : sql.split(";")) {
                    if (!statement.isBlank() && !statement.strip().equals("BEGIN") && !statement.strip().equals("COMMIT")) {
                        try (java.sql.Statement st = c.createStatement()) {
                            st.execute(statement);
                        }
                    }
                }
                return null;
            });
        }
    }
}
