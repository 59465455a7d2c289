package dev.agentx.clarify.github.outbox;

import dev.agentx.clarify.github.RepoRef;
import java.time.Duration;
import java.time.Instant;

/**
 * Where an effect goes now, which may differ from where it was queued: a repository renamed or
 * transferred since has another name (its id is the same), an App installed again another
 * installation; and whether its repository may be posted to at all (an installation deleted or
 * suspended, a repository archived or taken out of its installation). The outbox asks before each
 * send and sends with the installation and name answered; an effect that may not be sent waits,
 * and is dropped to {@code failed/} once it has waited past {@link #RETENTION}.
 */
@FunctionalInterface
public interface Destinations {
    /**
     * How long an effect waits for its repository to be posted to again: GitHub's webhook
     * redelivery window. Past it, what the effect would have answered or said is older than any
     * delivery GitHub could still send again.
     */
    Duration RETENTION = Duration.ofDays(3);

    /** Where an effect goes now. */
    sealed interface Destination {
    }

    /** Send as installation {@code installation} to {@code repo} (its current name). */
    record To(long installation, RepoRef repo) implements Destination {
    }

    /** Not now: {@code why} (for the log), since {@code since}. */
    record Held(String why, Instant since) implements Destination {
    }

    /** Where an effect queued for {@code installation} and {@code repo} goes now. */
    Destination of(long installation, RepoRef repo);

    /** Every effect where it was queued: no repository is followed, none held. */
    Destinations AS_QUEUED = To::new;
}
