package dev.agentx.clarify.reliability;

import com.fasterxml.jackson.databind.JsonNode;
import dev.agentx.clarify.github.inbox.DeliveryProcessor;
import dev.agentx.clarify.github.support.GitHubRig;
import dev.agentx.clarify.protocol.ClarificationRecord;
import dev.agentx.clarify.protocol.Status;
import dev.agentx.clarify.store.DeliveryQueue.Progress;
import dev.agentx.clarify.store.InboundDelivery;
import dev.agentx.clarify.support.MutableClock;
import java.nio.file.Path;
import java.util.List;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A delivery's command is written to the ledger, then the process dies before the delivery's
 * progress note is recorded; the attempt after the restart starts from no progress and carries the
 * command out again. The command's key (the delivery and its place in it) is in the ledger entry
 * it wrote, so the second run changes nothing and replies as the first would have.
 */
class CommandRerunTest {
    @TempDir
    Path dir;

    /** The process dying at the progress note. */
    private static final class Died extends RuntimeException {
        Died() {
            super("the process died before recording progress");
        }
    }

    private static final Consumer<Progress> DIES = p -> {
        throw new Died();
    };

    private static void runTwice(GitHubRig rig, String event, JsonNode payload, String id) {
        DeliveryProcessor handler = rig.mode().deliveryProcessor();
        InboundDelivery d = new InboundDelivery(id, event, rig.clock.instant(), rig.bytes(payload));
        assertThrows(Died.class, () -> handler.prepare(d, payload).apply(Progress.NONE, DIES));
        handler.prepare(d, payload).apply(Progress.NONE, p -> { }).run();
        rig.mode().drain();
    }

    @Test
    void anAskCarriedOutAgainOpensNoSecondClarification() {
        try (GitHubRig rig = new GitHubRig(dir.resolve("data"), MutableClock.at("2026-02-26T10:00:00Z"))) {
            rig.start();
            JsonNode ask = rig.comment("eng", 1, "/clarify @architect JWT or sessions?");
            runTwice(rig, "issue_comment", ask, "d-ask");
            List<ClarificationRecord> records = rig.ledger(1).clarifications();
            assertEquals(1, records.size(), records.toString());
            assertEquals("comment/" + ask.path("comment").path("id").asLong() + "/0",
                    records.get(0).thread().get(0).request());
            List<String> replies = rig.comments(1).stream().filter(c -> c.contains("CLR-1-")).toList();
            assertTrue(replies.stream().noneMatch(c -> c.contains("CLR-1-002")), replies.toString());
            assertTrue(rig.comments(1).stream().noneMatch(c -> c.contains("refused") || c.contains("INVALID_STATE")),
                    rig.comments(1).toString());
        }
    }

    @Test
    void anAnswerWithoutIdCarriedOutAgainIsNotRefused() {
        try (GitHubRig rig = new GitHubRig(dir.resolve("data"), MutableClock.at("2026-02-26T10:00:00Z"))) {
            rig.start();
            assertEquals(202, rig.deliver("issue_comment", rig.comment("eng", 2, "/clarify @architect Which DB?")).status());
            runTwice(rig, "issue_comment", rig.comment("arch", 2, "/clarify answer PostgreSQL"), "d-answer");
            ClarificationRecord r = rig.ledger(2).clarifications().get(0);
            assertEquals(Status.ANSWERED, r.status());
            assertEquals(1, r.thread().stream().filter(e -> e.isAnswer()).count(), r.thread().toString());
            assertTrue(rig.comments(2).stream().noneMatch(c -> c.contains("INVALID_STATE") || c.contains("NOT_FOUND")
                    || c.contains("Nothing waits")), rig.comments(2).toString());
        }
    }

    @Test
    void aFollowUpPastTheLimitCarriedOutAgainIsRefusedAgainAndEscalatedOnce() {
        try (GitHubRig rig = new GitHubRig(dir.resolve("data"), MutableClock.at("2026-02-26T10:00:00Z"))) {
            rig.writeConfig(GitHubRig.CONFIG);
            rig.start();
            rig.deliver("issue_comment", rig.comment("eng", 3, "/clarify @architect Q1?"));
            for (int round = 1; round < 5; round++) {
                rig.deliver("issue_comment", rig.comment("arch", 3, "/clarify answer CLR-3-001 A" + round));
                rig.deliver("issue_comment", rig.comment("eng", 3, "/clarify followup CLR-3-001 Q" + (round + 1) + "?"));
            }
            rig.deliver("issue_comment", rig.comment("arch", 3, "/clarify answer CLR-3-001 A5"));
            runTwice(rig, "issue_comment", rig.comment("eng", 3, "/clarify followup CLR-3-001 Q6?"), "d-limit");
            ClarificationRecord r = rig.ledger(3).clarifications().get(0);
            assertEquals(Status.ESCALATED, r.status());
            assertEquals(1, r.thread().stream().filter(e -> e.type().wire().equals("escalation")).count());
            List<String> refusals = rig.comments(3).stream().filter(c -> c.contains("MAX_ROUNDS_EXCEEDED")).toList();
            assertEquals(1, refusals.size(), rig.comments(3).toString());
            assertFalse(rig.comments(3).stream().anyMatch(c -> c.contains("INVALID_STATE")), rig.comments(3).toString());
        }
    }
}
