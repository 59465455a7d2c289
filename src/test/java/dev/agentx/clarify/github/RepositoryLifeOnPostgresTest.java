package dev.agentx.clarify.github;

import dev.agentx.clarify.github.support.GitHubRig;
import dev.agentx.clarify.support.TestPostgres;
import org.junit.jupiter.api.Tag;

/** The same, with the repositories' state and records in PostgreSQL. */
@Tag("postgres")
class RepositoryLifeOnPostgresTest extends RepositoryLifeTest {
    @Override
    GitHubRig configure(GitHubRig rig) {
        return rig.database(TestPostgres.newDatabase().url());
    }
}
