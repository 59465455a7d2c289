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
}
