package dev.agentx.clarify.github.outbox;

import dev.agentx.clarify.github.api.GitHubApiException;
import java.time.Instant;
import java.util.Optional;
import java.util.function.BooleanSupplier;

/**
 * How one kind of effect is sent: the call it makes, how a failure of that call reads and when it
 * is tried again. Everything else is written once for every kind ({@link SendLoop}): the order of
 * an issue's effects, the queue record made durable before a send, the claim among replicas, the
 * rate-limit holds, the done mark, the retry records and the move to {@code failed/}. A new kind of
 * effect is a new {@link Effect} value and its sender in {@link EffectSenders}.
 */
@FunctionalInterface
interface EffectSender<E extends Effect> {
    /**
     * Makes the effect's call; returns once the receiver confirmed it (or it was found done by an
     * earlier attempt), throws when it was not.
     */
    void send(E effect, Attempt attempt);

    /**
     * What {@code e}, thrown by {@link #send}, says of the attempt; empty when it is no answer of
     * the call (a bug: the effect is dropped to {@code failed/}). GitHub's calls fail with a
     * {@link GitHubApiException}.
     */
    default Optional<SendFailure> failure(RuntimeException e) {
        return e instanceof GitHubApiException g ? Optional.of(SendFailure.of(g)) : Optional.empty();
    }

    /** When a failed attempt is tried again. */
    default RetryPolicy retry() {
        return RetryPolicy.GITHUB;
    }

    /**
     * Whether the effect is a call to GitHub: it then waits while its installation is held back by
     * a rate limit GitHub set ({@link RateLimitHolds}), and goes where its repository is now, held
     * while the App may not post there ({@link Destinations}). False for calls to others.
     */
    default boolean toGitHub() {
        return true;
    }

    /** Told that the effect was given up on after {@code attempts} attempts, the last failing with {@code reason}. */
    default void gaveUp(E effect, int attempts, String reason) {
    }

    /**
     * What a sender knows of the attempt beside its effect. {@code queuedAt}: when the effect was
     * queued (null if not known). {@code uncertain}: an earlier attempt, or another replica, may
     * have made the call already. {@code claimLapsed}: whether this replica's claim of the effect
     * has lapsed since it was checked (its heartbeats stopped reaching the database), asked after
     * the call. {@code number}: this attempt's number, from 1.
     */
    record Attempt(Instant queuedAt, boolean uncertain, BooleanSupplier claimLapsed, int number) {
        /** Whether another replica may have made the call too, as things stand now. */
        boolean maybeTwice() {
            return uncertain || claimLapsed.getAsBoolean();
        }
    }
}
