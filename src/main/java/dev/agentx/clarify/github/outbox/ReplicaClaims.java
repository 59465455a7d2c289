package dev.agentx.clarify.github.outbox;

import dev.agentx.clarify.files.JsonSupport;
import dev.agentx.clarify.store.Replicas;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * This replica's claims of effects among the replicas on one database ({@link Replicas}; on the
 * file store every claim is its own). An effect is sent by the replica that claimed its key
 * first; the others drop their copy once that claim is done, holding back the later
 * effects until then. A claim keeps its effect, so the claims of a replica that is gone are taken
 * over and sent by another ({@link #adoptLeftovers}). Effects of an issue queued after effects
 * another replica queued for it wait for those ({@link #waitsForOthers}), so the comments
 * appear in the order they were queued whichever replica sends them. A replica sends on the
 * strength of its claims only while its heartbeats reach the database (its claim term).
 */
final class ReplicaClaims {
    private static final Logger LOG = LoggerFactory.getLogger(Outbox.class);
    /** An unfinished claim of another replica this old is taken over (that replica is stuck); at once if it is gone. */
    static final Duration TAKE_OVER = Duration.ofMinutes(10);
    /**
     * How long after a send its claim is marked done while other replicas run: long enough for
     * one statement to mark what the senders finished meanwhile (at 200 deliveries/s, a few
     * each), short beside a waiting replica's first look again ({@link IssueQueue#FIRST_RECHECK}).
     */
    static final Duration MARK_DELAY = Duration.ofMillis(20);
    /** At most this many effects of gone replicas are taken over per tick. */
    static final int ADOPT_BATCH = 200;
    /** A claim taken while this replica's heartbeats had lapsed: checked in the database before it is sent. */
    static final long NO_TERM = Long.MIN_VALUE;

    private final Replicas replicas;
    private final EffectQueue queue;
    private final Clock clock;
    /**
     * Key hashes of effects this replica claimed when they were queued (in a unit, {@link
     * EffectsInUnit}) or took over, not sent yet, with the {@link Replicas#claimTerm term} they were
     * claimed in ({@link #NO_TERM}: none): one claimed in the term still running is sent without
     * asking the database again.
     */
    private final Map<String, Long> claimedHere = new ConcurrentHashMap<>();
    /** Key hashes of effects sent or given up on whose claims are still to be marked done. */
    private final Set<String> claimsDone = ConcurrentHashMap.newKeySet();
    /** The lapse of this replica's heartbeats has been logged (until they reach the database again). */
    private final AtomicBoolean lapseLogged = new AtomicBoolean();
    /** A mark of the claims done is scheduled ({@link #markDoneSoon}). */
    private final AtomicBoolean markScheduled = new AtomicBoolean();
    /** The first tick has checked this replica's own unfinished claims against the journal. */
    private volatile boolean ownClaimsChecked;

    ReplicaClaims(Replicas replicas, EffectQueue queue, Clock clock) {
        this.replicas = replicas;
        this.queue = queue;
        this.clock = clock;
    }

    /** This replica's name, as claims and issue notes record it. */
    String replica() {
        return replicas.replica();
    }

    /** The effect as JSON, as a claim keeps it ({@link Replicas#claimEffect}). */
    static String json(Effect e) {
        try {
            return JsonSupport.shared().writeValueAsString(e);
        } catch (IOException x) {
            throw new UncheckedIOException(x);
        }
    }

    /** The term claims taken now are taken in; {@link #NO_TERM} while the heartbeats have lapsed. */
    long currentTerm() {
        return replicas.claimTerm().orElse(NO_TERM);
    }

    /** Claims {@code effects} (by key hash) for this replica in one statement; the hashes it claimed. */
    Set<String> claimAll(Map<String, Replicas.ClaimedEffect> effects) {
        return replicas.claimEffects(effects, clock.instant());
    }

    /** The effect with key hash {@code hash} was claimed here in {@code term}, and is queued here. */
    void claimedHere(String hash, long term) {
        claimedHere.put(hash, term);
    }

    /**
     * Has the next flush look again for effects this replica claimed and does not have queued: a
     * transaction whose COMMIT reached the database but whose answer did not (the connection broke
     * as the database stopped) claimed its effects for good while this process, told it failed,
     * never queued them. Nobody else takes them over (this replica is alive), so they are queued
     * here as effects that may have landed: a comment is looked for on the issue first.
     */
    void checkOwnClaimsAgain() {
        ownClaimsChecked = false;
    }

    /**
     * Whether {@code entry}, which waits for effects of its issue that another replica queued
     * before it, waits still: while those are not {@link Replicas#unfinished finished} (sent or
     * given up on by whoever holds them), or cannot be read, for at most {@link #TAKE_OVER} after
     * it was queued (the other replica is stuck: then it is sent, with a warning).
     */
    boolean waitsForOthers(QueuedEffect entry, Instant now) {
        Effect e = entry.effect();
        Set<String> unfinished;
        try {
            unfinished = replicas.unfinished(entry.after());
        } catch (RuntimeException ex) {
            LOG.warn("outbox: cannot read whether the effects {} waits for are done; its issue waits: {}", e.key(),
                    ex.toString());
            return true;
        }
        if (!unfinished.isEmpty()) {
            if (entry.queuedAt() == null || now.isBefore(entry.queuedAt().plus(TAKE_OVER))) {
                LOG.debug("outbox: {} waits for {} effect(s) of its issue another replica queued before it", e.key(),
                        unfinished.size());
                return true;
            }
            LOG.warn("outbox: {} waited {} min for {} effect(s) of its issue another replica queued before it; "
                    + "sending it now", e.key(), TAKE_OVER.toMinutes(), unfinished.size());
        }
        return false;
    }

    /**
     * The term to send in: empty while this replica's heartbeats have not reached the database
     * lately, when nothing is sent (said once in the log, until they reach it again).
     */
    OptionalLong termToSend() {
        OptionalLong term = replicas.claimTerm();
        if (term.isEmpty()) {
            if (lapseLogged.compareAndSet(false, true)) {
                LOG.warn("outbox: this replica's heartbeats have not reached the database lately; effects wait "
                        + "until one does (other replicas may be taking them over meanwhile)");
            }
            return term;
        }
        lapseLogged.set(false);
        return term;
    }

    /**
     * Who sends the effect of {@code slot}: this replica without asking the database when it
     * claimed it in {@code term}, else as {@link Replicas#claimEffect} finds it (another replica's
     * claim older than {@link #TAKE_OVER} is taken over).
     */
    Replicas.EffectClaim claim(Slot slot, long term, Instant now) {
        Long claimedIn = claimedHere.remove(slot.hash());
        return claimedIn != null && claimedIn == term ? new Replicas.EffectClaim(Replicas.Claim.MINE, false,
                replicas.replica()) : replicas.claimEffect(slot.hash(), json(slot.entry().effect()), now,
                now.minus(TAKE_OVER));
    }

    /** Whether the heartbeats lapsed since {@code term} was read: a claim checked then is checked again. */
    boolean lapsedSince(OptionalLong term) {
        return !replicas.claimTerm().equals(term);
    }

    /** The effect with key hash {@code hash} was sent or given up on: its claim is to be marked done. */
    void finished(String hash) {
        claimsDone.add(hash);
    }

    /**
     * Marks the claims of the effects sent or given up on since the last call as done, in one
     * statement (the worker's tick calls it through the outbox's flush). Should that fail, they are
     * marked at the next call; a replica holding the same effect waits meanwhile.
     */
    void markDone() {
        if (claimsDone.isEmpty()) {
            return;
        }
        List<String> batch = new ArrayList<>(claimsDone);
        try {
            replicas.effectsDone(batch);
            batch.forEach(claimsDone::remove);
        } catch (RuntimeException ex) {
            LOG.warn("outbox: cannot mark {} claims done in the database; trying at the next tick: {}", batch.size(),
                    ex.toString());
        }
    }

    /**
     * While other replicas run, marks the claims of what was sent as done {@link #MARK_DELAY}
     * after the first send not marked yet (one statement for what the senders finished
     * meanwhile), so a replica whose effects of the same issue wait for them goes on within
     * tens of milliseconds; alone, or without {@code later}, the worker's tick does it.
     */
    void markDoneSoon(ScheduledExecutorService later) {
        if (later == null || claimsDone.isEmpty() || !replicas.othersRunning() || !markScheduled.compareAndSet(false,
                true)) {
            return;
        }
        try {
            later.schedule(() -> {
                markScheduled.set(false);
                markDone();
            }, MARK_DELAY.toMillis(), TimeUnit.MILLISECONDS);
        } catch (RejectedExecutionException e) {
            markScheduled.set(false); // stopping: the final flush marks them
        }
    }

    /**
     * Takes over what replicas that are gone claimed and did not send (at every tick; none on the
     * file store): each effect is queued here as one that may have reached GitHub (a comment is
     * looked for first), behind what this replica had queued for its issue already.
     */
    void adoptLeftovers() {
        List<Replicas.ClaimedEffect> left;
        long term = currentTerm(); // read before the claims are taken, as a unit's
        try {
            left = new ArrayList<>();
            if (!ownClaimsChecked) {
                // claims this replica took over before a crash that its journal never recorded
                left.addAll(replicas.unsentEffectsClaimedHere());
            }
            left.addAll(replicas.adoptEffects(clock.instant(), ADOPT_BATCH));
        } catch (RuntimeException ex) {
            LOG.warn("outbox: cannot look for effects left by replicas that are gone: {}", ex.toString());
            return;
        }
        ownClaimsChecked = true;
        int queued = 0;
        for (Replicas.ClaimedEffect claim : left) {
            Effect effect;
            try {
                effect = JsonSupport.shared().readValue(claim.effect(), Effect.class);
            } catch (IOException | RuntimeException ex) {
                LOG.error("outbox: an effect another replica left cannot be read; dropped: {}: {}", ex.toString(),
                        claim.effect());
                continue;
            }
            String h = EffectQueue.hash(effect.key());
            if (queue.add(effect, true, claim.after(), true)) {
                queued++;
            }
            if (queue.done(h)) {
                claimsDone.add(h); // done here before: the claim, now this replica's, is done
            } else {
                claimedHere.put(h, term);
            }
        }
        if (queued > 0) {
            queue.sync();
            LOG.info("outbox: took over {} effects left unsent by replicas that are gone", queued);
        }
    }
}
