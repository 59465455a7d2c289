package dev.agentx.clarify.github.notify;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.agentx.clarify.github.GitHubMode;
import dev.agentx.clarify.github.support.GitHubRig;
import dev.agentx.clarify.support.MutableClock;
import dev.agentx.clarify.support.TestPostgres;
import dev.agentx.clarify.support.TestReceiver;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Two replicas on one PostgreSQL database, the conversation's deliveries going to one or the other:
 * the receiver gets each notification once, whichever replica applied the change; one that a
 * replica queued and could not send before it stopped is sent, once, by the other.
 */
@Tag("postgres")
class NotifyAcrossReplicasTest {
    @TempDir
    Path dir;
    private final MutableClock clock = MutableClock.at("2026-02-26T10:00:00Z");
    private final TestReceiver receiver = TestReceiver.down();
    private final List<GitHubRig> rigs = new ArrayList<>();

    @AfterEach
    void close() {
        rigs.forEach(GitHubRig::close);
        receiver.close();
    }

    private GitHubRig rig(String db, String data) {
        GitHubRig rig = new GitHubRig(dir.resolve(data), clock).database(db);
        rig.writeConfig(GitHubRig.CONFIG + """
                [wake]
                engineer = "@copilot"

                [[notify]]
                url = "%s"
                allow_private = true
                """.formatted(receiver.url()));
        rigs.add(rig);
        return rig;
    }

    private List<String> received() throws Exception {
        List<String> out = new ArrayList<>();
        for (TestReceiver.Request q : receiver.requests) {
            JsonNode b = rigs.get(0).json.readTree(q.body());
            out.add(b.get("event").asText() + " " + b.get("clarification").get("round").asInt());
        }
        return out;
    }

    @Test
    void eachNotificationReachesTheReceiverOnceWhicheverReplicaAppliedTheChange() throws Exception {
        receiver.start();
        String db = TestPostgres.newDatabase().url();
        GitHubRig rig = rig(db, "data-a");
        rig.start();
        GitHubMode other = rig.startReplica(dir.resolve("data-b"));
        String[][] conversation = {
                {"a", "eng", "/clarify @architect JWT or sessions?"},
                {"b", "arch", "/clarify answer CLR-1-001 JWT"},
                {"a", "eng", "/clarify followup CLR-1-001 Which library?"},
                {"b", "arch", "/clarify answer CLR-1-001 jjwt"},
                {"a", "eng", "/clarify escalate CLR-1-001 We disagree"},
                {"b", "boss", "/clarify resolve CLR-1-001 JWT with jjwt"}};
        int n = 0;
        for (String[] step : conversation) {
            GitHubMode to = step[0].equals("a") ? rig.mode() : other;
            assertEquals(202, rig.deliverTo(to, "issue_comment", rig.comment(step[1], 1, step[2]), "r-" + n++).status());
            clock.advance(Duration.ofMinutes(1));
        }
        rig.mode().drain();
        other.drain();
        assertEquals(List.of("asked 1", "answered 1", "asked 2", "answered 2", "escalated 2", "resolved 2"),
                received());
        assertEquals(6, receiver.deliveries().stream().distinct().count());
        long woken = rig.comments(1).stream().filter(c -> c.contains("\n@copilot CLR-1-001")).count();
        assertEquals(3, woken, "two answers and the maintainer's decision, each posted once by one replica");
    }

    @Test
    void aNotificationAReplicaCouldNotSendBeforeItStoppedIsSentOnceByAnother() throws Exception {
        String db = TestPostgres.newDatabase().url();
        GitHubRig stays = rig(db, "data-stays");
        stays.start();
        GitHubRig gone = rig(db, "data-gone");
        gone.start();
        assertEquals(202, gone.deliver("issue_comment", gone.comment("eng", 1, "/clarify @architect Which DB?"))
                .status());
        assertEquals(List.of(), receiver.requests, "the receiver is down: queued, claimed, not sent");
        gone.close(); // stops for good: its claims are taken over at once

        receiver.start();
        stays.mode().drain(); // the other replica's tick
        stays.mode().drain();
        assertEquals(List.of("asked 1"), received());
        clock.advance(Duration.ofHours(1));
        stays.mode().drain();
        assertEquals(1, receiver.requests.size(), "once");
        assertTrue(receiver.requests.get(0).header("X-AgentX-Delivery") != null);
    }
}
