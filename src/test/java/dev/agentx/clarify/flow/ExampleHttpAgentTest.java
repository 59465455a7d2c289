package dev.agentx.clarify.flow;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.agentx.clarify.app.LocalMode;
import dev.agentx.clarify.protocol.Status;
import dev.agentx.clarify.routing.ClarifyCommand;
import dev.agentx.clarify.routing.Outcome;
import dev.agentx.clarify.support.ChannelRoot;
import dev.agentx.clarify.support.MutableClock;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * examples/agents/HttpAgent.java, run as docs/answer-channels.md says, answers the hub over http
 * with a verified signature.
 */
class ExampleHttpAgentTest {
    @TempDir
    Path dir;

    @Test
    void theExampleHttpAgentAnswersSignedRequestsAndRefusesWrongSignatures() throws Exception {
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        ProcessBuilder pb = new ProcessBuilder(java, "examples/agents/HttpAgent.java", "0")
                .redirectError(ProcessBuilder.Redirect.INHERIT);
        pb.environment().put("AGENT_SECRET", "s3cret");
        Process agent = pb.start();
        try {
            BufferedReader out = new BufferedReader(new InputStreamReader(agent.getInputStream(), StandardCharsets.UTF_8));
            String line = out.readLine();
            assertTrue(line != null && line.startsWith("listening on "), "agent said: " + line);
            int port = Integer.parseInt(line.substring("listening on ".length()).trim());

            ChannelRoot root = new ChannelRoot(dir, MutableClock.at("2026-02-26T10:00:00Z"));
            root.config("""
                    [agents.product-manager]
                    channel = "http"
                    url = "http://127.0.0.1:%d/answer"
                    secret_env = "PM_AGENT_SECRET"
                    timeout_seconds = 20
                    """.formatted(port));
            root.env.put("PM_AGENT_SECRET", "s3cret");
            LocalMode local = root.local();
            Outcome o = ask(local, "When is the release deadline?");
            assertEquals(Status.ANSWERED, o.record().status(), o.notes().toString());
            assertEquals("The beta ships at the end of the quarter.", o.record().lastAnswer().orElseThrow().body());

            Outcome unsure = ask(local, "Which colour should the logo be?");
            assertEquals(Status.PENDING, unsure.record().status());
            assertTrue(unsure.notes().get(0).startsWith("No answer from product-manager: "), unsure.notes().toString());
            assertTrue(unsure.notes().get(0).contains("cannot answer: no product decision on this yet"),
                    unsure.notes().toString());

            root.env.put("PM_AGENT_SECRET", "not-the-secret");
            Outcome forged = ask(root.local(), "When is the release deadline?");
            assertEquals(Status.PENDING, forged.record().status());
            assertTrue(forged.notes().get(0).contains("HTTP 401"), forged.notes().toString());
        } finally {
            agent.destroy();
            agent.waitFor(10, TimeUnit.SECONDS);
        }
    }

    private static Outcome ask(LocalMode local, String question) {
        return local.engine().execute(new ClarifyCommand.Ask(9, "engineer", "product-manager", null, question, true,
                List.of(), null));
    }
}
