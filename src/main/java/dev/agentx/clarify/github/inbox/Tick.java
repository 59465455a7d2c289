package dev.agentx.clarify.github.inbox;

import dev.agentx.clarify.github.outbox.Outbox;
import dev.agentx.clarify.store.DeliveryQueue;
import dev.agentx.clarify.store.Replicas;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What the worker does every {@link Worker#TICK}: syncs the inbox's done records and forgets the
 * progress notes of deliveries durably done with, tidies the queue, once a day prunes both journals
 * and (one replica at a time) forgets old claims of effects, takes up deliveries left by replicas
 * that are gone, takes up lines whose wait is over and sends the effects that are due. In the
 * synchronous mode {@link #drain} does the same on the caller's thread, working the lines there.
 */
final class Tick {
    /** The worker's log: its parts log as one. */
    private static final Logger LOG = LoggerFactory.getLogger(Worker.class);
    /** Replicas' claims of effects are kept this long: longer than GitHub keeps a delivery. */
    static final Duration KEEP_CLAIMS = Duration.ofDays(7);
    /** The lease under which one replica forgets old claims; longer than the day between its runs. */
    static final String FORGET_CLAIMS = "forget-claims";
    static final Duration FORGET_CLAIMS_LEASE = Duration.ofDays(1).plusHours(1);

    private final DeliveryQueue inbox;
    private final Outbox outbox;
    private final Replicas replicas;
    private final Clock clock;
    private final ProgressNotes notes;
    private final Lines lines;
    private final Lanes lanes;
    private final Object maintenance = new Object();
    private Instant lastPrune = Instant.MIN;

    Tick(DeliveryQueue inbox, Outbox outbox, Replicas replicas, Clock clock, ProgressNotes notes, Lines lines,
         Lanes lanes) {
        this.inbox = inbox;
        this.outbox = outbox;
        this.replicas = replicas;
        this.clock = clock;
        this.notes = notes;
        this.lines = lines;
        this.lanes = lanes;
    }

    /** The lanes' tick, on its thread: forget old ids once a day, take up lines whose retry is due, send due effects. */
    void run() {
        try {
            maintain();
            Instant now = clock.instant();
            adopt(now);
            lanes.takeUpDue(now);
            outbox.flush();
        } catch (RuntimeException e) {
            LOG.error("worker tick: {}", e.toString(), e);
        }
    }

    /**
     * Processes every due delivery on the caller's thread, line by line in the order their first
     * deliveries were received (lines a lane is working on are left to it), then sends every due
     * effect.
     */
    void drain() {
        maintain();
        Instant now = clock.instant();
        adopt(now);
        for (Line line : lines.claimDue(now)) {
            lanes.work(line, Integer.MAX_VALUE);
        }
        outbox.flush();
    }

    /** At shutdown: the done records on disk, so the next start processes nothing again. */
    void syncDoneQuietly() {
        try {
            synchronized (maintenance) {
                notes.forgetDone();
            }
        } catch (RuntimeException e) {
            LOG.warn("cannot record which deliveries are done at shutdown (the inbox's journal, or the database); "
                    + "deliveries done since the last tick may be processed again at the next start (no command runs "
                    + "twice): {}", e.toString());
        }
    }

    /** Takes up the deliveries of replicas that are gone (none on the file store). */
    private void adopt(Instant now) {
        if (lanes.closed()) {
            return;
        }
        List<DeliveryQueue.Queued> left;
        try {
            left = inbox.adoptable(now);
        } catch (RuntimeException e) {
            LOG.warn("worker: cannot look for deliveries left by replicas that are gone: {}", e.toString());
            return;
        }
        int n = 0;
        for (DeliveryQueue.Queued q : left) {
            if (!lines.tracks(q.seq())) {
                n++;
                lanes.submit(q);
            }
        }
        if (n > 0) {
            // also this replica's own that no acknowledging thread handed over (an insert that committed
            // though its answer was lost); those being acknowledged now are not adoptable
            LOG.info("worker: taking up {} queued deliveries no lane here had (left by replicas that are gone, "
                    + "or queued here by an insert whose answer was lost)", n);
        }
    }

    private void maintain() {
        synchronized (maintenance) {
            try {
                notes.forgetDone();
            } catch (RuntimeException e) {
                // a failed sync of the inbox's journal forgets nothing: the notes wait for the next tick
                LOG.warn("worker: cannot record which deliveries are done (the inbox's journal, or the database); "
                        + "progress notes kept for the next tick: {}", e.toString());
            }
            try {
                inbox.tidy();
            } catch (RuntimeException e) {
                LOG.warn("worker: cannot tidy the delivery queue; at the next tick again: {}", e.toString());
            }
            if (clock.instant().isAfter(lastPrune.plus(Duration.ofDays(1)))) {
                inbox.prune();
                outbox.prune();
                try {
                    // the claims are every replica's: one at a time forgets the old ones, under a lease
                    // its holder renews at each daily run and another takes over once it lapses
                    Instant now = clock.instant();
                    if (replicas.lease(FORGET_CLAIMS, now, FORGET_CLAIMS_LEASE)) {
                        replicas.forgetClaims(now.minus(KEEP_CLAIMS));
                    }
                } catch (RuntimeException e) {
                    LOG.warn("worker: cannot forget old claims of effects; tomorrow again: {}",
                            e.toString());
                }
                lastPrune = clock.instant();
            }
        }
    }
}
