package dev.agentx.clarify.github;

import dev.agentx.clarify.app.ServerStore;
import dev.agentx.clarify.github.support.GitHubRig;
import dev.agentx.clarify.routing.ClarifyCommand;
import dev.agentx.clarify.support.TestPostgres;
import java.util.Map;
import org.junit.jupiter.api.Tag;

/**
 * The merge gate's end-to-end tests again on PostgreSQL: the gate's record of pull requests and
 * its index of gated issues as shared notes, written in the delivery's transaction with the
 * check run's claim.
 */
@Tag("postgres")
class PullRequestGateOnPostgresTest extends PullRequestGateTest {
    private String url;

    @Override
    GitHubRig configure(GitHubRig r) {
        url = TestPostgres.newDatabase().url();
        return r.database(url);
    }

    /** Resolves CLR-42-001 in the database as the CLI would with {@code --database-url}, the server stopped. */
    @Override
    void changeWhileDown() {
        try (ServerStore.Opened opened = ServerStore.open(GitHubRig.REPO.rootIn(rig.data), rig.clock, url, null,
                Map.of())) {
            opened.local().engine().execute(new ClarifyCommand.Resolve("CLR-42-001", "engineer", "sessions", true));
        }
    }
}
