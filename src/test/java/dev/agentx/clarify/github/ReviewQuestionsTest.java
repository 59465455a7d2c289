package dev.agentx.clarify.github;

import static com.github.tomakehurst.wiremock.client.WireMock.aResponse;
import static com.github.tomakehurst.wiremock.client.WireMock.get;
import static com.github.tomakehurst.wiremock.client.WireMock.okJson;
import static com.github.tomakehurst.wiremock.client.WireMock.post;
import static com.github.tomakehurst.wiremock.client.WireMock.urlPathEqualTo;
import static com.github.tomakehurst.wiremock.client.WireMock.urlPathMatching;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.github.tomakehurst.wiremock.stubbing.Scenario;
import com.github.tomakehurst.wiremock.verification.LoggedRequest;
import dev.agentx.clarify.cli.Main;
import dev.agentx.clarify.github.support.GitHubRig;
import dev.agentx.clarify.github.support.Keys;
import dev.agentx.clarify.protocol.ClarificationRecord;
import dev.agentx.clarify.protocol.CodeLine;
import dev.agentx.clarify.protocol.Status;
import dev.agentx.clarify.render.Marker;
import dev.agentx.clarify.support.MutableClock;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Questions on a line, with GitHub's own {@code pull_request_review_comment} payload: a
 * {@code /clarify} in a review comment opens a clarification on the pull request that keeps the
 * file and line, every round is a reply in that review thread (never on the conversation), answers
 * come from the thread or from the conversation, a reply that landed despite an error is not
 * posted again, and {@code agentx sync} rebuilds the record with its line from the thread.
 */
class ReviewQuestionsTest {
    static final int PULL = 2;
    static final String THREAD_REPLIES = GitHubRig.API_REPO + "/pulls/" + PULL + "/comments/\\d+/replies";
    static final String REVIEW_COMMENTS = GitHubRig.API_REPO + "/pulls/" + PULL + "/comments";
    @TempDir
    Path dir;
    MutableClock clock;
    GitHubRig rig;

    @BeforeEach
    void start() {
        clock = MutableClock.at("2026-02-26T10:00:00Z");
        rig = new GitHubRig(dir.resolve("data"), clock);
        rig.start();
    }

    @AfterEach
    void tearDown() {
        rig.close();
    }

    private ObjectNode reviewComment(String login, long id, long inReplyTo, String body) {
        return rig.reviewComment(login, PULL, id, inReplyTo, body);
    }

    /** The replies posted in review threads: the thread's comment id and the body, in order. */
    private List<String[]> replies() {
        return rig.requests("POST", THREAD_REPLIES).stream().map(r -> new String[] {
                r.getUrl().replaceAll(".*/comments/(\\d+)/replies.*", "$1"), body(r)}).toList();
    }

    private String body(LoggedRequest r) {
        try {
            return rig.json.readTree(r.getBodyAsString()).path("body").asText();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private ClarificationRecord record() {
        return rig.ledger(PULL).clarifications().get(0);
    }

    @Test
    void aQuestionOnALineKeepsItsPlaceAndEveryRoundIsAReplyInItsThread() throws Exception {
        // GitHub's example: README.md, line 265, the new side
        assertEquals(202, rig.deliver("pull_request_review_comment",
                reviewComment("eng", 284312630L, 0, "/clarify @architect Should this read from the cache?")).status());
        ClarificationRecord r = record();
        assertEquals("CLR-2-001", r.id());
        assertEquals(new CodeLine("README.md", 265, null, "RIGHT", 284312630L), r.codeLine());
        List<String[]> replies = replies();
        assertEquals(1, replies.size());
        assertEquals("284312630", replies.get(0)[0], "posted in the question's thread");
        String question = replies.get(0)[1];
        assertTrue(question.startsWith("<!-- agentx-effect:"), question);
        assertTrue(question.contains("**Clarification CLR-2-001**") && question.contains("On the code: *README.md:265*"),
                question);
        assertEquals(r.codeLine(), Marker.parse(question).orElseThrow().record().codeLine(), "the marker carries it");
        assertEquals(List.of(), rig.comments(PULL), "nothing on the conversation");
        assertEquals(0, rig.reactions().size(), "a review comment gets a reply, not a reaction");

        // answered in the thread (a reply names the thread's first comment), with the protocol's short form
        rig.deliver("pull_request_review_comment", reviewComment("arch", 284312631L, 284312630L,
                "/clarify answer Yes, for five minutes."));
        assertEquals(Status.ANSWERED, record().status());
        // a follow-up and its answer from the conversation: still posted in the thread
        rig.deliver("issue_comment", rig.comment("eng", PULL, "/clarify followup CLR-2-001 And when it is cold?"));
        rig.deliver("issue_comment", rig.comment("arch", PULL, "/clarify answer CLR-2-001 Read through."));
        rig.deliver("issue_comment", rig.comment("eng", PULL, "/clarify resolve CLR-2-001 Cache, read through."));
        assertEquals(Status.RESOLVED, record().status());
        replies = replies();
        assertEquals(5, replies.size(), "question, answer, follow-up, answer, resolution");
        assertTrue(replies.stream().allMatch(x -> x[0].equals("284312630")), "all in the first comment's thread");
        assertTrue(replies.get(1)[1].contains("Yes, for five minutes.") && replies.get(3)[1].contains("Read through."),
                replies.get(3)[1]);
        assertEquals(List.of(), rig.comments(PULL), "nothing on the conversation");
        assertEquals(new CodeLine("README.md", 265, null, "RIGHT", 284312630L), record().codeLine(), "kept");

        // agentx sync rebuilds the ledger, line and all, from the thread's replies
        Path ledger = rig.data.resolve("repos/186853002/.agentx/state/clarifications/issue-2.json");
        byte[] original = Files.readAllBytes(ledger);
        assertTrue(new String(original, java.nio.charset.StandardCharsets.UTF_8).contains("\"codeLine\""));
        rig.mode().close();
        serveToSync(replies.stream().map(x -> x[1]).toList());
        Files.delete(ledger);
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int code = Main.run(new String[] {"sync", "--repo", "Codertocat/Hello-World", "--issue", "2", "--write"},
                new PrintWriter(out), new PrintWriter(err), Map.of("GITHUB_APP_ID", String.valueOf(GitHubRig.APP_ID),
                        "GITHUB_APP_PRIVATE_KEY", Keys.pkcs1Pem(), "GITHUB_API_URL", rig.wiremock.baseUrl(),
                        "AGENTX_DATA_DIR", rig.data.toString()), dir, clock, false, ctx -> {
                    throw new AssertionError("sync needs no Local Mode root");
                });
        assertEquals(0, code, out + "\n" + err + rig.wiremock.findAllUnmatchedRequests().stream()
                .map(x -> x.getMethod() + " " + x.getUrl()).toList());
        assertEquals(new String(original, java.nio.charset.StandardCharsets.UTF_8), Files.readString(ledger),
                "rebuilt exactly, the line of code with it");
    }

    /** GitHub as sync sees pull request 2: no comments on its conversation, {@code replies} in its review thread. */
    private void serveToSync(List<String> replies) {
        rig.serveToSync(Map.of(PULL, List.of()));
        rig.wiremock.stubFor(get(urlPathEqualTo(GitHubRig.API_REPO + "/issues/" + PULL)).atPriority(1).willReturn(okJson(
                "{\"id\":102,\"number\":2,\"comments\":0,\"pull_request\":{\"url\":\"" + rig.wiremock.baseUrl()
                        + GitHubRig.API_REPO + "/pulls/2\"}}")));
        ArrayNode list = rig.json.createArrayNode();
        // the person's comments of the thread first, as GitHub lists them: not the app's, so never trusted
        list.addObject().put("id", 284312630L).put("body", "/clarify @architect Should this read from the cache?")
                .putObject("user").put("login", "eng").put("type", "User");
        long id = 95_000;
        for (String body : replies) {
            ObjectNode c = list.addObject();
            c.put("id", id++);
            c.put("body", body);
            c.put("in_reply_to_id", 284312630L);
            c.putObject("user").put("login", GitHubRig.APP_BOT).put("type", "Bot");
        }
        rig.wiremock.stubFor(get(urlPathEqualTo(REVIEW_COMMENTS)).atPriority(1).willReturn(okJson(list.toString())));
    }

    @Test
    void aReplyThatLandedDespiteAnErrorIsFoundByItsTagAndNotPostedAgain() {
        rig.wiremock.stubFor(post(urlPathMatching(THREAD_REPLIES)).atPriority(1).inScenario("outage")
                .whenScenarioStateIs(Scenario.STARTED).willReturn(aResponse().withStatus(502)
                        .withHeader("Content-Type", "application/json").withBody("{\"message\":\"bad gateway\"}"))
                .willSetStateTo("up"));
        rig.deliver("pull_request_review_comment", reviewComment("eng", 284312640L, 0, "/clarify @architect Why sync?"));
        assertEquals(1, replies().size());
        String first = replies().get(0)[1];
        // it landed all the same: the pull request's review comments show it
        rig.wiremock.stubFor(get(urlPathEqualTo(REVIEW_COMMENTS)).atPriority(1).willReturn(okJson(
                "[{\"id\":91000,\"in_reply_to_id\":284312640,\"body\":" + rig.json.valueToTree(first) + "}]")));
        clock.advance(Duration.ofSeconds(11));
        rig.deliver("ping", rig.fixture("ping.with-app_id"));
        rig.mode().drain();
        assertEquals(1, replies().size(), "not posted again");
        List<LoggedRequest> looked = rig.requests("GET", REVIEW_COMMENTS);
        assertEquals(1, looked.size());
        assertTrue(looked.get(0).getUrl().contains("since="), looked.get(0).getUrl());
        assertEquals(0, rig.mode().pendingEffects());
    }

    @Test
    void aRefusedCommandInReviewIsAnsweredInItsThread() {
        rig.deliver("pull_request_review_comment", reviewComment("stranger", 284312650L, 0,
                "/clarify @architect Who am I?"));
        assertTrue(!rig.hasLedger(PULL) || rig.ledger(PULL).clarifications().isEmpty());
        List<String[]> replies = replies();
        assertEquals(1, replies.size());
        assertEquals("284312650", replies.get(0)[0]);
        assertEquals(List.of(), rig.comments(PULL));
    }

    @Test
    void aQuestionOnAWholeFileOrOnSeveralLinesKeepsWhatTheCommentSays() {
        ObjectNode p = reviewComment("eng", 284312660L, 0, "/clarify @architect --non-blocking Split this file?");
        ObjectNode c = (ObjectNode) p.get("comment");
        c.put("start_line", 260);
        c.put("line", 265);
        rig.deliver("pull_request_review_comment", p);
        assertEquals(new CodeLine("README.md", 265, 260, "RIGHT", 284312660L), record().codeLine());
        assertTrue(replies().get(0)[1].contains("README.md:260-265"), replies().get(0)[1]);

        // outdated: no line on the current diff, the original one kept
        ObjectNode q = reviewComment("eng", 284312661L, 0, "/clarify @architect Still needed?");
        ((ObjectNode) q.get("comment")).putNull("line");
        ((ObjectNode) q.get("comment")).put("original_line", 12);
        rig.deliver("pull_request_review_comment", q);
        JsonNode second = rig.json.valueToTree(rig.ledger(PULL).clarifications().get(1).codeLine());
        assertEquals(12, second.path("line").asInt());
        assertNull(rig.ledger(PULL).clarifications().get(1).codeLine().startLine());
    }
}
