package dev.agentx.clarify.github.inbox;

import dev.agentx.clarify.store.DeliveryQueue;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The worker's deliveries as lines, one per order key ({@link Line}): which deliveries it has been
 * handed (each goes into its line once), and which of them found, at their last take, an earlier
 * delivery of their issue held by another replica.
 */
final class Lines {
    private final Map<String, Line> byKey = new ConcurrentHashMap<>();
    /** Deliveries (by number) in a line here, from their hand-over until they are done with. */
    private final Set<Long> tracked = ConcurrentHashMap.newKeySet();
    /** Deliveries (by number) whose last take found an earlier one of their line held by another replica. */
    private final Set<Long> waitingElsewhere = ConcurrentHashMap.newKeySet();

    /** Notes that a delivery was handed over; false if it was before (it is in a line already). */
    boolean track(long seq) {
        return tracked.add(seq);
    }

    boolean tracks(long seq) {
        return tracked.contains(seq);
    }

    /** The line of {@code key}, made if there is none. */
    Line lineFor(String key) {
        return byKey.computeIfAbsent(key, Line::new);
    }

    /** The line of {@code key}, or null. */
    Line get(String key) {
        return byKey.get(key);
    }

    Collection<Line> all() {
        return byKey.values();
    }

    Set<String> keys() {
        return byKey.keySet();
    }

    /** The delivery at the head of {@code line} is done with (processed or failed): out of its line; the caller holds its monitor. */
    void remove(Line line, DeliveryQueue.Queued head) {
        line.items.remove(head);
        tracked.remove(head.seq());
    }

    /** Removes the line from the map if nothing is left in it and nobody works on it; the caller holds its monitor. */
    void retireIfIdle(Line line) {
        if (line.items.isEmpty() && !line.running && !line.retired) {
            line.retired = true;
            byKey.remove(line.key, line);
        }
    }

    /** Notes that the delivery waits for another replica; true if its previous take did not. */
    boolean waitElsewhere(long seq) {
        return waitingElsewhere.add(seq);
    }

    /** Forgets that the delivery waited for another replica; true if its previous take found it did. */
    boolean stopWaitingElsewhere(long seq) {
        return waitingElsewhere.remove(seq);
    }

    boolean waitsElsewhere(long seq) {
        return waitingElsewhere.contains(seq);
    }

    /** When the oldest delivery that is due (not waiting out a retry) was received, if any waits. */
    Optional<Instant> oldestDue(Instant now) {
        Instant oldest = null;
        for (Line line : byKey.values()) {
            synchronized (line) {
                Instant since = line.dueSince(now);
                if (since != null && (oldest == null || since.isBefore(oldest))) {
                    oldest = since;
                }
            }
        }
        return Optional.ofNullable(oldest);
    }

    /** Claims every line nobody works on whose first delivery is due, in the order their first deliveries were received. */
    List<Line> claimDue(Instant now) {
        List<Line> ordered = new ArrayList<>();
        for (Line line : byKey.values()) {
            synchronized (line) {
                if (line.claim(now)) {
                    ordered.add(line);
                }
            }
        }
        ordered.sort(Comparator.comparingLong(Lines::firstSeq));
        return ordered;
    }

    private static long firstSeq(Line line) {
        synchronized (line) {
            return line.firstSeq();
        }
    }
}
