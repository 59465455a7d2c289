package dev.agentx.clarify.store;

import java.time.Duration;
import java.time.Instant;
import java.util.Collection;

/**
 * What the replicas of one server agree on through the database they share, beyond the
 * repositories' state and the deliveries ({@link DeliveryQueue}): which one sends each effect,
 * and which one does work that must happen once (asking GitHub for deliveries no replica
 * received, forgetting old claims).
 *
 * <p>Each replica keeps its own outbox on its own disk. Effects are keyed as in one process (a thread
 * entry's comment has the same key whichever replica queues it), and the first replica to
 * {@link #claimEffect claim} a key sends it; another replica that queued the same effect drops it
 * once the claim is done, and holds back its issue's later effects until then, so comments of an
 * issue keep their order. Effects a replica queues after those another replica queued for the same
 * issue (the next entry of a thread, applied on the other replica) wait until those are
 * {@link #unfinished finished}. A replica that crashed finds its claims its own after the restart
 * (its name is kept in its data folder) and finishes them from its outbox.
 */
public interface Replicas {
    /** This replica's name: the same across restarts on the same data folder. */
    String replica();

    /** Who sends an effect, as {@link #claimEffect} found it. */
    enum Claim {
        /** This replica: send it. */
        MINE,
        /** Sent already (by another replica, or by this one before a restart): drop it here. */
        DONE,
        /** Another replica claimed it and has not sent it yet: wait, holding back the later effects. */
        PENDING_ELSEWHERE
    }

    /**
     * Claims the effect with key hash {@code hash} for sending. An unfinished claim by another
     * replica is taken over when that replica is gone (its heartbeat stopped) or the claim is older
     * than {@code takeOverBefore} (the replica is stuck): the effect may have reached GitHub, so
     * the caller treats it as uncertain.
     *
     * @param effect the effect as JSON, kept with a new claim so that another replica can send it
     *               should this one be gone before it did (null: not kept)
     * @return the claim, and whether it was taken over
     */
    EffectClaim claimEffect(String hash, String effect, Instant now, Instant takeOverBefore);

    /**
     * An effect as a claim keeps it: the effect as JSON, and the key hashes of the effects of its
     * issue that another replica queued before it and that it waits for ({@link #unfinished}; null
     * when none), so that a replica taking the claim over sends it in its issue's order.
     */
    record ClaimedEffect(String effect, java.util.List<String> after) {
        public ClaimedEffect {
            after = after == null ? null : java.util.List.copyOf(after);
        }
    }

    /**
     * Claims for this replica, in one statement (inside the calling thread's transaction, if it
     * has one open, committed with it), those of {@code effects} (key hash to the effect, kept with
     * the claim) that no replica claimed yet, in the map's order (a take-over keeps it); returns the
     * hashes it claimed. Inside a transaction the statement may be sent with its commit: the set is
     * complete once the transaction committed (a participant's {@code committed}), not before.
     */
    java.util.Set<String> claimEffects(java.util.Map<String, ClaimedEffect> effects, Instant now);

    /**
     * Takes over, for this replica, up to {@code limit} unfinished claims of replicas that are
     * gone (no heartbeat), oldest first, and returns the effects they carry for this replica to
     * send. Replicas doing this at once each take different claims.
     */
    java.util.List<ClaimedEffect> adoptEffects(Instant now, int limit);

    /**
     * The effects this replica holds unfinished claims of, oldest first: what a start checks
     * against its outbox, which a crash may have cut short between taking claims over and
     * recording them.
     */
    java.util.List<ClaimedEffect> unsentEffectsClaimedHere();

    /** {@link #claimEffect}'s answer. */
    record EffectClaim(Claim claim, boolean takenOver, String holder) {
    }

    /**
     * Records that this replica sent these effects, or gave up on them (their claims are done).
     * Called in batches: within milliseconds of sending while {@link #othersRunning() other replicas run},
     * else at the worker's tick. A replica holding the same effect, or effects of the same issue
     * queued after these, waits meanwhile.
     */
    void effectsDone(Collection<String> hashes);

    /**
     * Those of {@code hashes} whose claims another replica holds and has not finished (sent or
     * given up on): effects this replica's later effects of the same issue wait for. A hash with
     * no claim (forgotten, or never claimed) is finished; so is one this replica holds itself (taken
     * over from a replica that is gone: it is in this replica's own outbox, and waiting for it
     * there would wait forever).
     */
    java.util.Set<String> unfinished(Collection<String> hashes);

    /**
     * The term of this replica's claims: a number that stays the same while its heartbeats reach
     * the database without a lapse, so that no other replica can take it for gone and take its
     * claims over. Empty while they have lapsed (the replica was paused, or cut off from the
     * database): nothing is sent on the strength of a claim then. A claim taken in an earlier
     * term is checked with {@link #claimEffect} before its effect is sent.
     */
    java.util.OptionalLong claimTerm();

    /**
     * Whether other replicas were running at this replica's last heartbeat: they may wait for
     * this replica's claims to be done, so those are marked within milliseconds of sending.
     */
    boolean othersRunning();

    /**
     * Holds the lease {@code name} until {@code now + ttl} if it is free, expired or already this
     * replica's; whether this replica holds it now. Work done under a lease runs on one replica at
     * a time as long as each run is shorter than the lease.
     */
    boolean lease(String name, Instant now, Duration ttl);

    /**
     * Records that GitHub rate-limited the installation until {@code until}, for every replica
     * (they share its budget); a later time than one recorded before wins.
     */
    void holdInstallation(long installation, Instant until);

    /** The installations some replica recorded as rate-limited beyond {@code now}, until when. */
    java.util.Map<Long, Instant> installationHolds(Instant now);

    /** Forgets claims of effects made before {@code before}; how many. */
    int forgetClaims(Instant before);

    /** A server that is the only one (the file store): every claim and lease is its own. */
    static Replicas alone(String replica) {
        return new Replicas() {
            @Override
            public String replica() {
                return replica;
            }

            @Override
            public EffectClaim claimEffect(String hash, String effect, Instant now, Instant takeOverBefore) {
                return new EffectClaim(Claim.MINE, false, replica);
            }

            @Override
            public java.util.Set<String> claimEffects(java.util.Map<String, ClaimedEffect> effects, Instant now) {
                return java.util.Set.copyOf(effects.keySet());
            }

            @Override
            public java.util.List<ClaimedEffect> adoptEffects(Instant now, int limit) {
                return java.util.List.of();
            }

            @Override
            public java.util.List<ClaimedEffect> unsentEffectsClaimedHere() {
                return java.util.List.of();
            }

            @Override
            public void effectsDone(Collection<String> hashes) {
            }

            @Override
            public java.util.Set<String> unfinished(Collection<String> hashes) {
                return java.util.Set.of();
            }

            @Override
            public java.util.OptionalLong claimTerm() {
                return java.util.OptionalLong.of(0);
            }

            @Override
            public boolean othersRunning() {
                return false;
            }

            @Override
            public boolean lease(String name, Instant now, Duration ttl) {
                return true;
            }

            @Override
            public void holdInstallation(long installation, Instant until) {
            }

            @Override
            public java.util.Map<Long, Instant> installationHolds(Instant now) {
                return java.util.Map.of();
            }

            @Override
            public int forgetClaims(Instant before) {
                return 0;
            }
        };
    }
}
