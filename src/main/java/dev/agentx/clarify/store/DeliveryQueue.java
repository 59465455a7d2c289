package dev.agentx.clarify.store;

import com.fasterxml.jackson.annotation.JsonSetter;
import com.fasterxml.jackson.annotation.Nulls;
import java.time.Instant;
import java.util.List;
import java.util.function.Consumer;
import java.util.function.LongPredicate;

/**
 * The durable queue of verified webhook deliveries: what the server acknowledged and has not
 * processed yet, and the ids of deliveries it received lately (a second copy is a duplicate).
 *
 * <p>Two implementations: the data dir's inbox ({@code store/files/FileDeliveryQueue}: one server, its own
 * disk) and the table {@code deliveries} on PostgreSQL, shared by every replica on the database:
 * there the acknowledgement is the commit of the delivery's row, a copy of the same delivery sent
 * to another replica is a duplicate there too, and a delivery left by a replica that is gone (no
 * heartbeat) is {@link #adoptable taken up} by another. Deliveries with the same order key (one
 * issue) are processed one at a time in the order received, whichever replica holds them:
 * {@link #take} says {@link Turn.Wait} while an earlier one of the line is held elsewhere.
 */
public interface DeliveryQueue {
    /** What {@link #accept} did. */
    enum Accepted { QUEUED, DUPLICATE }

    /**
     * A delivery waiting in the queue: its place in line (numbers grow in the order received), id,
     * event, when it was received, and its order key (the repository and issue it is about, or "").
     */
    record Queued(long seq, String id, String event, Instant receivedAt, String key) {
    }

    /**
     * How far a delivery got: commands done (and whether one was refused), failed attempts and
     * when to try again ({@code notBefore} null: at once; the inbox's journal holds it as JSON null).
     */
    record Progress(int commandsDone, boolean refused, int attempts, @JsonSetter(nulls = Nulls.SKIP) Instant notBefore) {
        public static final Progress NONE = new Progress(0, false, 0, null);
    }

    /** Whether this server processes a queued delivery now ({@link #take}). */
    sealed interface Turn {
        /**
         * Process it: the delivery as received and how far earlier attempts got. {@code provisional}:
         * taken from what this server holds in memory, without asking the shared queue
         * ({@link DeliveryQueue#takeProvisionally}); its done mark checks the turn instead, in the
         * delivery's transaction, and when the turn was not this server's (an earlier delivery of
         * its line is still queued, or another replica took it over) the attempt rolls back with
         * {@link dev.agentx.clarify.protocol.ErrorCode#LOCK_LOST}: take it again, which asks the
         * queue, and count no failed attempt.
         */
        record Mine(InboundDelivery delivery, Progress progress, boolean provisional) implements Turn {
            /** A turn the queue confirmed. */
            public Mine(InboundDelivery delivery, Progress progress) {
                this(delivery, progress, false);
            }
        }

        /** Not this server's to process (done, or held by another replica): drop it from the line here. */
        record Gone(String why) implements Turn {
        }

        /** An earlier delivery of its line is held by another replica: try again shortly. */
        record Wait(String holder) implements Turn {
        }

        /** It cannot be read: move it to the failed deliveries with this reason. */
        record Unreadable(String why) implements Turn {
        }
    }

    /** Who is told of each delivery once it is queued durably (the worker). */
    void onQueued(Consumer<Queued> listener);

    /**
     * Who is told, on a thread of the store's, that another replica has done with a delivery that
     * one of this server's waited for ({@link Turn.Wait}), by the line's order key: the waiting
     * delivery's turn may have come. A hint to go on sooner; without it the worker looks again
     * shortly. {@code missed} is told when such signals may have been missed (the store started
     * or resumed listening for them): every waiting line's turn may have come. Nothing to tell with
     * a store only one server uses.
     */
    default void onLineFreed(Consumer<String> freed, Runnable missed) {
    }

    /**
     * Queues a delivery durably unless its id was received before; once this returns QUEUED the
     * delivery survives a crash. Safe to call from many threads at once.
     */
    Accepted accept(String id, String event, byte[] body, String key);

    /** Whether the delivery with this id was received: queued now, or done with lately. */
    boolean received(String id);

    /** The deliveries this server is to work on at start, oldest first. */
    List<Queued> queued();

    /**
     * Deliveries held by replicas that are gone (no heartbeat for a while), oldest first, for this
     * server to take up; none with a store only one server uses.
     */
    List<Queued> adoptable(Instant now);

    /** How many deliveries wait here (on a shared store: those this replica holds). */
    int size();

    /** Whether this server processes {@code q} now, and if so the delivery and its progress. */
    Turn take(Queued q, Instant now);

    /**
     * As {@link #take}, for a caller that marks the delivery done inside the store's atomic unit
     * with its changes: a queue may then answer with a {@link Turn.Mine#provisional provisional}
     * turn without asking the shared queue, and check it at the done mark instead.
     */
    default Turn takeProvisionally(Queued q, Instant now) {
        return take(q, now);
    }

    /** Records failed attempts and when to try again. */
    void saveProgress(Queued q, Progress p);

    /**
     * Makes every done record so far durable and says which deliveries (by number) are now
     * durably done with; called at every tick, so a machine crash repeats at most a tick's
     * deliveries (which runs no command twice).
     */
    LongPredicate syncDone();

    /** The delivery is processed: its id is kept as received, and it leaves the queue. */
    void done(Queued q);

    /** The delivery cannot be processed: kept for a person to look at, with the reason. */
    void fail(Queued q, String why);

    /** Forgets ids of deliveries done with long enough ago that GitHub no longer redelivers them. */
    void prune();

    /**
     * Reclaims the room that deliveries done with left in the queue, so that reading it stays
     * cheap; called at every tick of the worker. Nothing to do where the queue reclaims its own
     * room (the file store's segments).
     */
    default void tidy() {
    }
}
