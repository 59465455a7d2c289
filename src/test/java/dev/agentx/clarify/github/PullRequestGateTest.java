package dev.agentx.clarify.github;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.node.ObjectNode;
import com.github.tomakehurst.wiremock.verification.LoggedRequest;
import dev.agentx.clarify.github.support.GitHubContract;
import dev.agentx.clarify.github.support.GitHubRig;
import dev.agentx.clarify.support.MutableClock;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The merge gate end to end, GitHub's own payloads in and the Checks API out through WireMock: a
 * pull request's check run {@code AgentX Clarify} through a question's whole life on the issue it
 * closes and on the pull request itself, a new head commit, a body edited to close another issue,
 * a non-blocking question, a re-requested run. Every check-run request is held against GitHub's
 * REST description.
 */
class PullRequestGateTest {
    static final String A = "ec26c3e57ca3a959ca5aad62de7213c562f8c821";
    static final String B = "f95f852bd8fca8fcc58a9a2d6c842781e32a215e";
    @TempDir
    Path dir;
    GitHubRig rig;

    @BeforeEach
    void setUp() {
        rig = configure(new GitHubRig(dir.resolve("data"), MutableClock.at("2026-02-26T10:00:00Z")));
        rig.start();
    }

    /** The rig as each test runs it; a subclass runs the same tests over another store. */
    GitHubRig configure(GitHubRig r) {
        return r;
    }

    @AfterEach
    void tearDown() {
        rig.close();
    }

    private void deliver(String event, ObjectNode payload) {
        GitHubRig.Response r = rig.deliver(event, payload);
        assertEquals(202, r.status(), r.body());
    }

    private void comment(String login, int issue, String body) {
        deliver("issue_comment", rig.comment(login, issue, body));
    }

    /** The one gate run on {@code sha}: there is never more than one. */
    ObjectNode run(String sha) {
        List<ObjectNode> runs = rig.checkRuns.on(sha);
        assertEquals(1, runs.size(), "runs on " + sha + ": " + runs);
        ObjectNode r = runs.get(0);
        assertEquals("AgentX Clarify", r.path("name").asText());
        assertEquals("completed", r.path("status").asText());
        return r;
    }

    private String conclusion(String sha) {
        return run(sha).path("conclusion").asText();
    }

    private String summary(String sha) {
        return run(sha).path("output").path("summary").asText();
    }

    /** Every request of the Checks API the App made is one GitHub documents, with a valid body. */
    private void checkRequestsAreGitHubs() {
        GitHubContract contract = new GitHubContract();
        List<String> wrong = new ArrayList<>();
        int checked = 0;
        for (LoggedRequest r : rig.requests("ANY", ".*check-runs.*")) {
            checked++;
            String problem = contract.check(r.getMethod().getName(), r.getUrl(), r.getBodyAsString());
            if (!problem.isEmpty()) {
                wrong.add(r.getMethod() + " " + r.getUrl() + ": " + problem);
            }
        }
        assertTrue(checked > 0);
        assertEquals(List.of(), wrong);
    }

    @Test
    void aQuestionOnTheIssueItClosesHoldsThePullRequestUntilItIsResolved() {
        deliver("pull_request", rig.pullRequest("opened", 2, "Adds login.\n\nFixes #42", A));
        assertEquals("success", conclusion(A));
        assertEquals("No blocking clarification open", run(A).path("output").path("title").asText());
        assertEquals("agentx-gate:2:1", run(A).path("external_id").asText());

        comment("eng", 42, "/clarify @architect Which auth method: JWT or sessions?");
        assertEquals("action_required", conclusion(A));
        assertEquals("1 blocking clarification open", run(A).path("output").path("title").asText());
        assertTrue(summary(A).contains("[CLR-42-001](https://github.com/Codertocat/Hello-World/issues/42) on #42 "
                + "(pending): engineer waits on architect"), summary(A));
        assertEquals("https://github.com/Codertocat/Hello-World/issues/42", run(A).path("details_url").asText());

        comment("arch", 42, "/clarify answer CLR-42-001 JWT, short-lived.");
        assertEquals("action_required", conclusion(A));
        assertTrue(summary(A).contains("(answered): architect answered; waits on engineer to resolve it"), summary(A));

        comment("eng", 42, "/clarify resolve CLR-42-001 JWT it is");
        assertEquals("success", conclusion(A));
        assertEquals(1, rig.requests("POST", GitHubRig.API_REPO + "/check-runs").size(), "one run, created once");
        assertEquals(3, rig.requests("PATCH", GitHubRig.API_REPO + "/check-runs/\\d+").size(), "then updated");
        checkRequestsAreGitHubs();
    }

    @Test
    void aQuestionOnThePullRequestItselfHoldsItUntilItIsAbandoned() {
        deliver("pull_request", rig.pullRequest("opened", 3, "No issue closed here.", A));
        assertEquals("success", conclusion(A));
        comment("eng", 3, "/clarify @architect Is this the right layer for the cache?");
        assertEquals("action_required", conclusion(A));
        assertTrue(summary(A).contains("[CLR-3-001](https://github.com/Codertocat/Hello-World/issues/3) on #3"),
                summary(A));
        deliver("pull_request", rig.pullRequest("closed", 3, "No issue closed here.", A));
        comment("eng", 3, "/clarify abandon CLR-3-001 not needed");
        assertEquals("action_required", conclusion(A), "a closed pull request is not evaluated");
        deliver("pull_request", rig.pullRequest("reopened", 3, "No issue closed here.", A));
        assertEquals("success", conclusion(A), "evaluated again when reopened");
        checkRequestsAreGitHubs();
    }

    @Test
    void aNewHeadCommitGetsARunOfItsOwnAndTheOldOneIsLeftAsItWas() {
        comment("eng", 42, "/clarify @architect Which auth method?");
        deliver("pull_request", rig.pullRequest("opened", 2, "Closes #42", A));
        assertEquals("action_required", conclusion(A));
        deliver("pull_request", rig.pullRequest("synchronize", 2, "Closes #42", B));
        assertEquals("action_required", conclusion(B));
        assertEquals("agentx-gate:2:2", run(B).path("external_id").asText());
        comment("eng", 42, "/clarify resolve CLR-42-001 sessions after all");
        assertEquals("success", conclusion(B));
        assertEquals("agentx-gate:2:1", run(A).path("external_id").asText(), "the old head's run is not touched");
        checkRequestsAreGitHubs();
    }

    @Test
    void anEditedBodyGatesOnTheIssuesItClosesNowAndOtherRepositoriesAreIgnored() {
        comment("eng", 42, "/clarify @architect Which auth method?");
        deliver("pull_request", rig.pullRequest("opened", 2, "Fixes octo/other#42", A));
        assertEquals("success", conclusion(A), "issue 42 of another repository closes nothing here");
        ObjectNode edited = rig.pullRequest("edited", 2, "Fixes https://github.com/Codertocat/Hello-World/issues/42",
                A);
        deliver("pull_request", edited);
        assertEquals("action_required", conclusion(A));
        // a title's edit (no change of the body) evaluates nothing
        ObjectNode title = rig.pullRequest("edited", 2, "Fixes #43", A);
        title.remove("changes");
        title.putObject("changes").putObject("title").put("from", "An earlier title");
        int before = rig.requests("PATCH", GitHubRig.API_REPO + "/check-runs/\\d+").size();
        deliver("pull_request", title);
        assertEquals(before, rig.requests("PATCH", GitHubRig.API_REPO + "/check-runs/\\d+").size());
        deliver("pull_request", rig.pullRequest("edited", 2, "Nothing closed any more.", A));
        assertEquals("success", conclusion(A));
        comment("arch", 42, "/clarify answer CLR-42-001 JWT");
        assertEquals("success", conclusion(A), "issue 42 no longer gates the pull request");
        assertEquals("agentx-gate:2:3", run(A).path("external_id").asText(), "no evaluation for issue 42's change");
        checkRequestsAreGitHubs();
    }

    @Test
    void aNonBlockingQuestionNeverHoldsTheMerge() {
        deliver("pull_request", rig.pullRequest("opened", 2, "Resolves #42", A));
        comment("eng", 42, "/clarify @architect --non-blocking Should the token be logged?");
        assertEquals(1, rig.ledger(42).clarifications().size());
        assertEquals("success", conclusion(A));
        comment("arch", 42, "/clarify answer CLR-42-001 Never.");
        assertEquals("success", conclusion(A));
        assertEquals(0, rig.requests("PATCH", GitHubRig.API_REPO + "/check-runs/\\d+").size(),
                "the verdict never changed, so the run was never updated");
    }

    @Test
    void aReRequestedRunIsEvaluatedAfreshOnTheSameRun() {
        deliver("pull_request", rig.pullRequest("opened", 2, "Fixes #42", A));
        long id = run(A).path("id").asLong();
        deliver("check_run", rig.rerequested(2, A, "agentx-gate:2:1"));
        assertEquals(id, run(A).path("id").asLong());
        assertEquals("agentx-gate:2:2", run(A).path("external_id").asText());
        assertEquals("success", conclusion(A));
        // another App's run, and a head the pull request no longer has, are not the gate's to answer
        ObjectNode foreign = rig.rerequested(2, A, "agentx-gate:2:2");
        ((ObjectNode) foreign.path("check_run").path("app")).put("id", 99);
        deliver("check_run", foreign);
        deliver("check_run", rig.rerequested(2, B, "agentx-gate:2:1"));
        assertEquals("agentx-gate:2:2", run(A).path("external_id").asText());
        assertEquals(List.of(), rig.checkRuns.on(B));
        checkRequestsAreGitHubs();
    }

    @Test
    void reRunningAllChecksEvaluatesTheGatesRunAfresh() {
        deliver("pull_request", rig.pullRequest("opened", 2, "Fixes #42", A));
        long id = run(A).path("id").asLong();
        deliver("check_suite", rig.rerequestedSuite(2, A));
        assertEquals(id, run(A).path("id").asLong());
        assertEquals("agentx-gate:2:2", run(A).path("external_id").asText());
        // another App's suite, and a suite of a commit that is not the pull request's head, are not the gate's
        ObjectNode foreign = rig.rerequestedSuite(2, A);
        ((ObjectNode) foreign.path("check_suite").path("app")).put("id", 99);
        deliver("check_suite", foreign);
        deliver("check_suite", rig.rerequestedSuite(2, B));
        assertEquals("agentx-gate:2:2", run(A).path("external_id").asText());
        assertEquals(List.of(), rig.checkRuns.on(B));
        checkRequestsAreGitHubs();
    }

    /**
     * A clarification resolved in Local Mode on the data dir while the server was down (as an
     * agent's {@code agentx resolve} would): the restart's catch-up brings the issue in step, and
     * with it the pull request's run.
     */
    @Test
    void aChangeMadeWhileTheServerWasDownReachesTheRunAtTheRestart() {
        deliver("pull_request", rig.pullRequest("opened", 2, "Fixes #42", A));
        comment("eng", 42, "/clarify @architect Which auth method?");
        assertEquals("action_required", conclusion(A));
        rig.mode().close();
        changeWhileDown();
        rig.start();
        assertEquals("success", conclusion(A));
        assertEquals("agentx-gate:2:3", run(A).path("external_id").asText());
    }

    /** Resolves CLR-42-001 as the CLI would, with the server stopped. */
    void changeWhileDown() {
        dev.agentx.clarify.app.LocalMode local = dev.agentx.clarify.app.LocalMode.open(GitHubRig.REPO.rootIn(rig.data),
                rig.clock);
        local.engine().execute(new dev.agentx.clarify.routing.ClarifyCommand.Resolve("CLR-42-001", "engineer",
                "sessions", true));
    }

    @Test
    void aRunAnOlderEvaluationLeftIsUpdatedAndANewerOneIsLeftAlone() {
        deliver("pull_request", rig.pullRequest("opened", 2, "Fixes #42", A));
        ObjectNode r = run(A);
        r.put("external_id", "agentx-gate:2:9"); // a newer evaluation got there first
        comment("eng", 42, "/clarify @architect Which auth method?");
        assertEquals("success", conclusion(A), "evaluation 2 does not overwrite evaluation 9");
    }
}
