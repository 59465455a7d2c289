package dev.agentx.clarify.github.inbox;

import dev.agentx.clarify.store.DeliveryQueue;
import java.time.Instant;
import java.util.Comparator;
import java.util.PriorityQueue;

/**
 * The deliveries of one order key (one issue) in the queue's order (by number), whatever the order
 * they were handed over in; at most one thread works on them at a time. Every method and field is
 * used under the line's monitor.
 */
final class Line {
    final String key;
    /**
     * By number: two deliveries of one issue acknowledged at the same moment are handed over by
     * their request threads in either order, and the shared queue takes them only in its own
     * ({@link DeliveryQueue.Turn.Wait} for the later one while the earlier is queued).
     */
    final PriorityQueue<DeliveryQueue.Queued> items =
            new PriorityQueue<>(Comparator.comparingLong(DeliveryQueue.Queued::seq));
    /** A thread has claimed the line. */
    boolean running;
    /** Its first delivery waits out a retry until then. */
    Instant notBefore;
    /** Removed from the map: a delivery for its key goes to a new line. */
    boolean retired;
    /** Another replica signalled that the line is free since its lane last took a delivery. */
    boolean freed;

    Line(String key) {
        this.key = key;
    }

    /** Adds a delivery in its place; false if the line is retired (the delivery goes to a new line). */
    boolean add(DeliveryQueue.Queued q) {
        if (retired) {
            return false;
        }
        items.add(q);
        if (items.peek() == q) {
            notBefore = null; // a wait was the later delivery's, which now comes after q
        }
        return true;
    }

    /** Claims the line for a thread if nobody works on it, it holds a delivery and its wait is over. */
    boolean claim(Instant now) {
        if (running || items.isEmpty()) {
            return false;
        }
        if (notBefore != null) {
            if (now.isBefore(notBefore)) {
                return false;
            }
            notBefore = null;
        }
        running = true;
        return true;
    }

    /** When its first delivery was received, if that delivery is due (not waiting out a retry); else null. */
    Instant dueSince(Instant now) {
        DeliveryQueue.Queued head = items.peek();
        if (head == null || (notBefore != null && now.isBefore(notBefore))) {
            return null;
        }
        return head.receivedAt();
    }

    /** The number of its first delivery (the last of all when it holds none). */
    long firstSeq() {
        DeliveryQueue.Queued head = items.peek();
        return head == null ? Long.MAX_VALUE : head.seq();
    }
}
