package dev.agentx.clarify.store.postgres;

import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * What a replica knows, in memory, of the deliveries it holds: which are open here (handed to its
 * worker and not done with), the bodies of those it acknowledged (up to {@link #BODIES_HELD}
 * bytes), and which of those its worker has not taken yet (fresh: their first take asks the
 * database nothing). Nothing here is read from the database: liveness and metrics count it while
 * the database is away.
 */
final class HeldDeliveries {
    /** At most this many bytes of bodies are kept in memory ({@link #bodies}). */
    static final long BODIES_HELD = 32L << 20;

    /** Deliveries handed to this replica's worker and not done with here (their progress notes stay). */
    private final Set<Long> open = ConcurrentHashMap.newKeySet();
    /**
     * The bodies of deliveries this replica acknowledged and has not done with, so that taking one
     * reads only its row's small columns: reading the body back costs the database more than any
     * other statement of a delivery (its TOAST, decompressed). At most {@link #BODIES_HELD} bytes;
     * the rest are read from the row.
     */
    private final Map<Long, byte[]> bodies = new ConcurrentHashMap<>();
    private final AtomicLong bodyBytes = new AtomicLong();
    /**
     * Deliveries this replica acknowledged in this process, whose bodies it holds and which its
     * worker has not taken yet: {@link PgDeliveryQueue#takeProvisionally} of one reads nothing (a
     * provisional turn, checked by its done mark).
     */
    private final Set<Long> fresh = ConcurrentHashMap.newKeySet();

    /** Delivery {@code seq}, acknowledged here just now: open, and fresh if its body could be kept. */
    void acknowledged(long seq, byte[] body) {
        open.add(seq);
        if (hold(seq, body)) {
            fresh.add(seq);
        }
    }

    /** Keeps the body in memory if there is room ({@link #BODIES_HELD}); whether it is kept. */
    private boolean hold(long seq, byte[] body) {
        if (bodyBytes.addAndGet(body.length) <= BODIES_HELD) {
            bodies.put(seq, body);
            return true;
        }
        bodyBytes.addAndGet(-body.length);
        return false;
    }

    /** Delivery {@code seq} is handed to this replica's worker. */
    void open(long seq) {
        open.add(seq);
    }

    boolean isOpen(long seq) {
        return open.contains(seq);
    }

    /** The deliveries open here now. */
    Set<Long> openNow() {
        return Set.copyOf(open);
    }

    /** How many deliveries are open here. */
    int size() {
        return open.size();
    }

    /** The body of delivery {@code seq} if it is kept in memory, else null. */
    byte[] body(long seq) {
        return bodies.get(seq);
    }

    /** Whether delivery {@code seq} was fresh (not taken yet); it is not any more. */
    boolean takeFresh(long seq) {
        return fresh.remove(seq);
    }

    /** Done with the delivery here: its body is no longer kept. */
    void close(long seq) {
        open.remove(seq);
        fresh.remove(seq);
        byte[] body = bodies.remove(seq);
        if (body != null) {
            bodyBytes.addAndGet(-body.length);
        }
    }
}
