package dev.agentx.clarify.github.outbox;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.agentx.clarify.github.RepoRef;
import dev.agentx.clarify.metrics.ServerMetrics;
import dev.agentx.clarify.store.postgres.PostgresDatabase;
import dev.agentx.clarify.support.MutableClock;
import dev.agentx.clarify.support.TestPostgres;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Two replicas' outboxes on one database, each queuing effects of the same issue in turn (a
 * question applied on one, its answer on the other): the later effects wait until the earlier
 * ones are sent, so GitHub shows them in the order they were queued whichever replica holds them.
 */
@Tag("postgres")
class OutboxAcrossReplicasTest {
    private static final RepoRef REPO = new RepoRef("acme", "shop");
    private final MutableClock clock = MutableClock.at("2026-05-04T10:00:00Z");
    @TempDir
    Path dir;
    private PostgresDatabase db;
    private FlakyGitHub github;
    private Outbox a;
    private Outbox b;
    /** The ticker the replicas' terms are measured with: moved by the tests of a replica paused. */
    private final java.util.concurrent.atomic.AtomicLong ticks = new java.util.concurrent.atomic.AtomicLong();

    @BeforeEach
    void open() {
        db = TestPostgres.newDatabase().open(4);
        db.tickTermsWith(ticks::get);
        github = new FlakyGitHub();
        a = new Outbox(dir.resolve("a"), github, clock, ServerMetrics.create(), db.replicas("replica-a", clock), db);
        b = new Outbox(dir.resolve("b"), github, clock, ServerMetrics.create(), db.replicas("replica-b", clock), db);
        assertTrue(db.beat("replica-a")); // both running: neither takes the other's claims over
        assertTrue(db.beat("replica-b"));
    }

    @AfterEach
    void close() {
        db.close();
    }

    private static Effect comment(int issue, String text) {
        return new Effect.Comment(REPO + "#" + issue + "/" + text, 7, REPO, issue, text);
    }

    /** A's unit queues the question of issue 1; what it queued for the issue, as the issue's note keeps it. */
    private List<String> questionQueuedOnA() {
        return db.run(() -> {
            a.enqueue(comment(1, "question"));
            return a.queuedInUnit(7, REPO, 1);
        });
    }

    /** B's unit queues the answer of issue 1 after what A queued, and a comment of issue 2. */
    private void answerQueuedOnB(List<String> queuedByA) {
        db.run(() -> {
            b.after(7, REPO, 1, queuedByA);
            b.enqueue(comment(1, "answer"));
            b.enqueue(comment(1, "reply"));
            b.enqueue(comment(2, "other issue"));
            return null;
        });
    }

    private List<String> posted() {
        return github.posted.stream().map(body -> body.replaceAll("\\s*<!-- agentx-effect:[0-9a-f]+ -->\\s*", "")
                .strip()).toList();
    }

    @Test
    void anIssuesEffectsQueuedAfterAnotherReplicasWaitUntilThoseAreSent() {
        List<String> queuedByA = questionQueuedOnA();
        assertEquals(1, queuedByA.size());
        answerQueuedOnB(queuedByA);

        b.flush();
        assertEquals(List.of("other issue"), posted(), "the answer waits for the question; another issue does not");
        assertEquals(2, b.size(), "the answer and the reply behind it");
        b.flush();
        assertEquals(List.of("other issue"), posted(), "still waiting while A has not sent the question");

        a.flush(); // sends the question and marks its claim done
        b.flush();
        assertEquals(List.of("other issue", "question", "answer", "reply"), posted());
        assertEquals(0, a.size() + b.size());
    }

    @Test
    void whileOtherReplicasRunTheClaimsOfWhatWasSentAreMarkedDoneWithinMilliseconds() throws Exception {
        List<String> queuedByA = questionQueuedOnA();
        answerQueuedOnB(queuedByA);
        assertTrue(db.beat("replica-a")); // A's heartbeat finds B running
        java.util.concurrent.ScheduledExecutorService later = java.util.concurrent.Executors
                .newSingleThreadScheduledExecutor();
        try {
            b.sendQueued(Runnable::run, later); // the answer waits, looked at again soon
            a.sendQueued(Runnable::run, later); // a sender, not the tick: no flush() of A marks the claim done
            awaitPosted(4);
            assertEquals(List.of("other issue", "question", "answer", "reply"), posted());
        } finally {
            later.shutdownNow();
        }
    }

    /** Waits (up to 10 s) for {@code n} comments, posted by scheduled work. */
    private void awaitPosted(int n) throws InterruptedException {
        long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
        while (posted().size() < n && System.nanoTime() < deadline) {
            Thread.sleep(5); // waiting for the scheduled work, not for time to pass
        }
    }

    @Test
    void anIssueWaitsForAnotherReplicaAtMostTheTakeOverTime() {
        List<String> queuedByA = questionQueuedOnA();
        answerQueuedOnB(queuedByA);
        b.flush();
        assertEquals(List.of("other issue"), posted());

        clock.advance(ReplicaClaims.TAKE_OVER.plus(Duration.ofSeconds(1))); // A is stuck: B goes on
        b.flush();
        assertEquals(List.of("other issue", "answer", "reply"), posted());
    }

    @Test
    void aReplicaDoesNotWaitForEffectsItHoldsItselfNorForThoseNoReplicaClaimed() {
        List<String> queuedByA = questionQueuedOnA();
        db.run(() -> {
            // its own (as after taking another's claims over): they are in its own outbox, in order
            a.after(7, REPO, 1, queuedByA);
            a.enqueue(comment(1, "follow-up"));
            return null;
        });
        a.flush();
        assertEquals(List.of("question", "follow-up"), posted());

        db.run(() -> {
            b.after(7, REPO, 3, List.of("0123456789abcdef0123456789abcdef")); // forgotten long ago
            b.enqueue(comment(3, "third"));
            return null;
        });
        b.flush();
        assertEquals(List.of("question", "follow-up", "third"), posted());
    }

    @Test
    void whatAnEffectWaitsForGoesFirstWhenTheReplicaTookItOverFromOneThatIsGone() {
        List<String> queuedByA = questionQueuedOnA();
        answerQueuedOnB(queuedByA);
        db.leave("replica-a"); // A stopped before sending the question: B takes its claim over
        b.flush();
        assertEquals(List.of("question", "answer", "reply", "other issue"), posted());
    }

    @Test
    void effectsTakenOverFromAReplicaThatIsGoneGoBeforeTheOneThatWaitsInTheOrderItQueuedThem() {
        db.run(() -> {
            a.enqueue(comment(1, "question"));
            return null;
        });
        List<String> queuedByA = db.run(() -> {
            a.enqueue(comment(1, "follow-up")); // A's next unit: the issue's note names only this one
            return a.queuedInUnit(7, REPO, 1);
        });
        answerQueuedOnB(queuedByA);
        db.leave("replica-a"); // A stopped before sending either: B takes both claims over
        b.flush();
        assertEquals(List.of("question", "follow-up", "answer", "reply", "other issue"), posted());
    }

    @Test
    void anEffectThatWaitsWaitsInTurnOnTheReplicaThatTakesItOver() {
        List<String> queuedByA = questionQueuedOnA();
        answerQueuedOnB(queuedByA);
        Outbox c = new Outbox(dir.resolve("c"), github, clock, ServerMetrics.create(), db.replicas("replica-c", clock),
                db);
        assertTrue(db.beat("replica-c"));
        db.leave("replica-b"); // B stopped before sending: C takes its claims over, A still holds the question
        c.flush();
        assertEquals(List.of("other issue"), posted(), "the answer waits for A's question on C too");
        a.flush();
        c.flush();
        assertEquals(List.of("other issue", "question", "answer", "reply"), posted());
    }

    /**
     * A was paused (a long collection, cut off from the database) past its heartbeat's hold after
     * claiming the question; B took the claim over and sent it. A, running again, must not send it
     * too on the strength of its old claim: it sends nothing until its heartbeat reaches the
     * database, then checks the claim there and finds it done.
     */
    @Test
    void aReplicaPausedPastItsHeartbeatSendsNothingItClaimedBeforeUntilItHasCheckedTheClaim() {
        questionQueuedOnA();
        aPausedWhileBRuns();

        b.flush(); // A is gone for B: B takes the question over and sends it
        assertEquals(List.of("question"), posted());
        a.flush(); // A runs again before its next heartbeat
        assertEquals(List.of("question"), posted(), "A's heartbeat has lapsed: it sends nothing");
        assertEquals(1, a.size(), "the question stays queued on A");

        assertTrue(db.beat("replica-a")); // a new term: A's claim from the old one is checked
        a.flush();
        assertEquals(List.of("question"), posted(), "B sent it: A drops it");
        assertEquals(0, a.size());
    }

    /**
     * A was paused after its last check of the question's claim and before its request reached
     * GitHub; B took the claim over meanwhile, found no comment and posted it. A's request then
     * lands: A, whose heartbeats lapsed during the send, looks and deletes its own, later, copy.
     */
    @Test
    void aCommentSentAcrossALapseThatAnotherReplicaPostedMeanwhileIsDeletedAndTheFirstStays() {
        questionQueuedOnA();
        java.util.concurrent.atomic.AtomicBoolean paused = new java.util.concurrent.atomic.AtomicBoolean();
        github.beforePost = body -> {
            if (paused.compareAndSet(false, true)) { // A's request, about to be sent: A is paused 20 s
                aPausedWhileBRuns();
                b.flush(); // B takes the question over and posts it
            }
        };
        a.flush();
        assertEquals(List.of("question", "question"), posted(), "both posted it");
        assertEquals(List.of("question"), shown(), "A deleted its copy, the later one");
        assertEquals(github.comments.firstKey(), 1L, "the first stays");
    }

    /**
     * B took A's claim over and found no comment; A's request, sent before A was paused, lands
     * just before B's: B, whose send was one taken over, looks after posting and deletes its own.
     */
    @Test
    void aCommentTakenOverWhoseFirstCopyLandedJustBeforeIsDeletedByTheReplicaThatTookItOver() {
        questionQueuedOnA();
        aPausedWhileBRuns();
        java.util.concurrent.atomic.AtomicBoolean landed = new java.util.concurrent.atomic.AtomicBoolean();
        github.beforePost = body -> {
            if (landed.compareAndSet(false, true)) {
                github.createComment(7, REPO, 1, body); // A's request, in flight since before the pause
            }
        };
        b.flush();
        assertEquals(List.of("question", "question"), posted());
        assertEquals(List.of("question"), shown(), "B deleted its copy, the later one");
        assertEquals(github.comments.firstKey(), 1L);
    }

    /** The comments GitHub shows now, without their tags, oldest first. */
    private List<String> shown() {
        return github.comments.values().stream().map(body -> body.replaceAll(
                "\\s*<!-- agentx-effect:[0-9a-f]+ -->\\s*", "").strip()).toList();
    }

    /** A paused past its heartbeat's hold while no replica took its claim over sends it once it beats again. */
    @Test
    void aClaimFromALapsedTermThatIsStillTheReplicasOwnIsSentOnceItBeatsAgain() {
        questionQueuedOnA();
        ticks.addAndGet(Duration.ofSeconds(20).toNanos());
        a.flush();
        assertEquals(List.of(), posted());
        assertTrue(db.beat("replica-a"));
        a.flush();
        assertEquals(List.of("question"), posted());
    }

    /**
     * The database took 12 s to answer A's claim of an effect it was about to send (queued
     * outside a unit, so claimed when first sent): A's heartbeats lapsed meanwhile, so it does
     * not send it on that claim, and sends it once a heartbeat got through again.
     */
    @Test
    void aReplicaWhoseHeartbeatsLapsedWhileItClaimedAnEffectSendsItOnlyInItsNextTerm() {
        java.util.concurrent.atomic.AtomicBoolean slowDatabase = new java.util.concurrent.atomic.AtomicBoolean(true);
        Outbox slow = new Outbox(dir.resolve("slow"), github, clock, ServerMetrics.create(),
                new dev.agentx.clarify.support.ForwardingReplicas(db.replicas("replica-a", clock)) {
                    @Override
                    public EffectClaim claimEffect(String hash, String effect, java.time.Instant now,
                            java.time.Instant takeOverBefore) {
                        if (slowDatabase.get()) {
                            ticks.addAndGet(Duration.ofSeconds(12).toNanos());
                        }
                        return real.claimEffect(hash, effect, now, takeOverBefore);
                    }
                }, db);
        slow.enqueue(comment(1, "notice"));
        slow.flush();
        assertEquals(List.of(), posted(), "claimed, but not sent on the claim");
        assertEquals(1, slow.size());
        slowDatabase.set(false);
        assertTrue(db.beat("replica-a"));
        slow.flush();
        assertEquals(List.of("notice"), posted());
    }

    /**
     * A paused 20 s: no heartbeat of A meanwhile (its term lapses), while B beat steadily, so B
     * takes A for gone.
     */
    private void aPausedWhileBRuns() {
        ticks.addAndGet(Duration.ofSeconds(20).toNanos());
        assertTrue(db.beat("replica-b"));
        sql("UPDATE replica_beats SET seen_at = now() - interval '20 seconds' WHERE replica = 'replica-a'");
        sql("UPDATE replica_beats SET up_since = now() - interval '20 seconds' WHERE replica = 'replica-b'");
    }

    private void sql(String statement) {
        db.autoCommit(c -> {
            try (var s = c.prepareStatement(statement)) {
                return s.executeUpdate();
            }
        });
    }

    @Test
    void anIssueThatWaitsIsLookedAtAgainSoonNotAtTheNextTick() throws Exception {
        List<String> queuedByA = questionQueuedOnA();
        answerQueuedOnB(queuedByA);
        java.util.concurrent.ScheduledExecutorService later = java.util.concurrent.Executors
                .newSingleThreadScheduledExecutor();
        try {
            b.sendQueued(Runnable::run, later); // the answer waits; a look again is scheduled
            assertEquals(List.of("other issue"), posted());
            a.flush();
            awaitPosted(4);
            assertEquals(List.of("other issue", "question", "answer", "reply"), posted(),
                    "sent by a look again, with no flush of B");
        } finally {
            later.shutdownNow();
        }
    }
}
