package dev.agentx.clarify.github.handlers;

import com.fasterxml.jackson.databind.JsonNode;
import dev.agentx.clarify.github.Payloads;
import dev.agentx.clarify.github.RepoRef;
import dev.agentx.clarify.github.RepositoryNames;
import dev.agentx.clarify.store.InboundDelivery;
import dev.agentx.clarify.store.RepositoryRecords.Installation;
import java.time.Instant;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A repository's life as GitHub reports it, recorded in {@link RepositoryNames}: {@code
 * repository} renamed and transferred (its state follows its id under the new name), archived and
 * unarchived (posting there stops, and resumes); {@code installation} deleted and suspended (posting
 * through it stops; what is queued waits), unsuspended and created (posting resumes, through the new
 * installation for the repositories it lists); {@code installation_repositories} removed and added
 * (likewise per repository). Nothing here changes a ledger or queues an effect: the outbox asks
 * {@link RepositoryNames} where each effect goes when it sends it.
 */
final class RepositoryEvents {
    private static final Logger LOG = LoggerFactory.getLogger(DeliveryHandler.class);
    private final RepositoryNames names;

    RepositoryEvents(RepositoryNames names) {
        this.names = names;
    }

    /** Records what delivery {@code d} ({@code repository}, {@code installation} or {@code installation_repositories}) says. */
    void record(InboundDelivery d, JsonNode p, String action) {
        long installation = Payloads.id(p.path("installation").get("id"));
        Instant at = d.receivedAt();
        switch (d.event() + "." + action) {
            case "repository.renamed", "repository.transferred" -> repository(d, p).ifPresent(ref -> {
                RepoRef now = names.seen(ref, installation, at);
                LOG.info("{}.{}: repository id {} is {}", d.event(), action, ref.id(), now);
            });
            case "repository.archived", "repository.unarchived" -> repository(d, p).ifPresent(ref -> {
                boolean archived = action.equals("archived");
                names.archived(ref, installation, archived, at);
                LOG.warn(archived ? "repository {} (id {}) is archived: nothing is posted there until it is "
                        + "unarchived; what is queued for it waits (and is dropped after {} days)"
                        : "repository {} (id {}) is unarchived: posting there resumes", ref, ref.id(),
                        dev.agentx.clarify.github.outbox.Destinations.RETENTION.toDays());
            });
            case "installation.deleted", "installation.suspend" -> {
                String state = action.equals("deleted") ? Installation.DELETED : Installation.SUSPENDED;
                names.installationGone(installation, state, at);
                LOG.warn("installation {} on {} is {}: nothing is posted through it; what is queued waits for it to "
                        + "come back (dropped after {} days)", installation, account(p), state,
                        dev.agentx.clarify.github.outbox.Destinations.RETENTION.toDays());
            }
            case "installation.unsuspend" -> {
                names.installationBack(installation);
                LOG.info("installation {} on {} is unsuspended: posting through it resumes", installation, account(p));
            }
            case "installation.created" -> {
                names.installationBack(installation);
                p.path("repositories").forEach(r -> listed(d, r).ifPresent(ref ->
                        names.removed(ref, installation, false, at)));
                LOG.info("installation {} on {} is created ({} repositories): posting through it starts, and what was "
                        + "queued for its repositories goes out through it", installation, account(p),
                        p.path("repositories").size());
            }
            case "installation_repositories.removed", "installation_repositories.added" -> {
                boolean removed = action.equals("removed");
                p.path(removed ? "repositories_removed" : "repositories_added").forEach(r -> listed(d, r)
                        .ifPresent(ref -> {
                            names.removed(ref, installation, removed, at);
                            LOG.info(removed ? "repository {} (id {}) was taken out of installation {}: nothing is "
                                    + "posted there; what is queued waits" : "repository {} (id {}) was added to "
                                    + "installation {}: posting there resumes", ref, ref.id(), installation);
                        }));
            }
            default -> LOG.info("{} {}: installation {} on {}", d.event(), action, installation, account(p));
        }
    }

    private static String account(JsonNode p) {
        return p.path("installation").path("account").path("login").asText("?");
    }

    /** The payload's {@code repository}, by owner, name and id; empty (logged) when it names none. */
    private static Optional<RepoRef> repository(InboundDelivery d, JsonNode p) {
        JsonNode r = p.path("repository");
        try {
            long id = Payloads.id(r.get("id"));
            if (id > 0) {
                return Optional.of(new RepoRef(r.path("owner").path("login").asText(null), r.path("name").asText(null),
                        id));
            }
        } catch (IllegalArgumentException e) {
            // logged below
        }
        LOG.warn("delivery {} ({}): names no repository by owner, name and id; ignored", d.id(), d.event());
        return Optional.empty();
    }

    /** A repository as an installation's list names it ({@code id}, {@code full_name}). */
    private static Optional<RepoRef> listed(InboundDelivery d, JsonNode r) {
        try {
            long id = Payloads.id(r.get("id"));
            if (id > 0) {
                return Optional.of(RepoRef.parse(r.path("full_name").asText("")).withId(id));
            }
        } catch (IllegalArgumentException e) {
            // logged below
        }
        LOG.warn("delivery {} ({}): a repository listed without id and full name; skipped", d.id(), d.event());
        return Optional.empty();
    }
}
