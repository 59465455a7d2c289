package dev.agentx.clarify.github.outbox;

import dev.agentx.clarify.store.Replicas;
import java.time.Clock;
import java.time.Instant;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The installations held back by a rate limit, until when. A rate limit (429, a secondary limit,
 * an exhausted primary limit) holds back every effect of its installation, not only the one that
 * met it: the installation's budget is one. Replicas on one database share it too ({@link
 * Replicas#holdInstallation}): each records the limits it meets and takes up the others' at every
 * tick.
 */
final class RateLimitHolds {
    private static final Logger LOG = LoggerFactory.getLogger(Outbox.class);
    private final Replicas replicas;
    private final Clock clock;
    private final Map<Long, Instant> held = new ConcurrentHashMap<>();

    RateLimitHolds(Replicas replicas, Clock clock) {
        this.replicas = replicas;
        this.clock = clock;
    }

    /** Whether {@code effect} waits at {@code now}: its installation is held. */
    boolean holds(Effect effect, Instant now) {
        Instant until = held.get(effect.installation());
        return until != null && now.isBefore(until);
    }

    /**
     * {@code effect} met a rate limit: holds back its installation's effects until {@code until}
     * (a later hold wins), here and on every replica.
     */
    void hold(Effect effect, Instant until) {
        long installation = effect.installation();
        merge(installation, until);
        try {
            replicas.holdInstallation(installation, until); // other replicas share its budget
        } catch (RuntimeException hx) {
            LOG.warn("outbox: cannot share the rate limit of installation {} with other replicas: {}", installation,
                    hx.toString());
        }
    }

    /** Takes over the rate limits other replicas met (at every tick: between ticks a replica finds its own). */
    void refresh() {
        try {
            replicas.installationHolds(clock.instant()).forEach(this::merge);
        } catch (RuntimeException ex) {
            LOG.warn("outbox: cannot read the rate limits other replicas met: {}", ex.toString());
        }
    }

    private void merge(long installation, Instant until) {
        held.merge(installation, until, (a, b) -> a.isAfter(b) ? a : b);
    }
}
