package dev.agentx.clarify.github.outbox;

import dev.agentx.clarify.metrics.ServerMetrics;
import dev.agentx.clarify.store.Replicas;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Locale;
import java.util.Optional;
import java.util.OptionalLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.slf4j.MDC;

/**
 * The claim-send-mark loop, written once for every kind of effect: sends an issue's effects in
 * the order queued until one is not due or fails for now. For each effect: not while its
 * installation is held by a rate limit or its retry is not due; its queue record made durable
 * first; not while it waits for effects another replica queued before it; claimed among replicas
 * (one another replica claimed holds the issue back; one it sent is dropped here); sent by its
 * kind's {@link EffectSender}; then marked done, or retried by the sender's {@link RetryPolicy}
 * (a rate limit holding back the installation), or moved to {@code failed/}. A failure holds back
 * the later effects of its issue only, never other issues.
 */
final class SendLoop {
    private static final Logger LOG = LoggerFactory.getLogger(Outbox.class);
    private final EffectQueue queue;
    private final ReplicaClaims claims;
    private final RateLimitHolds holds;
    private final EffectSenders senders;
    private final ServerMetrics metrics;
    private final Clock clock;
    private final java.util.function.Supplier<Destinations> destinations;

    SendLoop(EffectQueue queue, ReplicaClaims claims, RateLimitHolds holds, EffectSenders senders,
             ServerMetrics metrics, Clock clock, java.util.function.Supplier<Destinations> destinations) {
        this.destinations = destinations;
        this.queue = queue;
        this.claims = claims;
        this.holds = holds;
        this.senders = senders;
        this.metrics = metrics;
        this.clock = clock;
    }

    /**
     * Sends the issue's due effects unless another thread is sending them; that thread then goes
     * round once more, so nothing asked for is left behind.
     */
    Outbox.Flush flush(IssueQueue q) {
        Outbox.Flush total = new Outbox.Flush(0, 0, 0);
        q.requests.incrementAndGet();
        while (q.requests.get() > 0 && q.sending.tryLock()) {
            try {
                q.requests.set(0);
                total = total.plus(send(q));
            } finally {
                q.sending.unlock();
                queue.syncAll(); // the done and retry records of this round: one fsync for all of them
            }
        }
        queue.retireIfIdle(q);
        return total;
    }

    /** Sends the issue's effects in order until one is not due or fails for now; the caller holds {@code q.sending}. */
    private Outbox.Flush send(IssueQueue q) {
        int ok = 0;
        int bad = 0;
        while (true) {
            Slot slot = q.next();
            if (slot == null) {
                return new Outbox.Flush(ok, bad, 0);
            }
            QueuedEffect entry = slot.entry();
            Effect e = entry.effect();
            EffectSender<Effect> sender = senders.of(e);
            Instant now = clock.instant();
            if ((sender.toGitHub() && holds.holds(e, now))
                    || (entry.notBefore() != null && now.isBefore(entry.notBefore()))) {
                q.recheck = null; // a retry's or rate limit's wait: the tick takes it up
                return new Outbox.Flush(ok, bad, q.size());
            }
            if (sender.toGitHub() && destinations.get().of(e.installation(), e.repo()) instanceof Destinations.Held held) {
                Instant from = entry.queuedAt() == null || held.since().isAfter(entry.queuedAt()) ? held.since()
                        : entry.queuedAt();
                if (!now.isAfter(from.plus(Destinations.RETENTION))) {
                    q.recheck = null; // its repository may not be posted to: the tick looks again
                    return new Outbox.Flush(ok, bad, q.size());
                }
                putContext(entry);
                try {
                    LOG.warn("outbox: dropping {}: {} since {}, and it has waited past GitHub's retention of {} days",
                            e.key(), held.why(), held.since(), Destinations.RETENTION.toDays());
                    giveUp(q, slot, entry.retried(entry.attempts(), null, entry.uncertain(), held.why() + " since "
                            + held.since()), e.getClass().getSimpleName().toLowerCase(Locale.ROOT), sender);
                } finally {
                    clearContext();
                }
                bad++;
                continue;
            }
            queue.syncTo(slot.mark()); // never send what a machine crash could make us forget we queued
            if (entry.after() != null) {
                if (claims.waitsForOthers(entry, now)) {
                    return waitForReplica(q, ok, bad);
                }
                entry = entry.withoutWait(); // in memory: after a restart it looks once more, finding them done
                slot = slot.with(entry);
                q.replace(slot);
            }
            OptionalLong term = claims.termToSend();
            if (term.isEmpty()) {
                return waitForReplica(q, ok, bad);
            }
            putContext(entry);
            String type = e.getClass().getSimpleName().toLowerCase(Locale.ROOT);
            try {
                Replicas.EffectClaim claim;
                try {
                    claim = claims.claim(slot, term.getAsLong(), now);
                } catch (RuntimeException ex) {
                    LOG.warn("outbox: cannot claim {} in the database; its issue waits for the next tick: {}", e.key(),
                            ex.toString());
                    return new Outbox.Flush(ok, bad, q.size());
                }
                if (claim.claim() == Replicas.Claim.PENDING_ELSEWHERE) {
                    LOG.debug("outbox: {} is being sent by replica {}; its issue waits", e.key(), claim.holder());
                    return waitForReplica(q, ok, bad);
                }
                q.recheck = null;
                if (claim.claim() == Replicas.Claim.DONE) {
                    LOG.info("outbox: {} was sent by replica {}; not sending it here", e.key(), claim.holder());
                    queue.markDone(q, slot);
                    ok++;
                    continue;
                }
                if (claim.takenOver()) {
                    LOG.warn("outbox: {} was claimed by replica {}, which is gone or has not sent it in {} min; "
                            + "sending it here (a comment after looking for its tag)", e.key(), claim.holder(),
                            ReplicaClaims.TAKE_OVER.toMinutes());
                    entry = entry.asUncertain();
                }
                if (claims.lapsedSince(term)) {
                    // the heartbeats lapsed while claiming (a slow database): checked again in the next term
                    q.replace(slot.with(entry));
                    return waitForReplica(q, ok, bad);
                }
                sender.send(sender.toGitHub() ? addressed(e) : e, new EffectSender.Attempt(entry.queuedAt(), entry.uncertain(),
                        () -> claims.lapsedSince(term), entry.attempts() + 1));
                Instant at = queue.markDone(q, slot);
                claims.finished(slot.hash());
                metrics.effect(type, "done");
                if (entry.queuedAt() != null) {
                    metrics.effectConfirmed(type, Duration.between(entry.queuedAt(), at));
                }
                ok++;
            } catch (RuntimeException ex) {
                Optional<SendFailure> failure = sender.failure(ex);
                if (failure.isEmpty()) {
                    LOG.error("outbox: dropping {}: {}", e.key(), ex.toString(), ex);
                    giveUp(q, slot, entry.retried(entry.attempts() + 1, null, entry.uncertain(), ex.toString()), type,
                            sender);
                    bad++;
                    continue;
                }
                SendFailure f = failure.get();
                int attempts = entry.attempts() + 1;
                now = clock.instant(); // after the attempt, which may have waited for an answer
                Optional<Duration> retry = sender.retry().retryAfter(attempts, f, entry.queuedAt(), now);
                if (retry.isEmpty()) {
                    LOG.error("outbox: giving up on {} after {} attempt(s): {}", e.key(), attempts, f.message());
                    giveUp(q, slot, entry.retried(attempts, null, entry.uncertain(), f.message()), type, sender);
                    bad++;
                    continue;
                }
                metrics.effect(type, "retry");
                Duration wait = retry.get();
                LOG.warn("outbox: {} failed (attempt {}), retrying in {} s: {}", e.key(), attempts, wait.toSeconds(),
                        f.message());
                queue.retried(q, slot, entry.retried(attempts, now.plus(wait), entry.uncertain() || f.uncertain(),
                        f.message()));
                if (f.rateLimited()) {
                    holds.hold(e, now.plus(wait));
                }
                return new Outbox.Flush(ok, bad, q.size());
            } finally {
                clearContext();
            }
        }
    }

    /**
     * {@code e} as it is sent now: to its repository's current name, as the installation its
     * repository is now reached through ({@link Destinations}, asked right before the send: a
     * rename or a new installation since the effect was queued is followed). One held since the
     * check before this effect is sent as queued; the check holds back the issue's next effect.
     */
    private Effect addressed(Effect e) {
        return destinations.get().of(e.installation(), e.repo()) instanceof Destinations.To to
                ? e.addressedTo(to.installation(), to.repo()) : e;
    }

    /** Moves the effect to {@code failed/}; its claim is done too: another replica's copy would fail as well. */
    private void giveUp(IssueQueue q, Slot slot, QueuedEffect entry, String type, EffectSender<Effect> sender) {
        queue.moveToFailed(q, slot, entry);
        claims.finished(slot.hash());
        metrics.effect(type, "failed");
        sender.gaveUp(entry.effect(), entry.attempts(), entry.lastError());
    }

    /** The issue's first effect waits for another replica: looked at again after {@link IssueQueue#recheck}. */
    private static Outbox.Flush waitForReplica(IssueQueue q, int ok, int bad) {
        q.waitLonger();
        return new Outbox.Flush(ok, bad, q.size());
    }

    /** Log lines about an effect carry the delivery that queued it, its repository and issue, as the worker's do. */
    private static void putContext(QueuedEffect entry) {
        Effect e = entry.effect();
        if (entry.delivery() != null) {
            MDC.put("delivery", entry.delivery());
        }
        MDC.put("repository", e.repo().fullName());
        MDC.put("issue", String.valueOf(e.issue()));
        MDC.put("effect", e.key());
    }

    private static void clearContext() {
        MDC.remove("delivery");
        MDC.remove("repository");
        MDC.remove("issue");
        MDC.remove("effect");
    }
}
