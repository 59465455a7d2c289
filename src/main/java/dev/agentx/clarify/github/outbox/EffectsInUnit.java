package dev.agentx.clarify.github.outbox;

import dev.agentx.clarify.github.RepoRef;
import dev.agentx.clarify.store.Replicas;
import dev.agentx.clarify.store.UnitOfWork;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The effects queued inside the store's unit ({@link UnitOfWork}: on PostgreSQL a delivery's
 * transaction), per thread, in order: claimed for this replica, with their JSON, just before the
 * unit commits, so a crash after the commit leaves them in the database for this replica's next
 * start or another replica to send; queued in the outbox once it committed; dropped if it rolled
 * back.
 */
final class EffectsInUnit {
    private final UnitOfWork unit;
    private final EffectQueue queue;
    private final ReplicaClaims claims;
    private final ThreadLocal<Pending> pending = new ThreadLocal<>();

    EffectsInUnit(UnitOfWork unit, EffectQueue queue, ReplicaClaims claims) {
        this.unit = unit;
        this.queue = queue;
        this.claims = claims;
    }

    /** Whether the calling thread has a unit open: what it queues waits for the unit's end. */
    boolean open() {
        return unit.open();
    }

    /** Keeps the effect until the calling thread's unit ends; false when its key was queued or done before. */
    boolean enqueue(Effect effect) {
        String h = EffectQueue.hash(effect.key());
        if (queue.known(h)) {
            return false; // queued or done here before
        }
        return pending().effects.putIfAbsent(h, effect) == null;
    }

    /**
     * Inside the calling thread's unit: the effects of the issue queued in this unit so far are to
     * go out after those of {@code hashes}, which another replica queued (and claimed) before: the
     * first of them waits until those are finished, holding back the rest ({@link
     * ReplicaClaims#waitsForOthers}). Without an open unit nothing waits.
     */
    void after(long installation, RepoRef repo, int issue, Collection<String> hashes) {
        if (!unit.open() || hashes.isEmpty()) {
            return;
        }
        // the issue's mirror and the merge gate may each name what they wait for: the first effect waits for all
        pending().after.merge(EffectQueue.issueKey(installation, repo, issue), List.copyOf(hashes), (a, b) -> {
            java.util.LinkedHashSet<String> both = new java.util.LinkedHashSet<>(a);
            both.addAll(b);
            return List.copyOf(both);
        });
    }

    /** The key hashes of the effects of the issue queued in the calling thread's open unit so far, in order. */
    List<String> queued(long installation, RepoRef repo, int issue) {
        Pending here = unit.open() ? pending.get() : null;
        if (here == null) {
            return List.of();
        }
        String key = EffectQueue.issueKey(installation, repo, issue);
        List<String> out = new ArrayList<>();
        here.effects.forEach((h, e) -> {
            if (EffectQueue.issueKey(e).equals(key)) {
                out.add(h);
            }
        });
        return out;
    }

    /** The calling thread's effects of its open unit, joined to the unit at first use. */
    private Pending pending() {
        Pending here = pending.get();
        if (here == null) {
            here = new Pending();
            pending.set(here);
            unit.join(here);
        }
        return here;
    }

    /** One unit's effects, taking part in its end. */
    private final class Pending implements UnitOfWork.Participant {
        final Map<String, Effect> effects = new LinkedHashMap<>();
        /** Per issue ({@link EffectQueue#issueKey}): what its first effect queued in the unit waits for. */
        final Map<String, List<String>> after = new LinkedHashMap<>();
        /** Those this replica claimed (another replica may have claimed one first). */
        Set<String> claimed = Set.of();
        /** The term they were claimed in, read before the commit: a lapse after it changes the term. */
        long term = ReplicaClaims.NO_TERM;

        /**
         * Each claim keeps what its effect waits for: here only the issue's first effect waits (the
         * rest wait behind it in its queue), but a replica taking the claims over takes them into a
         * queue of its own, so every effect of the issue names it.
         */
        @Override
        public void beforeCommit() {
            Map<String, Replicas.ClaimedEffect> queued = new LinkedHashMap<>();
            effects.forEach((h, e) -> queued.put(h, new Replicas.ClaimedEffect(ReplicaClaims.json(e),
                    after.get(EffectQueue.issueKey(e)))));
            term = claims.currentTerm();
            claimed = claims.claimAll(queued);
        }

        @Override
        public void committed() {
            pending.remove();
            try {
                effects.forEach((h, e) -> {
                    String issue = EffectQueue.issueKey(e);
                    if (queue.add(e, false, after.get(issue), false)) {
                        after.remove(issue); // the issue's first effect queued here waits; the rest wait behind it
                    }
                    if (claimed.contains(h)) {
                        claims.claimedHere(h, term);
                    }
                });
            } catch (RuntimeException e) {
                // claimed but not in the journal (a full disk): the next flush takes them up from their claims
                claims.checkOwnClaimsAgain();
                throw e;
            }
        }

        @Override
        public void rolledBack() {
            pending.remove();
        }
    }
}
