package dev.agentx.clarify.github.outbox;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.agentx.clarify.github.RepoRef;
import dev.agentx.clarify.metrics.ServerMetrics;
import dev.agentx.clarify.support.MutableClock;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Effects go where their repository is at the moment they are sent, whatever it was called when
 * they were queued: a rename or a transfer since (same id, another name), a new installation; a
 * repository that may not be posted to holds its effects until it may again, or until GitHub's
 * retention is over.
 */
class OutboxDestinationsTest {
    private static final RepoRef QUEUED_AS = new RepoRef("acme", "widgets", 4242);
    private static final RepoRef NOW = new RepoRef("globex", "gadgets", 4242);
    private final MutableClock clock = MutableClock.at("2026-05-04T10:00:00Z");
    private final FlakyGitHub github = new FlakyGitHub();
    /** Where each repository (by id) is now; absent: where it was queued. */
    private final Map<Long, Destinations.Destination> where = new HashMap<>();
    @TempDir
    Path dir;

    private Outbox outbox() {
        Outbox outbox = new Outbox(dir.resolve("outbox"), github, clock, ServerMetrics.create());
        outbox.follow((installation, repo) -> where.getOrDefault(repo.id(), new Destinations.To(installation, repo)));
        return outbox;
    }

    private void queueOneOfEach(Outbox outbox, String tag) {
        outbox.enqueue(new Effect.Comment(tag + "/c", 7, QUEUED_AS, 1, "hello " + tag));
        outbox.enqueue(new Effect.Reaction(tag + "/r", 7, QUEUED_AS, 1, null, "+1"));
        outbox.enqueue(new Effect.Reaction(tag + "/rc", 7, QUEUED_AS, 1, 99L, "eyes"));
        outbox.enqueue(new Effect.AddLabels(tag + "/a", 7, QUEUED_AS, 1, List.of("blocked:clarification")));
        outbox.enqueue(new Effect.RemoveLabel(tag + "/d", 7, QUEUED_AS, 1, "blocked:clarification"));
        outbox.sync();
    }

    @Test
    void everyKindOfEffectGoesToTheRepositorysCurrentNameAndInstallation() {
        Outbox outbox = outbox();
        queueOneOfEach(outbox, "before");
        where.put(4242L, new Destinations.To(8, NOW)); // transferred and renamed, reached through installation 8
        assertEquals(5, outbox.flush().done());
        assertEquals(List.of("comment 8 globex/gadgets#1", "reactToIssue 8 globex/gadgets#1",
                "reactToComment 8 globex/gadgets#1", "addLabels 8 globex/gadgets#1",
                "removeLabel 8 globex/gadgets#1"), github.calls);
    }

    @Test
    void aHeldRepositoryKeepsItsEffectsUntilItMayBePostedToAgainOrTheyAreTooOld() {
        Outbox outbox = outbox();
        queueOneOfEach(outbox, "held");
        where.put(4242L, new Destinations.Held("installation 7 suspended", clock.instant()));
        assertEquals(new Outbox.Flush(0, 0, 5), outbox.flush());
        assertEquals(List.of(), github.calls);
        where.remove(4242L); // unsuspended: sent where they were queued
        assertEquals(5, outbox.flush().done());
        assertEquals("comment 7 acme/widgets#1", github.calls.get(0));

        github.calls.clear();
        queueOneOfEach(outbox, "dropped");
        where.put(4242L, new Destinations.Held("archived", clock.instant()));
        clock.advance(Destinations.RETENTION.plus(Duration.ofMinutes(1)));
        assertEquals(new Outbox.Flush(0, 5, 0), outbox.flush());
        assertEquals(List.of(), github.calls);
    }
}
