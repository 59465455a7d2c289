package dev.agentx.clarify.github.api;

import static com.github.tomakehurst.wiremock.client.WireMock.aResponse;
import static com.github.tomakehurst.wiremock.client.WireMock.delete;
import static com.github.tomakehurst.wiremock.client.WireMock.deleteRequestedFor;
import static com.github.tomakehurst.wiremock.client.WireMock.equalTo;
import static com.github.tomakehurst.wiremock.client.WireMock.get;
import static com.github.tomakehurst.wiremock.client.WireMock.getRequestedFor;
import static com.github.tomakehurst.wiremock.client.WireMock.okJson;
import static com.github.tomakehurst.wiremock.client.WireMock.urlPathEqualTo;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.agentx.clarify.github.GitHubSettings;
import dev.agentx.clarify.github.auth.AppJwt;
import dev.agentx.clarify.github.support.GitHubRig;
import dev.agentx.clarify.metrics.ServerMetrics;
import dev.agentx.clarify.support.MutableClock;
import java.nio.file.Path;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The calls the outbox makes when two replicas may have posted one comment: the ids of the
 * issue's comments carrying a tag, and the deletion of one, against GitHub's shapes.
 */
class CommentCopiesTest {
    private static final String COMMENTS = GitHubRig.API_REPO + "/issues/1/comments";
    private static final String TAG = "<!-- agentx-effect:0123456789abcdef0123456789abcdef -->";
    @TempDir
    Path dir;
    private final MutableClock clock = MutableClock.at("2026-11-29T10:00:00Z");
    private GitHubRig rig;
    private Hub4jGateway github;

    @BeforeEach
    void open() {
        rig = new GitHubRig(dir.resolve("data"), clock);
        GitHubSettings s = rig.settings();
        github = new Hub4jGateway(s.apiUrl(), new AppJwt(s.appId(), s.privateKey(), clock), clock,
                ServerMetrics.create());
    }

    @AfterEach
    void close() {
        rig.close();
    }

    /** A comment as GitHub lists it (the webhook fixture's comment), with {@code id} and {@code body}. */
    private ObjectNode comment(long id, String body) {
        ObjectNode c = ((ObjectNode) rig.fixture("issue_comment.created.with-installation").get("comment")).deepCopy();
        c.put("id", id);
        c.put("body", body);
        return c;
    }

    @Test
    void theCommentsCarryingATagAreListedOldestFirstSinceTheTimeGiven() {
        ArrayNode list = rig.json.createArrayNode();
        list.add(comment(902, TAG + "\nthe answer again"));
        list.add(comment(901, "someone else's"));
        list.add(comment(900, TAG + "\nthe answer"));
        rig.wiremock.stubFor(get(urlPathEqualTo(COMMENTS)).atPriority(1).willReturn(okJson(list.toString())));

        assertEquals(List.of(900L, 902L), github.commentsContaining(7, GitHubRig.REPO, 1, TAG,
                Instant.parse("2026-11-29T09:59:00Z")));
        rig.wiremock.verify(getRequestedFor(urlPathEqualTo(COMMENTS))
                .withQueryParam("since", equalTo("2026-11-29T09:59:00Z")));
    }

    @Test
    void aCommentIsDeletedWithTheInstallationsTokenAndAFailureSaysWhich() {
        String path = GitHubRig.API_REPO + "/issues/comments/902";
        rig.wiremock.stubFor(delete(urlPathEqualTo(path)).willReturn(aResponse().withStatus(204)));
        github.deleteComment(7, GitHubRig.REPO, 902);
        rig.wiremock.verify(deleteRequestedFor(urlPathEqualTo(path))
                .withHeader("Authorization", equalTo("token ghs_test_token")));

        rig.wiremock.stubFor(delete(urlPathEqualTo(GitHubRig.API_REPO + "/issues/comments/903"))
                .willReturn(aResponse().withStatus(404).withBody("{\"message\":\"Not Found\"}")));
        GitHubApiException e = assertThrows(GitHubApiException.class, () -> github.deleteComment(7, GitHubRig.REPO,
                903));
        assertEquals(404, e.status());
        assertEquals("delete comment 903 on Codertocat/Hello-World: HTTP 404 (not found, or the app lacks access)",
                e.getMessage());
    }
}
