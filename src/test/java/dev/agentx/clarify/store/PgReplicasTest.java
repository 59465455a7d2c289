package dev.agentx.clarify.store;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.agentx.clarify.store.Replicas.Claim;
import dev.agentx.clarify.store.postgres.PostgresDatabase;
import dev.agentx.clarify.support.MutableClock;
import dev.agentx.clarify.support.TestPostgres;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** Two replicas' view of one database: claims of effects, leases, shared notes. */
@Tag("postgres")
class PgReplicasTest {
    private final MutableClock clock = MutableClock.at("2026-05-04T10:00:00Z");
    private PostgresDatabase db;
    private Replicas a;
    private Replicas b;

    @BeforeEach
    void open() {
        db = TestPostgres.newDatabase().open(4);
        a = db.replicas("replica-a", clock);
        b = db.replicas("replica-b", clock);
        assertTrue(db.beat("replica-a")); // both running
        assertTrue(db.beat("replica-b"));
    }

    @AfterEach
    void close() {
        db.close();
    }

    @Test
    void anEffectIsSentByItsClaimerAndDroppedByOthersOnceDone() {
        Instant now = clock.instant();
        Instant takeOver = now.minus(Duration.ofMinutes(10));
        assertEquals(Claim.MINE, a.claimEffect("h1", null, now, takeOver).claim());
        Replicas.EffectClaim other = b.claimEffect("h1", null, now, takeOver);
        assertEquals(Claim.PENDING_ELSEWHERE, other.claim(), "not sent yet: the other replica waits");
        assertEquals("replica-a", other.holder());
        assertEquals(Claim.MINE, a.claimEffect("h1", null, now, takeOver).claim(), "the claimer again (a retry)");
        b.effectsDone(List.of("h1")); // not b's claim: changes nothing
        assertEquals(Claim.PENDING_ELSEWHERE, b.claimEffect("h1", null, now, takeOver).claim());
        a.effectsDone(List.of("h1"));
        assertEquals(Claim.DONE, b.claimEffect("h1", null, now, takeOver).claim());
        assertEquals(Claim.DONE, a.claimEffect("h1", null, now, takeOver).claim(), "sent before a restart");
    }

    @Test
    void theEffectsAnotherReplicaHoldsAndHasNotSentAreUnfinished() {
        Instant now = clock.instant();
        a.claimEffects(effects("h1", "h2"), now);
        b.claimEffects(effects("h3"), now);
        List<String> asked = List.of("h1", "h2", "h3", "never-claimed");
        assertEquals(java.util.Set.of("h1", "h2"), b.unfinished(asked), "h3 is b's own; an unknown one is finished");
        assertEquals(java.util.Set.of("h3"), a.unfinished(asked));
        a.effectsDone(List.of("h1"));
        assertEquals(java.util.Set.of("h2"), b.unfinished(asked));
        assertEquals(java.util.Set.of(), b.unfinished(List.of()));
    }

    @Test
    void aHeartbeatTellsWhetherOtherReplicasRun() {
        try (PostgresDatabase alone = TestPostgres.newDatabase().open(2)) {
            assertTrue(alone.beat("replica-a"));
            assertFalse(alone.replicas("replica-a", clock).othersRunning());
            assertTrue(alone.beat("replica-b"));
            assertTrue(alone.beat("replica-a"));
            assertTrue(alone.replicas("replica-a", clock).othersRunning(), "b beat within the last 15 s");
            alone.leave("replica-b");
            assertTrue(alone.beat("replica-a"));
            assertFalse(alone.replicas("replica-a", clock).othersRunning(), "b left");
        }
    }

    @Test
    void anEffectLeftUnsentByAReplicaThatIsStuckIsTakenOverAfterTenMinutes() {
        a.claimEffect("h2", null, clock.instant(), clock.instant().minus(Duration.ofMinutes(10)));
        clock.advance(Duration.ofMinutes(9));
        Instant now = clock.instant();
        assertEquals(Claim.PENDING_ELSEWHERE, b.claimEffect("h2", null, now, now.minus(Duration.ofMinutes(10))).claim());
        clock.advance(Duration.ofMinutes(2));
        now = clock.instant();
        Replicas.EffectClaim taken = b.claimEffect("h2", null, now, now.minus(Duration.ofMinutes(10)));
        assertEquals(Claim.MINE, taken.claim());
        assertTrue(taken.takenOver());
        assertEquals("replica-a", taken.holder());
        assertEquals(Claim.PENDING_ELSEWHERE, a.claimEffect("h2", null, now, now.minus(Duration.ofMinutes(10))).claim(),
                "the old claimer, back, leaves it to the new one");
    }

    @Test
    void anEffectClaimedByAReplicaThatIsGoneIsTakenOverAtOnce() {
        Instant now = clock.instant();
        a.claimEffect("h3", null, now, now.minus(Duration.ofMinutes(10)));
        assertEquals(Claim.PENDING_ELSEWHERE, b.claimEffect("h3", null, now, now.minus(Duration.ofMinutes(10))).claim());
        db.leave("replica-a"); // a stopped, or has not beaten for GONE_AFTER
        Replicas.EffectClaim taken = b.claimEffect("h3", null, now, now.minus(Duration.ofMinutes(10)));
        assertEquals(Claim.MINE, taken.claim());
        assertTrue(taken.takenOver(), "taken over: a comment is looked for before it is posted");
    }

    @Test
    void aLeaseIsHeldByOneReplicaUntilItExpires() {
        Duration ttl = Duration.ofMinutes(21);
        assertTrue(a.lease("recovery", clock.instant(), ttl));
        assertFalse(b.lease("recovery", clock.instant(), ttl));
        clock.advance(Duration.ofMinutes(10));
        assertTrue(a.lease("recovery", clock.instant(), ttl), "its holder renews it");
        clock.advance(Duration.ofMinutes(20));
        assertFalse(b.lease("recovery", clock.instant(), ttl), "renewed: still a's");
        clock.advance(Duration.ofMinutes(2));
        assertTrue(b.lease("recovery", clock.instant(), ttl), "expired: b takes it");
        assertFalse(a.lease("recovery", clock.instant(), ttl));
    }

    @Test
    void aRateLimitRecordedByOneReplicaIsSeenByTheOthersUntilItEnds() {
        Instant now = clock.instant();
        a.holdInstallation(42, now.plusSeconds(60));
        a.holdInstallation(42, now.plusSeconds(30)); // an earlier end does not shorten it
        assertEquals(Map.of(42L, now.plusSeconds(60)), b.installationHolds(now));
        assertEquals(Map.of(), b.installationHolds(now.plusSeconds(60)));
    }

    @Test
    void oldClaimsAreForgotten() {
        a.claimEffect("old", null, clock.instant(), clock.instant());
        clock.advance(Duration.ofDays(8));
        a.claimEffect("new", null, clock.instant(), clock.instant());
        assertEquals(1, a.forgetClaims(clock.instant().minus(Duration.ofDays(7))));
        Instant now = clock.instant();
        assertEquals(Claim.MINE, b.claimEffect("old", null, now, now.minus(Duration.ofMinutes(10))).claim(),
                "forgotten: free to claim");
        assertEquals(Claim.PENDING_ELSEWHERE, b.claimEffect("new", null, now, now.minus(Duration.ofMinutes(10))).claim());
    }

    record State(String who, int posted) {
    }

    @Test
    void notesAreSharedByEveryReplica() {
        Notes notes = db.notes(clock);
        assertEquals(Optional.empty(), notes.get("mirror/acme/shop#1", State.class));
        notes.put("mirror/acme/shop#1", new State("a", 1));
        db.notes(clock).put("mirror/acme/shop#1", new State("b", 2));
        assertEquals(Optional.of(new State("b", 2)), notes.get("mirror/acme/shop#1", State.class));
    }

    /** Two units that lock one note take turns: the second reads what the first put. */
    @Test
    void aNoteLockedInAUnitIsReadByTheNextUnitOnlyOnceTheFirstCommitted() throws Exception {
        Notes notes = db.notes(clock);
        java.util.concurrent.CountDownLatch locked = new java.util.concurrent.CountDownLatch(1);
        java.util.concurrent.CountDownLatch release = new java.util.concurrent.CountDownLatch(1);
        ExecutorService pool = Executors.newSingleThreadExecutor();
        try {
            Future<?> first = pool.submit(() -> db.run(() -> {
                assertEquals(Optional.empty(), notes.lock("mirror/acme/shop#4", State.class), "not written yet");
                locked.countDown();
                await(release);
                notes.put("mirror/acme/shop#4", new State("a", 1));
                return null;
            }));
            await(locked);
            Future<Optional<State>> second = Executors.newSingleThreadExecutor().submit(() ->
                    db.run(() -> notes.lock("mirror/acme/shop#4", State.class)));
            long deadline = System.nanoTime() + java.util.concurrent.TimeUnit.SECONDS.toNanos(10);
            while (waitingForAdvisoryLocks() == 0 && System.nanoTime() < deadline) {
                Thread.onSpinWait();
            }
            assertEquals(1, waitingForAdvisoryLocks(), "the second unit waits for the lock, not reading around it");
            assertFalse(second.isDone());
            release.countDown();
            first.get();
            assertEquals(Optional.of(new State("a", 1)), second.get());
        } finally {
            pool.shutdownNow();
        }
    }

    private int waitingForAdvisoryLocks() {
        return db.autoCommit(c -> {
            try (var s = c.prepareStatement("SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted");
                 var r = s.executeQuery()) {
                r.next();
                return r.getInt(1);
            }
        });
    }

    private static void await(java.util.concurrent.CountDownLatch latch) {
        try {
            assertTrue(latch.await(10, java.util.concurrent.TimeUnit.SECONDS));
        } catch (InterruptedException e) {
            throw new IllegalStateException(e);
        }
    }

    @Test
    void claimingEffectsInABatchClaimsThoseNoReplicaClaimedYet() {
        Instant now = clock.instant();
        assertEquals(java.util.Set.of("h1", "h2"), a.claimEffects(effects("h1", "h2"), now));
        assertEquals(java.util.Set.of("h3"), b.claimEffects(effects("h2", "h3"), now));
        assertEquals(Claim.PENDING_ELSEWHERE, b.claimEffect("h2", null, now, now.minus(Duration.ofMinutes(10))).claim());
        assertEquals(Claim.MINE, b.claimEffect("h3", null, now, now.minus(Duration.ofMinutes(10))).claim());
    }

    /** Effects by key hash, each as the JSON a claim keeps ({"n": hash}), waiting for none. */
    private static Map<String, Replicas.ClaimedEffect> effects(String... hashes) {
        Map<String, Replicas.ClaimedEffect> out = new java.util.LinkedHashMap<>();
        for (String h : hashes) {
            out.put(h, effect(h));
        }
        return out;
    }

    /** The effect with key hash {@code h} as {@link #effects} makes it. */
    private static Replicas.ClaimedEffect effect(String h) {
        return new Replicas.ClaimedEffect("{\"n\":\"" + h + "\"}", null);
    }

    @Test
    void aClaimTakenOverCarriesWhatItsEffectWaitsFor() {
        Map<String, Replicas.ClaimedEffect> claims = new java.util.LinkedHashMap<>();
        claims.put("answer", new Replicas.ClaimedEffect("{\"n\":\"answer\"}", List.of("q1", "q2")));
        claims.put("labels", effect("labels"));
        a.claimEffects(claims, clock.instant());
        assertEquals(List.copyOf(claims.values()), a.unsentEffectsClaimedHere(), "what a start finds of its own");
        db.leave("replica-a");
        assertEquals(List.copyOf(claims.values()), b.adoptEffects(clock.instant(), 100));
    }

    @Test
    void effectsClaimedTogetherAreTakenOverInTheOrderTheyWereQueued() {
        List<String> order = List.of("question", "labels", "reply", "reaction", "answer", "a", "b", "c");
        a.claimEffects(effects(order.toArray(String[]::new)), clock.instant()); // one transaction's, one time
        // take-overs go by claimed_at: ties would leave the order to where the rows happen to lie
        assertEquals(order, db.autoCommit(c -> {
            try (var s = c.prepareStatement("SELECT hash FROM effect_claims ORDER BY claimed_at, hash DESC");
                 var r = s.executeQuery()) {
                List<String> out = new java.util.ArrayList<>();
                while (r.next()) {
                    out.add(r.getString(1));
                }
                return out;
            }
        }));
        db.leave("replica-a");
        assertEquals(order.stream().map(PgReplicasTest::effect).toList(), b.adoptEffects(clock.instant(), 100));
    }

    @Test
    void theEffectsAReplicaThatIsGoneClaimedAndDidNotSendAreTakenOverOnceByAnother() {
        a.claimEffects(effects("e1", "e2"), clock.instant());
        clock.advance(Duration.ofSeconds(1));
        Instant now = clock.instant();
        a.claimEffect("e3", effect("e3").effect(), now, now.minus(Duration.ofMinutes(10)));
        a.claimEffect("e4", null, now, now.minus(Duration.ofMinutes(10))); // no effect kept: cannot be taken over
        a.effectsDone(List.of("e2"));
        assertEquals(java.util.Arrays.asList((String) null), db.autoCommit(c -> {
            try (var s = c.prepareStatement("SELECT effect FROM effect_claims WHERE hash = 'e2'");
                 var r = s.executeQuery()) {
                return r.next() ? java.util.Arrays.asList(r.getString(1)) : List.<String>of();
            }
        }), "a claim done with keeps its hash, not its effect");
        assertEquals(List.of(), b.adoptEffects(now, 100), "a beats: its claims stay its own");
        assertEquals(List.of(effect("e1"), effect("e3")), a.unsentEffectsClaimedHere(),
                "what a start checks against its outbox: e2 is done, e4 kept no effect");
        db.leave("replica-a");
        Replicas c = db.replicas("replica-c", clock);
        assertTrue(db.beat("replica-c"));
        List<Replicas.ClaimedEffect> taken = b.adoptEffects(now, 1);
        assertEquals(List.of(effect("e1")), taken, "the oldest first, at most the limit");
        assertEquals(List.of(effect("e3")), c.adoptEffects(now, 100), "another replica takes the rest");
        assertEquals(List.of(), b.adoptEffects(now, 100), "each once");
        assertEquals(Claim.MINE, b.claimEffect("e1", null, now, now.minus(Duration.ofMinutes(10))).claim(), "b's now");
        assertEquals(Claim.PENDING_ELSEWHERE, a.claimEffect("e1", null, now, now.minus(Duration.ofMinutes(10))).claim(),
                "a, back, leaves it to b");
    }
    /**
     * The database stalled (frozen, its host paused) for 22 s: every heartbeat is that old at once.
     * The first replica to run after it must not take the others for gone and send what they are
     * sending themselves: a stale heartbeat counts only once some replica has beaten steadily for
     * the whole 15 s since.
     */
    @Test
    void afterADatabaseStallNoReplicaIsGoneUntilTheDatabaseHasWorkedForFifteenSeconds() {
        a.claimEffects(effects("e1"), clock.instant());
        Instant now = clock.instant();
        stall(22); // nobody could beat
        assertTrue(db.beat("replica-b")); // b runs first after the stall
        assertEquals(List.of(), b.adoptEffects(now, 100), "a's heartbeat is old only because the database stalled");
        assertEquals(Claim.PENDING_ELSEWHERE, b.claimEffect("e1", null, now, now.minus(Duration.ofMinutes(10))).claim());
        // b has now beaten without a gap for 15 s, a has not beaten at all: a is gone
        sql("UPDATE replica_beats SET up_since = now() - interval '16 seconds' WHERE replica = 'replica-b'");
        assertEquals(List.of(effect("e1")), b.adoptEffects(now, 100));
        // a beat after a gap longer than STEADY_GAP starts the steady time again; a shorter one does not
        sql("UPDATE replica_beats SET seen_at = now() - interval '3 seconds', up_since = now() - interval '60 seconds'");
        assertTrue(db.beat("replica-b"));
        assertEquals(1, count("SELECT count(*) FROM replica_beats WHERE replica = 'replica-b' "
                + "AND up_since <= now() - interval '59 seconds'"));
        stall(6);
        assertTrue(db.beat("replica-b"));
        assertEquals(1, count("SELECT count(*) FROM replica_beats WHERE replica = 'replica-b' AND up_since > now() - interval '2 seconds'"));
    }

    /** Moves every heartbeat {@code seconds} into the past, as a stall of the database that long leaves them. */
    private void stall(int seconds) {
        sql("UPDATE replica_beats SET seen_at = seen_at - make_interval(secs => " + seconds + "), "
                + "up_since = up_since - make_interval(secs => " + seconds + ")");
    }

    private void sql(String statement) {
        db.autoCommit(c -> {
            try (var s = c.prepareStatement(statement)) {
                return s.executeUpdate();
            }
        });
    }

    private long count(String query) {
        return db.autoCommit(c -> {
            try (var s = c.prepareStatement(query); var r = s.executeQuery()) {
                r.next();
                return r.getLong(1);
            }
        });
    }
}
