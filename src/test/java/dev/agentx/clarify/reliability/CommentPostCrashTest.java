package dev.agentx.clarify.reliability;

import static com.github.tomakehurst.wiremock.client.WireMock.aResponse;
import static com.github.tomakehurst.wiremock.client.WireMock.get;
import static com.github.tomakehurst.wiremock.client.WireMock.getRequestedFor;
import static com.github.tomakehurst.wiremock.client.WireMock.okJson;
import static com.github.tomakehurst.wiremock.client.WireMock.post;
import static com.github.tomakehurst.wiremock.client.WireMock.postRequestedFor;
import static com.github.tomakehurst.wiremock.client.WireMock.urlPathEqualTo;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.github.tomakehurst.wiremock.verification.LoggedRequest;
import dev.agentx.clarify.github.GitHubSettings;
import dev.agentx.clarify.github.support.GitHubRig;
import dev.agentx.clarify.github.webhook.SignatureVerifier;
import dev.agentx.clarify.support.MutableClock;
import dev.agentx.clarify.support.ProcessLog;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code agentx serve} as a real process is killed (SIGKILL) while its first comment's POST is on
 * its way: GitHub (WireMock) has the request and would create the comment. After the restart,
 * GitHub lists that comment back, as it would; the server looks for the comment's hidden tag
 * before posting it again and finds it, so every comment is on the issue once.
 */
class CommentPostCrashTest {
    private static final Duration DEADLINE = Duration.ofSeconds(60);
    private static final String COMMENTS = GitHubRig.API_REPO + "/issues/1/comments";
    private static final Pattern TAG = Pattern.compile("<!-- agentx-effect:[0-9a-f]+ -->");

    @TempDir
    Path dir;

    @Test
    void aCommentWhosePostWasCutShortByAKillIsNotPostedAgain() throws Exception {
        try (GitHubRig rig = new GitHubRig(dir.resolve("data"), MutableClock.at("2026-02-26T10:00:00Z"))) {
            // GitHub takes its time to answer the comment's POST: the kill comes first
            rig.wiremock.stubFor(post(urlPathEqualTo(COMMENTS)).atPriority(1).willReturn(aResponse().withStatus(201)
                    .withHeader("Content-Type", "application/json").withFixedDelay(20_000)
                    .withBody("{\"id\": 901, \"body\": \"posted\"}")));
            Path log1 = dir.resolve("serve-1.log");
            Process first = rig.serveProcess(log1);
            try {
                int port = port(log1);
                byte[] body = rig.bytes(rig.comment("eng", 1, "/clarify @architect JWT or sessions?"));
                GitHubRig.Response r = rig.request("POST", port, GitHubSettings.DEFAULT_PATH, body, Map.of(
                        "Content-Type", "application/json", "X-GitHub-Event", "issue_comment",
                        "X-GitHub-Delivery", "d-1", "X-Hub-Signature-256", SignatureVerifier.sign(GitHubRig.SECRET, body)));
                assertEquals(202, r.status(), r.body());
                await("the first comment's POST to reach GitHub", () -> !posts(rig).isEmpty());
                first.toHandle().destroyForcibly(); // SIGKILL during the POST
                assertTrue(first.waitFor(DEADLINE.toSeconds(), TimeUnit.SECONDS));
            } finally {
                first.destroyForcibly();
            }
            List<LoggedRequest> inFlight = posts(rig);
            assertEquals(1, inFlight.size(), "one POST was on its way at the kill");

            // GitHub created that comment: it lists it from now on, in its own shape, as does every later one
            rig.wiremock.resetRequests();
            listPostedComments(rig, inFlight);
            rig.wiremock.stubFor(post(urlPathEqualTo(COMMENTS)).atPriority(1).willReturn(aResponse().withStatus(201)
                    .withHeader("Content-Type", "application/json").withBody("{\"id\": 902, \"body\": \"posted\"}")));

            Path log2 = dir.resolve("serve-2.log");
            Process second = rig.serveProcess(log2);
            try {
                int port2 = port(log2);
                await("the outbox to drain after the restart", () -> rig.request("GET", port2, "/healthz", null, Map.of())
                        .body().contains("\"pendingEffects\":0"));
            } finally {
                second.destroy();
                second.waitFor(DEADLINE.toSeconds(), TimeUnit.SECONDS);
                second.destroyForcibly();
            }

            String firstTag = tag(inFlight.get(0));
            List<String> againTags = posts(rig).stream().map(CommentPostCrashTest::tag).toList();
            assertFalse(againTags.contains(firstTag), "the comment in flight at the kill was posted again: " + firstTag
                    + "\n" + read(log2));
            assertEquals(againTags.size(), againTags.stream().distinct().count(), "a comment posted twice: " + againTags);
            assertTrue(rig.wiremock.findAll(getRequestedFor(urlPathEqualTo(COMMENTS))).size() >= 1,
                    "the issue's comments were looked through before posting");
            assertTrue(read(log2).contains("was posted by an earlier attempt; not posting it again"), read(log2));
        }
    }

    private static List<LoggedRequest> posts(GitHubRig rig) {
        return rig.wiremock.findAll(postRequestedFor(urlPathEqualTo(COMMENTS)));
    }

    private static String tag(LoggedRequest post) {
        Matcher m = TAG.matcher(post.getBodyAsString());
        assertTrue(m.find(), "every comment carries its tag: " + post.getBodyAsString());
        return m.group();
    }

    /** GET .../comments answers with the given POSTs as comments, in GitHub's shape (the webhook fixture's comment). */
    private static void listPostedComments(GitHubRig rig, List<LoggedRequest> posted) throws IOException {
        ArrayNode list = rig.json.createArrayNode();
        int id = 801;
        for (LoggedRequest p : posted) {
            ObjectNode c = ((ObjectNode) rig.fixture("issue_comment.created.with-installation").get("comment")).deepCopy();
            JsonNode sent = rig.json.readTree(p.getBodyAsString());
            c.put("id", id++);
            c.put("body", sent.path("body").asText());
            c.put("created_at", Instant.now().toString());
            c.put("updated_at", Instant.now().toString());
            ((ObjectNode) c.get("user")).put("login", "agentx-clarify[bot]").put("type", "Bot");
            list.add(c);
        }
        rig.wiremock.stubFor(get(urlPathEqualTo(COMMENTS)).atPriority(1).willReturn(okJson(list.toString())));
    }

    private static int port(Path log) throws InterruptedException {
        Pattern listening = Pattern.compile("listening on http://0\\.0\\.0\\.0:(\\d+)/");
        int[] port = new int[1];
        await("the server to listen (" + log + ")", () -> {
            Matcher m = listening.matcher(read(log));
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

    private static String read(Path file) {
        return ProcessLog.read(file);
    }
}
