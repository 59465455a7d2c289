package dev.agentx.clarify.reliability;

import static com.github.tomakehurst.wiremock.client.WireMock.aResponse;
import static com.github.tomakehurst.wiremock.client.WireMock.patch;
import static com.github.tomakehurst.wiremock.client.WireMock.patchRequestedFor;
import static com.github.tomakehurst.wiremock.client.WireMock.urlPathMatching;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.node.ObjectNode;
import com.github.tomakehurst.wiremock.stubbing.StubMapping;
import dev.agentx.clarify.github.GitHubSettings;
import dev.agentx.clarify.github.support.GitHubRig;
import dev.agentx.clarify.github.webhook.SignatureVerifier;
import dev.agentx.clarify.support.MutableClock;
import dev.agentx.clarify.support.ProcessLog;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code agentx serve} as a real process is killed (SIGKILL) after a clarification of the issue a
 * pull request closes changed and before the gate's check run was updated (GitHub refuses the
 * update until the kill). Right after the restart the run says what the ledger says: the update
 * was queued with the change, and the one run on the commit is updated, not a second one made.
 */
class GateRunCrashTest {
    private static final Duration DEADLINE = Duration.ofSeconds(90);
    private static final String SHA = "ec26c3e57ca3a959ca5aad62de7213c562f8c821";
    private static final String RUN = GitHubRig.API_REPO + "/check-runs/\\d+";

    @TempDir
    Path dir;

    private static void deliver(GitHubRig rig, int port, String event, ObjectNode payload, String id) {
        byte[] body = rig.bytes(payload);
        GitHubRig.Response r = rig.request("POST", port, GitHubSettings.DEFAULT_PATH, body, Map.of(
                "Content-Type", "application/json", "X-GitHub-Event", event, "X-GitHub-Delivery", id,
                "X-Hub-Signature-256", SignatureVerifier.sign(GitHubRig.SECRET, body)));
        assertEquals(202, r.status(), r.body());
    }

    private static String conclusion(GitHubRig rig) {
        List<ObjectNode> runs = rig.checkRuns.on(SHA);
        return runs.size() == 1 ? runs.get(0).path("conclusion").asText() : "runs: " + runs.size();
    }

    @Test
    void theRunIsUpdatedRightAfterARestartThatFollowedAKillBetweenTheChangeAndTheUpdate() throws Exception {
        try (GitHubRig rig = new GitHubRig(dir.resolve("data"), MutableClock.at("2026-02-26T10:00:00Z"))) {
            Path log1 = dir.resolve("serve-1.log");
            Process first = rig.serveProcess(log1);
            try {
                int port = port(log1);
                deliver(rig, port, "pull_request", rig.pullRequest("opened", 2, "Fixes #42", SHA), "d-1");
                await("the pull request's run", () -> conclusion(rig).equals("success"));
                // GitHub refuses the update from now on: the run stays as it is while the server is killed
                StubMapping refuse = rig.wiremock.stubFor(patch(urlPathMatching(RUN)).atPriority(1)
                        .willReturn(aResponse().withStatus(503)));
                deliver(rig, port, "issue_comment", rig.comment("eng", 42, "/clarify @architect JWT or sessions?"),
                        "d-2");
                await("the run's update to reach GitHub", () -> !rig.wiremock.findAll(patchRequestedFor(
                        urlPathMatching(RUN))).isEmpty());
                first.toHandle().destroyForcibly(); // SIGKILL: the question is recorded, the run not updated
                assertTrue(first.waitFor(DEADLINE.toSeconds(), TimeUnit.SECONDS));
                assertEquals("success", conclusion(rig), "the run was not updated before the kill");
                rig.wiremock.removeStub(refuse);
            } finally {
                first.destroyForcibly();
            }

            Path log2 = dir.resolve("serve-2.log");
            Process second = rig.serveProcess(log2);
            try {
                port(log2);
                await("the run to hold the merge after the restart", () -> conclusion(rig).equals("action_required"));
                ObjectNode run = rig.checkRuns.on(SHA).get(0);
                assertTrue(run.path("output").path("summary").asText().contains("CLR-42-001"), run.toString());
                assertEquals("agentx-gate:2:2", run.path("external_id").asText());
            } finally {
                second.destroy();
                second.waitFor(DEADLINE.toSeconds(), TimeUnit.SECONDS);
                second.destroyForcibly();
            }
            assertEquals(1, rig.checkRuns.on(SHA).size(), "one run on the commit\n" + ProcessLog.read(log2));
        }
    }

    private static int port(Path log) throws InterruptedException {
        Pattern listening = Pattern.compile("listening on http://0\\.0\\.0\\.0:(\\d+)/");
        int[] port = new int[1];
        await("the server to listen (" + log + ")", () -> {
            Matcher m = listening.matcher(ProcessLog.read(log));
            if (m.find()) {
                port[0] = Integer.parseInt(m.group(1));
                return true;
            }
            return false;
        });
        return port[0];
    }

    private static void await(String what, BooleanSupplier condition) throws InterruptedException {
        ProcessLog.until(what, condition, DEADLINE);
    }
}
