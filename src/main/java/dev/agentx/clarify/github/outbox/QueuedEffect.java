package dev.agentx.clarify.github.outbox;

import java.time.Instant;
import java.util.List;

/**
 * What the outbox keeps of one queued effect, and what its journal holds of it (as JSON, under
 * these names). {@code attempts}, {@code notBefore} and {@code lastError}: its failed attempts so
 * far, when it is due again, and why the last one failed. {@code uncertain}: an earlier attempt may
 * have reached GitHub, so a comment is looked for on the issue before it is posted ({@link
 * CommentSender}). {@code delivery}: the id of the delivery whose handling queued it (null if none),
 * for log lines. {@code after}: key hashes of effects of the same issue that other replicas queued
 * before it, which it waits for ({@link ReplicaClaims#waitsForOthers}); null when none.
 * {@code takenOver}: queued here from the claim of a replica that is gone ({@link
 * ReplicaClaims#adoptLeftovers}).
 */
record QueuedEffect(Effect effect, Instant queuedAt, int attempts, Instant notBefore, boolean uncertain,
                    String lastError, String delivery, List<String> after, boolean takenOver) {
    QueuedEffect retried(int attempts, Instant notBefore, boolean uncertain, String lastError) {
        return new QueuedEffect(effect, queuedAt, attempts, notBefore, uncertain, lastError, delivery, after,
                takenOver);
    }

    /** The same, as one whose earlier attempt may have reached GitHub. */
    QueuedEffect asUncertain() {
        return retried(attempts, notBefore, true, lastError);
    }

    QueuedEffect withoutWait() {
        return new QueuedEffect(effect, queuedAt, attempts, notBefore, uncertain, lastError, delivery, null,
                takenOver);
    }
}
