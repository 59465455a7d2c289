package dev.agentx.clarify.github.outbox;

import dev.agentx.clarify.github.api.GitHubApiException;
import java.time.Duration;

/**
 * A failed attempt to send an effect, as its {@link EffectSender} reads the answer.
 * {@code retryable}: worth trying again later (no answer, a server error, a rate limit).
 * {@code uncertain}: the call may have been carried out although it failed (no answer, a server
 * error), so a later attempt first looks whether it was. {@code rateLimited}: the receiver limits
 * how often it is called, so the effects held back with this one wait too ({@link
 * RateLimitHolds}: on GitHub, the installation's). {@code retryAfter}: the receiver's own wait,
 * or null.
 */
record SendFailure(String message, boolean retryable, boolean uncertain, boolean rateLimited, Duration retryAfter) {
    /** A GitHub REST call's failure. */
    static SendFailure of(GitHubApiException e) {
        return new SendFailure(e.getMessage(), e.retryable(), e.uncertain(), e.rateLimited(), e.retryAfter());
    }
}
