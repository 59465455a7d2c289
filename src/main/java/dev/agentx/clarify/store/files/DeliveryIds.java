package dev.agentx.clarify.store.files;

import java.time.Instant;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The inbox's dedupe by delivery id, in memory: the ids of deliveries queued and of those done with
 * (processed or failed) in the last {@link FileDeliveryQueue#KEEP_SEEN}, with when. A second delivery
 * with one of them is a duplicate. Accepting takes no lock: concurrent webhook requests add their ids
 * at once, and exactly one of two with the same id adds it.
 */
final class DeliveryIds {
    /** Ids of deliveries pending or seen: a second delivery with one of them is a duplicate. */
    private final Set<String> known = ConcurrentHashMap.newKeySet();
    /** Ids of deliveries done with (processed or failed), and when. */
    private final Map<String, Instant> seen = new ConcurrentHashMap<>();

    /** Adds an id; false if it is known (queued, or done with lately): a duplicate. */
    boolean add(String id) {
        return known.add(id);
    }

    /** Forgets an id added for a delivery that was not queued after all (its append or sync failed). */
    void forget(String id) {
        known.remove(id);
    }

    boolean known(String id) {
        return known.contains(id);
    }

    /** The delivery with this id is done with at {@code at}. */
    void done(String id, Instant at) {
        seen.put(id, at);
    }

    boolean doneWith(String id) {
        return seen.containsKey(id);
    }

    /** At start, once the journal is read: every id done with is known. */
    void knowDone() {
        known.addAll(seen.keySet());
    }

    /** Forgets the ids done with before {@code cutoff}: a delivery with one of them is new again. */
    void forgetDoneBefore(Instant cutoff) {
        seen.entrySet().removeIf(e -> {
            boolean old = e.getValue().isBefore(cutoff);
            if (old) {
                known.remove(e.getKey());
            }
            return old;
        });
    }

    /** The ids done with and when, as a compaction writes them. */
    Set<Map.Entry<String, Instant>> done() {
        return seen.entrySet();
    }

    int doneCount() {
        return seen.size();
    }
}
