package dev.agentx.clarify.github.api;

import java.time.Duration;

/**
 * A GitHub REST call that failed. {@code status} is the HTTP status, or -1 when no response came
 * back. {@code retryAfter} is GitHub's own wait (Retry-After, or the rate limit reset) when it
 * gave one.
 */
public final class GitHubApiException extends RuntimeException {
    private final int status;
    private final Duration retryAfter;
    private final boolean rateLimited;

    public GitHubApiException(String message, int status, Duration retryAfter, boolean rateLimited, Throwable cause) {
        super(message, cause);
        this.status = status;
        this.retryAfter = retryAfter;
        this.rateLimited = rateLimited;
    }

    public int status() {
        return status;
    }

    /** GitHub's requested wait, or null. */
    public Duration retryAfter() {
        return retryAfter;
    }

    /** A primary or secondary rate limit: everything of this installation should wait. */
    public boolean rateLimited() {
        return rateLimited;
    }

    /** Worth trying again later: no response, a server error or a rate limit. */
    public boolean retryable() {
        return rateLimited || status < 0 || status >= 500 || status == 429 || status == 408;
    }

    /** The request may have been carried out although it failed (no response, or a server error). */
    public boolean uncertain() {
        return status < 0 || status >= 500;
    }

    public boolean notFound() {
        return status == 404;
    }
}
