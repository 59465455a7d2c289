package dev.agentx.clarify.github;

import dev.agentx.clarify.github.support.GitHubRig;
import dev.agentx.clarify.support.TestPostgres;
import org.junit.jupiter.api.Tag;

/**
 * The merge gate's end-to-end tests again on PostgreSQL: the gate's record of pull requests and
 * its index of gated issues as shared notes, written in the delivery's transaction with the
 * check run's claim.
 */
@Tag("postgres")
class PullRequestGateOnPostgresTest extends PullRequestGateTest {
    @Override
    GitHubRig configure(GitHubRig r) {
        return r.database(TestPostgres.newDatabase().url());
    }
}
