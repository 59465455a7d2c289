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
