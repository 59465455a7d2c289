package dev.agentx.clarify.github.contract;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.agentx.clarify.github.support.GitHubContract;
import org.junit.jupiter.api.Test;

/** The contract check itself: what GitHub documents passes, a path or a body it does not document fails. */
class GitHubContractTest {
    private final GitHubContract contract = new GitHubContract();

    @Test
    void aDocumentedRequestPasses() {
        assertEquals("", contract.check("POST", "/repos/acme/widgets/issues/42/comments", "{\"body\":\"hi\"}"));
        assertEquals("", contract.check("GET", "/app/hook/deliveries?per_page=100", null));
        assertEquals("", contract.check("GET", "/repos/acme/widgets/contents/.github/agentx.toml", null),
                "a file's path with its slashes, as GitHub takes it");
        assertEquals("", contract.check("GET", "/orgs/acme/teams/architects/members?per_page=100&page=2", null));
    }

    @Test
    void theOAuthCodeExchangeIsHeldToWhatGitHubDocumentsOfIt() {
        assertEquals("", contract.check("POST", "/login/oauth/access_token",
                "client_id=Iv1.abc&client_secret=s&code=c&redirect_uri=http%3A%2F%2Fx%2Fdashboard%2Fcallback"));
        String missing = contract.check("POST", "/login/oauth/access_token", "client_id=Iv1.abc&code=c");
        assertTrue(missing.contains("oauth.body.missing: [client_secret]"), missing);
        String unknown = contract.check("POST", "/login/oauth/access_token",
                "client_id=Iv1.abc&client_secret=s&code=c&scope=repo");
        assertTrue(unknown.contains("oauth.body.unknown: [scope]"), unknown);
        assertTrue(contract.check("GET", "/login/oauth/access_token?code=c", null).startsWith("oauth.method"));
        assertEquals("", contract.check("GET", "/login/oauth/authorize?client_id=Iv1.abc&redirect_uri=http%3A%2F%2Fx"
                + "&state=s&allow_signup=false", null));
        String noClient = contract.check("GET", "/login/oauth/authorize?state=s&colour=red", null);
        assertTrue(noClient.contains("oauth.body.missing: [client_id]") && noClient.contains("[colour]"), noClient);
    }

    @Test
    void theTeamByItsIdsIsNoPathGitHubDocuments() {
        String wrong = contract.check("GET", "/organizations/77/team/88/members?role=all", null);
        assertTrue(wrong.contains("validation.request.path.missing"), wrong);
    }

    @Test
    void aPathGitHubDoesNotDocumentFails() {
        String wrong = contract.check("POST", "/repos/acme/widgets/issue/42/comments", "{\"body\":\"hi\"}");
        assertTrue(wrong.contains("validation.request.path.missing"), wrong);
    }

    @Test
    void aBodyGitHubDoesNotDocumentFails() {
        String wrong = contract.check("POST", "/repos/acme/widgets/issues/comments/7/reactions",
                "{\"content\":\"applause\"}");
        assertTrue(wrong.contains("validation.request.body"), wrong);
        String missing = contract.check("POST", "/repos/acme/widgets/issues/42/comments", "{\"text\":\"hi\"}");
        assertTrue(missing.contains("validation.request.body"), missing);
    }

    @Test
    void theReviewThreadRequestsAreDocumented() {
        assertEquals("", contract.check("POST", "/repos/acme/widgets/pulls/2/comments/284312630/replies",
                "{\"body\":\"hi\"}"));
        assertEquals("", contract.check("GET", "/repos/acme/widgets/pulls/2/comments?since=2026-02-26T09%3A59%3A00Z"
                + "&per_page=100&page=1", null));
        assertEquals("", contract.check("DELETE", "/repos/acme/widgets/pulls/comments/90001", null));
        String wrong = contract.check("POST", "/repos/acme/widgets/pulls/2/comments/284312630/replies",
                "{\"body\":\"hi\",\"in_reply_to\":5}");
        assertTrue(wrong.contains("validation.request.body"), wrong);
    }
}
