package dev.agentx.clarify.github;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.agentx.clarify.github.support.GitHubRig;
import dev.agentx.clarify.protocol.ClarificationRecord;
import dev.agentx.clarify.protocol.Status;
import dev.agentx.clarify.support.MutableClock;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Answer channels in GitHub Mode: options from a Markdown list, an agent's proposal, /clarify accept. */
class GitHubAnswerChannelsTest {
    @TempDir
    Path dir;
    GitHubRig rig;

    @AfterEach
    void tearDown() {
        if (rig != null) {
            rig.close();
        }
    }

    /**
     * A command agent runs whatever it was given (often a model reading the question) and what it
     * prints last on stderr is posted when it fails: it gets the server's environment without the
     * App's private key, webhook secret, OAuth client secret and database URL.
     */
    @Test
    void aCommandAgentGetsTheServersEnvironmentWithoutTheAppsSecrets() throws Exception {
        Path seen = dir.resolve("agent-env.txt");
        Map<String, String> env = new HashMap<>(System.getenv());
        env.put("GITHUB_APP_PRIVATE_KEY", "-----BEGIN RSA PRIVATE KEY-----secret-key");
        env.put("GITHUB_WEBHOOK_SECRET", "secret-webhook");
        env.put("GITHUB_CLIENT_SECRET", "secret-client");
        env.put("AGENTX_DATABASE_URL", "postgresql://agentx:secret-password@db/agentx");
        env.put("ARCHITECT_MODEL_TOKEN", "the-agents-own");
        rig = new GitHubRig(dir.resolve("data"), MutableClock.at("2026-02-26T10:00:00Z")).configuredChannels()
                .environment(env);
        rig.writeConfig(GitHubRig.CONFIG + """

                [agents.architect]
                channel = "command"
                command = ["sh", "-c", "env > '%s'; echo Sessions"]
                """.formatted(seen));
        rig.start();
        assertEquals(202, rig.deliver("issue_comment", rig.comment("eng", 1, "/clarify @architect Which auth?"))
                .status());
        assertEquals(Status.ANSWERED, rig.ledger(1).clarifications().get(0).status());
        String agentEnv = Files.readString(seen);
        assertTrue(agentEnv.contains("ARCHITECT_MODEL_TOKEN=the-agents-own"), agentEnv);
        assertTrue(agentEnv.contains("AGENTX_CLARIFICATION_ID=CLR-1-001"), agentEnv);
        for (String name : List.of("GITHUB_APP_PRIVATE_KEY", "GITHUB_WEBHOOK_SECRET", "GITHUB_CLIENT_SECRET",
                "AGENTX_DATABASE_URL")) {
            assertTrue(!agentEnv.contains(name + "="), name + " handed to the agent: " + agentEnv);
        }
        assertTrue(!agentEnv.contains("secret-"), agentEnv);
    }

    @Test
    void anAgentsProposalUnderApproveIsPostedAndAcceptedByComment() {
        rig = new GitHubRig(dir.resolve("data"), MutableClock.at("2026-02-26T10:00:00Z")).configuredChannels();
        rig.writeConfig("autonomy = \"approve\"\n" + GitHubRig.CONFIG + """

                [agents.architect]
                channel = "auto"
                """);
        rig.start();
        assertEquals(202, rig.deliver("issue_comment", rig.comment("eng", 1, """
                /clarify @architect Which auth method?
                - JWT
                - Sessions (default)
                """)).status());
        ClarificationRecord r = rig.ledger(1).clarifications().get(0);
        assertEquals("Which auth method?", r.thread().get(0).body(), "the list became options");
        assertEquals(List.of("JWT", "Sessions (default)"), r.options());
        assertEquals(Status.PENDING, r.status(), "a proposal waits for a person");
        assertTrue(r.pendingProposal().isPresent());
        assertEquals(1, r.pendingProposal().get().choice());

        String proposal = rig.comments(1).get(1);
        assertTrue(proposal.contains("proposed answer to round 1"), proposal);
        assertTrue(proposal.contains("@arch @acme/architects - please review this proposed answer."), proposal);

        assertEquals(202, rig.deliver("issue_comment", rig.comment("eng", 1, "/clarify accept CLR-1-001")).status());
        r = rig.ledger(1).clarifications().get(0);
        assertEquals(Status.ANSWERED, r.status());
        assertEquals("eng", r.lastAnswer().orElseThrow().acceptedBy());
        List<String> comments = rig.comments(1);
        assertTrue(comments.get(0).contains("1. *JWT*"), comments.get(0));
        assertTrue(comments.stream().anyMatch(c -> c.contains("\"kind\":\"answer\"")), comments.toString());

        // someone in neither role, and not a maintainer, may not accept
        assertEquals(202, rig.deliver("issue_comment", rig.comment("rev", 1, "/clarify accept CLR-1-001")).status());
        String reply = rig.comments(1).get(rig.comments(1).size() - 1);
        assertTrue(reply.contains("may accept the proposed answer of CLR-1-001"), reply);
    }
}
