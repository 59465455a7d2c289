package dev.agentx.clarify.github;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.agentx.clarify.github.support.GitHubRig;
import dev.agentx.clarify.protocol.Status;
import dev.agentx.clarify.support.MutableClock;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The real monitor in GitHub Mode: it runs on every delivered event and its actions are posted. */
class GitHubMonitorTest {
    @TempDir
    Path dir;
    GitHubRig rig;

    @AfterEach
    void tearDown() {
        if (rig != null) {
            rig.close();
        }
    }

    @Test
    void aStaleQuestionGetsANoticeThenEscalatesOnTheSecondTimeout() {
        MutableClock clock = MutableClock.at("2026-02-26T10:00:00Z");
        rig = new GitHubRig(dir.resolve("data"), clock).monitor(RepositoryMonitor.STANDARD);
        rig.start();
        assertEquals(202, rig.deliver("issue_comment", rig.comment("eng", 1, "/clarify @architect Which DB?")).status());
        assertEquals(1, rig.comments(1).size());

        // past the 30 min SLA: the next delivered event (any, here a comment on another issue) runs the monitor
        clock.advance(Duration.ofMinutes(31));
        assertEquals(202, rig.deliver("issue_comment", rig.comment("rev", 2, "unrelated")).status());
        assertEquals(Status.STALE, rig.ledger(1).clarifications().get(0).status());
        List<String> comments = rig.comments(1);
        assertEquals(2, comments.size(), comments.toString());
        assertTrue(comments.get(1).contains("\"kind\":\"stale\""), comments.get(1));
        assertTrue(comments.get(1).contains("@arch"), "the target role is mentioned: " + comments.get(1));

        // the monitor runs again on the next event without acting twice
        assertEquals(202, rig.deliver("issue_comment", rig.comment("rev", 2, "still unrelated")).status());
        assertEquals(2, rig.comments(1).size());

        // a second timeout escalates, and the escalation is posted with the summary
        clock.advance(Duration.ofMinutes(31));
        assertEquals(202, rig.deliver("issue_comment", rig.comment("rev", 2, "later")).status());
        assertEquals(Status.ESCALATED, rig.ledger(1).clarifications().get(0).status());
        String escalation = rig.comments(1).get(rig.comments(1).size() - 1);
        assertTrue(escalation.contains("\"kind\":\"escalation\""), escalation);
        assertTrue(escalation.contains("Escalated: stale"), escalation);
    }
}
