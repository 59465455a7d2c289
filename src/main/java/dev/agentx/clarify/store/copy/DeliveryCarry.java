package dev.agentx.clarify.store.copy;

import dev.agentx.clarify.protocol.ClarifyException;
import dev.agentx.clarify.protocol.ErrorCode;
import dev.agentx.clarify.store.Acknowledged;
import java.io.UncheckedIOException;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * The webhook deliveries a copy carries from one delivery queue to the other: those the source
 * acknowledged and has not done with, and the ids of those it did with, so that a server on the
 * destination never reads the source's queue and GitHub, which had its acknowledgement, sends
 * none of them again. Chosen and tallied before anything is written; carried after the
 * repositories and read back.
 */
final class DeliveryCarry {
    /**
     * The name holding the deliveries carried into a database when the source names none: a
     * replica that never beats, whose deliveries the first replica to start takes up.
     */
    static final String CARRIED_HOLDER = "agentx-store-copy";

    private final Acknowledged carrying;
    private final DeliveryTally tally;
    private final int alreadyThere;
    private final int left;

    private DeliveryCarry(Acknowledged carrying, int alreadyThere, int left) {
        this.carrying = carrying;
        this.tally = DeliveryTally.of(carrying);
        this.alreadyThere = alreadyThere;
        this.left = left;
    }

    /** What {@code side}'s delivery queue holds; INTERNAL, naming the store, when it cannot be read whole. */
    static Acknowledged read(Side side, Location where) {
        try {
            return side.acknowledged();
        } catch (UncheckedIOException e) {
            throw new ClarifyException(ErrorCode.INTERNAL, "the deliveries of " + where + " cannot be read: "
                    + e.getMessage() + "; nothing was copied.", e);
        }
    }

    /**
     * The deliveries of {@code atSource} that go with a copy of {@code repos} to {@code destination}:
     * those about one of the repositories copied, or about none (with {@code only} absent, every
     * one), and the ids done with, less what the destination has received already.
     */
    static DeliveryCarry choose(Acknowledged atSource, Side destination, Location to, Optional<String> only,
                                List<String> repos) {
        // the deliveries go with the repositories they are about; those about none go with any copy
        List<Acknowledged.Waiting> waiting = atSource.waiting().stream().filter(w -> only.isEmpty()
                || aboutOneOf(w.key(), repos)).toList();
        Acknowledged selected = new Acknowledged(waiting, atSource.done());
        Set<String> there = read(destination, to).ids();
        Acknowledged carrying = selected.only(id -> !there.contains(id));
        return new DeliveryCarry(carrying, selected.ids().size() - carrying.ids().size(),
                atSource.waiting().size() - waiting.size());
    }

    /**
     * Whether a delivery with the order key {@code key} ({@code <repository id>#<issue>}) goes with
     * a copy of {@code repos} (their state keys, GitHub's ids of them): it is about one of them, or
     * about none.
     */
    private static boolean aboutOneOf(String key, List<String> repos) {
        int hash = key.lastIndexOf('#');
        if (key.isEmpty() || hash < 0) {
            return true;
        }
        return repos.contains(key.substring(0, hash));
    }

    /**
     * Carries the chosen deliveries into the destination's delivery queue and reads them back:
     * when that fails or they differ, what the carry and the copy wrote ({@code written}) is
     * removed again.
     */
    StoreCopy.Deliveries carry(Side source, Side destination, Location to, Written written) {
        if (carrying.waiting().isEmpty() && carrying.done().isEmpty()) {
            return new StoreCopy.Deliveries(tally, tally, alreadyThere, left);
        }
        Runnable uncarry = null;
        StoreCopy.Deliveries carried;
        try {
            uncarry = destination.carry(carrying, source.replicaName().orElse(CARRIED_HOLDER));
            Set<String> ids = carrying.ids();
            carried = new StoreCopy.Deliveries(tally, DeliveryTally.of(destination.acknowledged().only(ids::contains)),
                    alreadyThere, left);
        } catch (RuntimeException e) {
            throw new ClarifyException(ErrorCode.INTERNAL, "carrying the deliveries to " + to + " failed: "
                    + e.getMessage() + "; " + written.remove(uncarry), e);
        }
        if (!carried.same()) {
            DeliveryTally s = carried.source();
            DeliveryTally d = carried.destination();
            throw new ClarifyException(ErrorCode.INTERNAL, "the deliveries carried to " + to + " do not match their "
                    + "source: " + s.waiting() + " waiting and " + s.done() + " done with, checksum " + s.checksum()
                    + ", read back as " + d.waiting() + " and " + d.done() + ", checksum " + d.checksum()
                    + "; the source is unchanged; " + written.remove(uncarry));
        }
        return carried;
    }
}
