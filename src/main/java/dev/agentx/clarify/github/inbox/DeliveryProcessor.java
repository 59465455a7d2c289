package dev.agentx.clarify.github.inbox;

import com.fasterxml.jackson.databind.JsonNode;
import dev.agentx.clarify.store.DeliveryQueue;
import dev.agentx.clarify.store.InboundDelivery;
import java.util.function.Consumer;

/**
 * What the worker hands each delivery to (GitHub Mode: {@code handlers.DeliveryHandler}), in
 * three steps that read top to bottom: {@link #prepare} reads it and looks up what needs the
 * network, outside any transaction; {@link Changes#apply} makes its changes and queues their
 * effects, inside the store's unit (on PostgreSQL one transaction with the delivery's done
 * mark); the {@link Runnable} that returns runs once they are committed.
 */
@FunctionalInterface
public interface DeliveryProcessor {
    /** Nothing to do once the changes are committed. */
    Runnable NOTHING_AFTER = () -> { };

    /**
     * Reads the delivery: {@code payload} is its body parsed (once, by the worker), or null if the
     * body is not a JSON object. Throwing means: try again later.
     */
    Changes prepare(InboundDelivery delivery, JsonNode payload);

    /** A delivery's changes. */
    @FunctionalInterface
    interface Changes {
        /**
         * Makes the changes; returns what is to run once they are committed (never null).
         * {@code progress} says how far an earlier, interrupted attempt got; {@code save} records
         * each further command, so none runs twice: on the file store in the outbox journal,
         * after the effects the command queued, durable with them at the thread's next
         * {@code Outbox.sync()}, which must come before the next command runs. Inside a unit that
         * commits as one ({@code store.UnitOfWork#atomic}) nothing is saved: an attempt that
         * failed left nothing behind. Throwing means: try again later.
         */
        Runnable apply(DeliveryQueue.Progress progress, Consumer<DeliveryQueue.Progress> save);
    }
}
