package dev.agentx.clarify.github;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.agentx.clarify.app.ServerStore;
import dev.agentx.clarify.github.support.GitHubRig;
import dev.agentx.clarify.routing.ClarifyCommand;
import dev.agentx.clarify.support.TestPostgres;
import java.util.Map;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

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

    /**
     * Two replicas on one database take turns on a pull request: each evaluation goes to the one
     * run of its commit, whichever replica made the run and whichever queued the evaluation.
     */
    @Test
    void replicasSharingTheDatabaseKeepOneRunPerCommit() {
        GitHubMode other = rig.startReplica(dir.resolve("data-other"));
        assertEquals(202, rig.deliver("pull_request", rig.pullRequest("opened", 2, "Fixes #42", A)).status());
        assertEquals("success", run(A).path("conclusion").asText());
        assertEquals(202, rig.deliverTo(other, "issue_comment", rig.comment("eng", 42,
                "/clarify @architect Which auth method?"), "q-1").status());
        assertEquals("action_required", run(A).path("conclusion").asText());
        assertEquals(202, rig.deliverTo(other, "pull_request", rig.pullRequest("synchronize", 2, "Fixes #42", B),
                "s-1").status());
        assertEquals("action_required", run(B).path("conclusion").asText());
        assertEquals(202, rig.deliver("issue_comment", rig.comment("eng", 42, "/clarify resolve CLR-42-001 JWT"))
                .status());
        assertEquals("success", run(B).path("conclusion").asText());
        assertEquals("agentx-gate:2:4", run(B).path("external_id").asText());
        assertEquals("action_required", run(A).path("conclusion").asText(), "the old head's run is left as it was");
    }
}
