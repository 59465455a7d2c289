package dev.agentx.clarify.github.recovery;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.agentx.clarify.files.JsonSupport;
import dev.agentx.clarify.github.api.GitHubApiException;
import dev.agentx.clarify.github.api.GitHubGateway;
import dev.agentx.clarify.metrics.ServerMetrics;
import dev.agentx.clarify.store.RecoveryPosition;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.HashSet;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.function.Predicate;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Nothing missed while the server was down: GitHub does not retry a failed delivery, but keeps
 * each App's deliveries for three days and redelivers one on request. A pass lists them back to
 * where the last pass stopped (the first pass: the whole retention window) and asks GitHub to
 * redeliver each one of an event the App acts on whose GUID this server never received. A
 * redelivery keeps its GUID, so the inbox's dedupe keeps it exactly once even when GitHub's
 * record is stale (a delivery it marks failed because the 202 came late is already received here
 * and is not asked for). Where the pass stopped, the GUIDs it asked for (one is asked for again
 * after an hour if it still has not arrived) and those GitHub refused to redeliver (never asked
 * for again), are kept in its {@link RecoveryPosition} (the data dir's
 * {@code recovery.json}; on PostgreSQL a note every replica shares), so a restart, or another
 * replica taking the pass over, does not rescan three days, and {@code agentx deliveries} can tell
 * what was recovered.
 */
public final class DeliveryRecovery {
    private static final Logger LOG = LoggerFactory.getLogger(DeliveryRecovery.class);
    /** The events the App acts on; deliveries of any other are left alone. */
    public static final Set<String> EVENTS = Set.of("issue_comment", "issues", "pull_request", "check_run",
            "check_suite");
    /** How long GitHub keeps an App's deliveries. */
    public static final Duration RETENTION = Duration.ofDays(3);
    /** A delivery this recent may still be on its way: the next pass looks at it. */
    static final Duration IN_FLIGHT = Duration.ofMinutes(1);
    /** A redelivery asked for is not asked for again within this time. */
    static final Duration ASKED = Duration.ofHours(1);
    static final int ATTEMPTS = 3;

    /** What a pass did. {@code complete} false: it stopped early (a rate limit, GitHub unreachable). */
    public record Report(int listed, int missing, int requested, int failed, boolean complete) {
    }

    /** Sleeps between retries of a redelivery request; tests pass one that does not. */
    @FunctionalInterface
    public interface Backoff {
        void pause(int attempt) throws InterruptedException;
    }

    private final GitHubGateway github;
    private final Predicate<String> received;
    private final RecoveryPosition position;
    private final Clock clock;
    private final ServerMetrics metrics;
    private final Backoff backoff;

    /** @param received whether this server ever received (accepted) the delivery with this GUID */
    public DeliveryRecovery(GitHubGateway github, Predicate<String> received, RecoveryPosition position, Clock clock,
                            ServerMetrics metrics, Backoff backoff) {
        this.github = github;
        this.received = received;
        this.position = position;
        this.clock = clock;
        this.metrics = metrics;
        this.backoff = backoff;
    }

    /** The backoff of a running server: 2 s, then 4 s. */
    public static Backoff standardBackoff() {
        return attempt -> Thread.sleep(2000L << (attempt - 1));
    }

    /** One pass; never throws for GitHub's failures (they end the pass early, to be resumed by the next). */
    public synchronized Report pass() {
        Instant now = clock.instant();
        State state = load(position);
        // a little overlap with the last pass costs nothing: what it saw is received or asked for
        Instant from = state.checkedThrough != null ? state.checkedThrough.minus(IN_FLIGHT) : now.minus(RETENTION);
        Instant settled = now.minus(IN_FLIGHT);
        state.asked.values().removeIf(at -> at.isBefore(now.minus(RETENTION)));
        state.refused.values().removeIf(at -> at.isBefore(now.minus(RETENTION)));
        Set<String> thisPass = new HashSet<>();
        int listed = 0;
        int missing = 0;
        int requested = 0;
        int failed = 0;
        Instant retryFrom = null; // the oldest delivery whose redelivery failed for now: the next pass asks again
        String cursor = null;
        try {
            pages:
            do {
                GitHubGateway.DeliveryPage page = github.deliveries(cursor);
                for (GitHubGateway.Delivery d : page.deliveries()) {
                    if (d.deliveredAt().isBefore(from)) {
                        break pages; // newest first: the rest was checked by an earlier pass
                    }
                    listed++;
                    if (d.deliveredAt().isAfter(settled)) {
                        continue;
                    }
                    Instant asked = state.asked.get(d.guid());
                    if (!EVENTS.contains(d.event()) || received.test(d.guid()) || state.refused.containsKey(d.guid())
                            || asked != null && asked.isAfter(now.minus(ASKED)) || !thisPass.add(d.guid())) {
                        continue;
                    }
                    missing++;
                    switch (redeliver(d, now)) {
                        case REQUESTED -> {
                            requested++;
                            state.asked.put(d.guid(), now);
                        }
                        case FAILED_FOR_NOW -> {
                            failed++;
                            retryFrom = retryFrom == null || d.deliveredAt().isBefore(retryFrom) ? d.deliveredAt()
                                    : retryFrom;
                        }
                        case REFUSED -> {
                            // kept, so that a pass resuming from an older delivery that failed for now
                            // does not ask for this one again
                            failed++;
                            state.refused.put(d.guid(), now);
                        }
                    }
                }
                cursor = page.next();
            } while (cursor != null);
        } catch (GitHubApiException e) {
            LOG.warn("recovery: listing the App's deliveries failed ({}); the next pass goes on from {}",
                    e.getMessage(), from);
            save(state);
            return new Report(listed, missing, requested, failed, false);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            save(state);
            return new Report(listed, missing, requested, failed, false);
        }
        // every delivery up to it was listed, and asked for unless GitHub could not take the request now
        // (one asked for is never newer than settled: those are left to the next pass)
        state.checkedThrough = retryFrom != null ? retryFrom : settled;
        save(state);
        if (missing > 0) {
            LOG.info("recovery: {} deliveries GitHub lists were never received here; {} redelivered, {} failed",
                    missing, requested, failed);
        }
        return new Report(listed, missing, requested, failed, true);
    }

    /** What became of a redelivery request. */
    private enum Outcome {
        REQUESTED,
        /** GitHub did not answer or failed (a 5xx): the next pass asks again. */
        FAILED_FOR_NOW,
        /** GitHub refused it (a 4xx): not asked for again. */
        REFUSED
    }

    /**
     * Asks for one redelivery, retrying a bounded number of times what GitHub may take later (no
     * answer, a 5xx); a refusal (a 4xx: the delivery too old, gone) is not asked again; a rate
     * limit ends the pass.
     */
    private Outcome redeliver(GitHubGateway.Delivery d, Instant now) throws InterruptedException {
        Duration age = Duration.between(d.deliveredAt(), now);
        for (int attempt = 1; ; attempt++) {
            try {
                github.redeliver(d.id());
                LOG.info("recovery: delivery {} ({}.{}, {} min old, GitHub answered {}) was never received; "
                        + "asked GitHub to deliver it again", d.guid(), d.event(), d.action(), age.toMinutes(),
                        d.statusCode());
                metrics.redelivery(true);
                return Outcome.REQUESTED;
            } catch (GitHubApiException e) {
                if (e.rateLimited()) {
                    throw e; // honoured like every other call: the pass stops, the next one resumes
                }
                boolean forNow = e.retryable();
                if (attempt == ATTEMPTS || !forNow) {
                    LOG.error("recovery: asking GitHub to redeliver {} ({}.{}) failed {}: {}; {}", d.guid(),
                            d.event(), d.action(), attempt == 1 ? "once" : attempt + " times", e.getMessage(),
                            forNow ? "the next pass asks again" : "not asked for again");
                    metrics.redelivery(false);
                    return forNow ? Outcome.FAILED_FOR_NOW : Outcome.REFUSED;
                }
                backoff.pause(attempt);
            }
        }
    }

    /** Where the last pass stopped, and the GUIDs asked for and refused within GitHub's retention window. */
    private static final class State {
        Instant checkedThrough;
        final Map<String, Instant> asked = new TreeMap<>();
        final Map<String, Instant> refused = new TreeMap<>();
    }

    /** The GUIDs the recovery passes asked GitHub to redeliver, with when (empty when nothing was written). */
    public static Map<String, Instant> asked(RecoveryPosition position) {
        return load(position).asked;
    }

    private static State load(RecoveryPosition position) {
        State s = new State();
        try {
            Optional<JsonNode> read = position.read();
            if (read.isEmpty()) {
                return s;
            }
            JsonNode n = read.get();
            if (n.hasNonNull("checkedThrough")) {
                s.checkedThrough = Instant.parse(n.get("checkedThrough").asText());
            }
            n.path("asked").fields().forEachRemaining(f -> s.asked.put(f.getKey(), Instant.parse(f.getValue().asText())));
            n.path("refused").fields().forEachRemaining(f -> s.refused.put(f.getKey(),
                    Instant.parse(f.getValue().asText())));
        } catch (RuntimeException e) {
            LOG.warn("recovery: {} cannot be read ({}); this pass covers GitHub's whole retention window", position,
                    e.getMessage());
            return new State();
        }
        return s;
    }

    private void save(State s) {
        ObjectNode n = JsonSupport.shared().createObjectNode();
        if (s.checkedThrough != null) {
            n.put("checkedThrough", s.checkedThrough.toString());
        }
        ObjectNode asked = n.putObject("asked");
        s.asked.forEach((guid, at) -> asked.put(guid, at.toString()));
        ObjectNode refused = n.putObject("refused");
        s.refused.forEach((guid, at) -> refused.put(guid, at.toString()));
        position.write(n);
    }
}
