package dev.agentx.clarify.github.outbox;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The effects of one issue in order. Its monitor guards the slots (and {@code retired});
 * {@code sending} lets one thread at a time send them (never held while waiting for the monitor);
 * {@code requests} tells the sender that more was asked for meanwhile.
 */
final class IssueQueue {
    /** The first wait before looking again whether what an issue's effect waits for on another replica is done. */
    static final Duration FIRST_RECHECK = Duration.ofMillis(50);
    /** The longest such wait (the worker's tick also looks, every 5 s). */
    static final Duration MAX_RECHECK = Duration.ofSeconds(2);

    final String key;
    private final TreeMap<Long, Slot> slots = new TreeMap<>();
    final ReentrantLock sending = new ReentrantLock();
    final AtomicInteger requests = new AtomicInteger();
    /** Taken off the outbox's issues: an effect queued now goes into a new queue of the issue. */
    boolean retired;
    /**
     * Set by the sender while the first effect waits for another replica (its claim of the same
     * effect, or effects it queued before): the wait before looking again, doubling from
     * {@link #FIRST_RECHECK} up to {@link #MAX_RECHECK}; null while nothing waits so.
     */
    volatile Duration recheck;
    /** A look again at {@link #recheck} is scheduled: one at a time, however many flushes found it waiting. */
    final AtomicBoolean recheckScheduled = new AtomicBoolean();

    IssueQueue(String key) {
        this.key = key;
    }

    /** The first effect waits for another replica: it is looked at again after a longer {@link #recheck}. */
    void waitLonger() {
        Duration before = recheck;
        recheck = before == null ? FIRST_RECHECK : before.multipliedBy(2).compareTo(MAX_RECHECK) > 0 ? MAX_RECHECK
                : before.multipliedBy(2);
    }

    /**
     * The effect to send next, null when none: the first, unless it waits for effects another
     * replica queued and this replica took one of those over from a replica that is gone (it sits
     * behind the first in this queue); then the first effect taken over that lies before it,
     * which was claimed before it on the replica that is gone.
     */
    synchronized Slot next() {
        Map.Entry<Long, Slot> first = slots.firstEntry();
        if (first == null) {
            return null;
        }
        Slot head = first.getValue();
        if (head.entry().after() == null) {
            return head;
        }
        Slot firstTaken = null;
        for (Slot s : slots.tailMap(head.seq(), false).values()) {
            if (firstTaken == null && s.entry().takenOver()) {
                firstTaken = s;
            }
            if (head.entry().after().contains(s.hash())) {
                return firstTaken != null ? firstTaken : s;
            }
        }
        return head;
    }

    synchronized void put(Slot slot) {
        slots.put(slot.seq(), slot);
    }

    /** Puts {@code slot} in place of the one at its seq, if that is still queued. */
    synchronized void replace(Slot slot) {
        slots.replace(slot.seq(), slot);
    }

    synchronized void remove(Slot slot) {
        slots.remove(slot.seq());
    }

    synchronized int size() {
        return slots.size();
    }

    synchronized List<Slot> slots() {
        return List.copyOf(slots.values());
    }

    /** The journal number of the queued effect with key hash {@code h}; {@link LaneSync#ANY} if not here (being sent). */
    synchronized long pendingMark(String h) {
        for (Slot s : slots.values()) {
            if (s.hash().equals(h)) {
                return s.mark();
            }
        }
        return LaneSync.ANY;
    }

    /** Marks the queue retired when nothing is queued, sent or asked for; whether it did. */
    synchronized boolean retireIfIdle() {
        if (slots.isEmpty() && !sending.isLocked() && requests.get() == 0 && !retired) {
            retired = true;
            return true;
        }
        return false;
    }
}
