package dev.agentx.clarify.github.outbox;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.agentx.clarify.github.RepoRef;
import dev.agentx.clarify.metrics.ServerMetrics;
import dev.agentx.clarify.store.postgres.PostgresDatabase;
import dev.agentx.clarify.support.MutableClock;
import dev.agentx.clarify.support.TestPostgres;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Effects queued inside a unit of the PostgreSQL store (a delivery's transaction): claimed with
 * it, queued once it committed, and neither when it rolled back.
 */
@Tag("postgres")
class OutboxInUnitTest {
    private static final RepoRef REPO = new RepoRef("acme", "shop");
    private final MutableClock clock = MutableClock.at("2026-05-04T10:00:00Z");
    @TempDir
    Path dir;
    private PostgresDatabase db;

    @BeforeEach
    void open() {
        db = TestPostgres.newDatabase().open(4);
        db.beat("replica-a");
    }

    @AfterEach
    void close() {
        db.close();
    }

    private Outbox outbox(String folder, FlakyGitHub github) {
        return new Outbox(dir.resolve(folder), github, clock, ServerMetrics.create(), db.replicas("replica-a", clock),
                db);
    }

    private static Effect comment(String key) {
        return new Effect.Comment(key, 7, REPO, 1, "body of " + key);
    }

    @Test
    void effectsQueuedInAUnitThatRollsBackAreNeitherQueuedNorClaimed() {
        FlakyGitHub github = new FlakyGitHub();
        Outbox outbox = outbox("outbox", github);
        assertThrows(IllegalStateException.class, () -> db.run(() -> {
            assertTrue(outbox.enqueue(comment("k1")));
            assertFalse(outbox.enqueue(comment("k1")), "once per key, inside the unit too");
            assertEquals(0, outbox.size(), "not queued while the unit is open");
            throw new IllegalStateException("the delivery fails");
        }));
        assertEquals(0, outbox.size());
        outbox.flush();
        assertEquals(List.of(), github.posted);
        assertEquals(List.of(), db.replicas("replica-a", clock).unsentEffectsClaimedHere(), "no claim left");

        db.run(() -> outbox.enqueue(comment("k1"))); // the retry
        outbox.sync();
        outbox.flush();
        assertEquals(List.of("body of k1"), github.posted.stream().map(OutboxInUnitTest::untagged).toList());
    }

    /**
     * A crash between the unit's commit and the outbox's journal record: the effects are in the
     * database, claimed by this replica, and its next start sends them (looking for the tag
     * first, as the attempt may have landed), in the order queued.
     */
    @Test
    void effectsOfACommittedUnitThatTheJournalLostAreSentFromTheirClaimsAtTheNextStart() {
        Outbox before = outbox("lost", new FlakyGitHub());
        db.run(() -> {
            before.enqueue(comment("k1"));
            before.enqueue(comment("k2"));
            return null;
        });
        assertEquals(2, db.replicas("replica-a", clock).unsentEffectsClaimedHere().size(), "claimed with the unit");

        FlakyGitHub github = new FlakyGitHub();
        Outbox restarted = outbox("fresh", github); // the same replica, its journal without them
        restarted.flush();
        assertEquals(List.of("body of k1", "body of k2"), github.posted.stream().map(OutboxInUnitTest::untagged)
                .toList());
        restarted.flush();
        assertEquals(2, github.posted.size(), "once");
    }

    private static String untagged(String body) {
        return body.replaceAll("\\s*<!-- agentx-effect:[0-9a-f]+ -->\\s*", "").strip();
    }
}
