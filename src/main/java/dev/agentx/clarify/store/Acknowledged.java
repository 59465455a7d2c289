package dev.agentx.clarify.store;

import java.time.Instant;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.function.Predicate;

/**
 * What a store's {@link DeliveryQueue} holds that a server moved to another store must find there
 * ({@code agentx store copy}): the deliveries it acknowledged and has not done with, in the order
 * received, and the ids of the deliveries it did with lately (processed or failed; GitHub's
 * redelivery of one of them is a duplicate), with when each was done with.
 */
public record Acknowledged(List<Waiting> waiting, SortedMap<String, Instant> done) {
    /** Nothing waiting, no id done with. */
    public static final Acknowledged NONE = new Acknowledged(List.of(), new TreeMap<>());

    /**
     * A delivery acknowledged and not done with: as received (id, event, time, order key or "",
     * body) and its failed attempts so far, with when it may be tried again (null: at once).
     */
    public record Waiting(String id, String event, Instant receivedAt, String key, byte[] body, int attempts,
                          Instant notBefore) {
    }

    public Acknowledged {
        waiting = List.copyOf(waiting);
        done = Collections.unmodifiableSortedMap(new TreeMap<>(done));
    }

    /** Every id it holds, waiting or done with. */
    public Set<String> ids() {
        Set<String> out = new HashSet<>(done.keySet());
        waiting.forEach(w -> out.add(w.id()));
        return out;
    }

    /** Only the deliveries and ids {@code keep} accepts, in the same order. */
    public Acknowledged only(Predicate<String> keep) {
        TreeMap<String, Instant> kept = new TreeMap<>();
        done.forEach((id, at) -> {
            if (keep.test(id)) {
                kept.put(id, at);
            }
        });
        return new Acknowledged(waiting.stream().filter(w -> keep.test(w.id())).toList(), kept);
    }
}
