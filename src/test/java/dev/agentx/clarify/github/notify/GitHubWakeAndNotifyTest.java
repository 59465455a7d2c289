package dev.agentx.clarify.github.notify;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.agentx.clarify.channel.Signatures;
import dev.agentx.clarify.cli.Main;
import dev.agentx.clarify.github.support.GitHubRig;
import dev.agentx.clarify.metrics.ServerMetrics;
import dev.agentx.clarify.protocol.Status;
import dev.agentx.clarify.support.MutableClock;
import dev.agentx.clarify.support.TestReceiver;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * GitHub Mode end to end (WireMock as GitHub, GitHub's payloads, the real server): a whole
 * conversation with an escalation a maintainer decides wakes the asking agent in exactly the
 * comments that settle its question, notifies a real receiver of every event once, signed; the
 * App's own comment, mention and all, makes it do nothing; a repository's receiver on the server's
 * own network is refused and gets nothing.
 */
class GitHubWakeAndNotifyTest {
    @TempDir
    Path dir;
    private final MutableClock clock = MutableClock.at("2026-02-26T10:00:00Z");
    private GitHubRig rig;
    private final TestReceiver receiver = TestReceiver.started();

    @AfterEach
    void close() {
        if (rig != null) {
            rig.close();
        }
        receiver.close();
    }

    private void say(String login, String body) {
        GitHubRig.Response r = rig.deliver("issue_comment", rig.comment(login, 1, body));
        assertEquals(202, r.status(), r.body());
        clock.advance(Duration.ofMinutes(1));
    }

    @Test
    void aConversationWakesTheAskerInExactlyTheSettlingCommentsAndNotifiesEveryEventOnce() throws Exception {
        rig = new GitHubRig(dir.resolve("data"), clock);
        rig.writeConfig(GitHubRig.CONFIG + """
                [wake]
                engineer = "@copilot"

                [[notify]]
                url = "%s"
                secret = "s3cret"
                allow_private = true
                """.formatted(receiver.url()));
        rig.start();

        say("eng", "/clarify @architect JWT or sessions?");                       // question: no wake
        say("arch", "/clarify answer CLR-1-001 JWT. cc @copilot");                 // answer: wake
        say("eng", "/clarify followup CLR-1-001 Which library?");                 // question: no wake
        say("arch", "/clarify answer CLR-1-001 jjwt");                            // answer: wake
        say("eng", "/clarify escalate CLR-1-001 We disagree on the library");     // escalation: no wake
        say("boss", "/clarify resolve CLR-1-001 Decision: JWT with jjwt");        // a maintainer decides: wake
        say("eng", "/clarify @architect Cache or not?");                          // CLR-1-002
        say("eng", "/clarify resolve CLR-1-002 Not needed after all");            // the asker's own: no wake
        say("eng", "/clarify @pm Is SSO in scope?");                              // CLR-1-003
        assertEquals(202, rig.deliver("issues", rig.issueEvent("closed", "writer", 1)).status()); // abandons: wake

        assertEquals(Status.RESOLVED, rig.ledger(1).find("CLR-1-001").orElseThrow().status());
        assertEquals(Status.ABANDONED, rig.ledger(1).find("CLR-1-003").orElseThrow().status());
        List<String> comments = rig.comments(1);
        List<String> woken = new ArrayList<>();
        for (String c : comments) {
            int mentions = c.split("@copilot", -1).length - 1;
            if (mentions > 0) {
                assertEquals(1, mentions, "one mention per comment: " + c);
                String visible = c.substring(0, c.lastIndexOf("<!-- agentx:")).strip();
                String last = visible.substring(visible.lastIndexOf('\n') + 1);
                assertTrue(last.startsWith("@copilot CLR-1-00"), "the last line wakes: " + c);
                woken.add(last);
            }
        }
        assertEquals(List.of(
                "@copilot CLR-1-001 was answered by **architect** (round 1): the answer is quoted above; follow up or "
                        + "resolve it.",
                "@copilot CLR-1-001 was answered by **architect** (round 2): the answer is quoted above; follow up or "
                        + "resolve it.",
                "@copilot CLR-1-001 was escalated and **boss** decided it: the decision is quoted above.",
                "@copilot CLR-1-003 was abandoned by **writer**: no answer will come; the reason is quoted above."),
                woken);
        assertTrue(comments.stream().anyMatch(c -> c.contains("> JWT. cc @&#8203;copilot")),
                "the answerer's own mention stays neutralised");

        // every event once, in order, signed; one delivery id each
        List<String> events = new ArrayList<>();
        List<String> ids = new ArrayList<>();
        for (TestReceiver.Request q : receiver.requests) {
            assertTrue(Signatures.verify("s3cret", q.body(), q.header("X-AgentX-Signature-256")), q.text());
            JsonNode b = rig.json.readTree(q.body());
            assertEquals(q.header("X-AgentX-Event"), b.get("event").asText());
            events.add(b.get("event").asText() + " " + b.get("clarification").get("id").asText());
            ids.add(q.header("X-AgentX-Delivery"));
        }
        assertEquals(List.of("asked CLR-1-001", "answered CLR-1-001", "asked CLR-1-001", "answered CLR-1-001",
                "escalated CLR-1-001", "resolved CLR-1-001", "asked CLR-1-002", "resolved CLR-1-002",
                "asked CLR-1-003", "abandoned CLR-1-003"), events);
        assertEquals(ids.size(), ids.stream().distinct().count());
        JsonNode decided = rig.json.readTree(receiver.requests.get(5).body());
        assertEquals("Decision: JWT with jjwt", decided.get("entry").get("text").asText());
        assertEquals("boss", decided.get("entry").get("by").asText());
        assertTrue(decided.get("comment_url").asText().matches(".*/Codertocat/Hello-World/issues/1#issuecomment-\\d+"),
                decided.toString());

        // the App's own comment comes back as a webhook: mention and all, it does nothing
        int posted = comments.size();
        int notified = receiver.requests.size();
        ObjectNode own = rig.comment(GitHubRig.APP_BOT, 1, woken.get(0) + "\n/clarify @architect Again?");
        ((ObjectNode) own.get("comment")).putObject("performed_via_github_app").put("id", GitHubRig.APP_ID);
        assertEquals(202, rig.deliver("issue_comment", own).status());
        ObjectNode quoted = rig.comment("Copilot", 1, comments.get(1));
        assertEquals(202, rig.deliver("issue_comment", quoted).status());
        rig.mode().drain();
        assertEquals(posted, rig.comments(1).size(), "no reply, no comment: no loop");
        assertEquals(notified, receiver.requests.size());
        assertEquals(3, rig.ledger(1).clarifications().size());
    }

    @Test
    void aRepositorysReceiverOnTheServersNetworkIsRefusedAndGetsNothing() throws Exception {
        rig = new GitHubRig(dir.resolve("data"), clock);
        rig.serveRepoConfig("sha-1", "[[notify]]\nurl = \"" + receiver.url() + "\"\n");
        rig.start();
        say("eng", "/clarify @architect JWT or sessions?");
        String report = rig.comments(1).get(0);
        assertTrue(report.contains("`.github/agentx.toml` on the default branch is not used"), report);
        assertTrue(report.contains("field 'notify.url' names 127.0.0.1, a loopback address"), report);

        rig.serveRepoConfig("sha-2", "[[notify]]\nurl = \"http://169.254.169.254/latest/meta-data/iam/\"\n");
        clock.advance(Duration.ofMinutes(2));
        say("eng", "/clarify @architect And sessions?");
        assertTrue(rig.comments(1).stream().anyMatch(c -> c.contains("names 169.254.169.254, a link-local address")),
                rig.comments(1).toString());

        // a name that resolves to the server's own host passes the file's check, and is refused when sent
        rig.serveRepoConfig("sha-3", "[[notify]]\nurl = \"http://localhost:" + receiver.port() + "/hook\"\n");
        clock.advance(Duration.ofMinutes(2));
        say("eng", "/clarify @architect And cookies?");
        rig.mode().drain();
        assertEquals(List.of(), receiver.requests, "nothing reached the receiver");
        assertEquals(1, rig.mode().metrics().counterValue(ServerMetrics.NOTIFICATION_ATTEMPTS, "asked", "refused"));
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int code = Main.run(new String[] {"--json", "notifications", "--failed"}, new PrintWriter(out),
                new PrintWriter(err), Map.of("AGENTX_DATA_DIR", rig.data.toString()), dir, clock, false, c -> null);
        assertEquals(0, code, err.toString());
        JsonNode failed = rig.json.readTree(out.toString()).get("notifications").get(0);
        assertTrue(failed.get("lastError").asText().contains("resolves to 127.0.0.1, a loopback address"),
                failed.toString());
        assertEquals(1, failed.get("attempts").asInt(), "refused at once, not retried");
    }
}
