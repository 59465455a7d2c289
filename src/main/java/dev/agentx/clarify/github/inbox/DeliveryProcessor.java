package dev.agentx.clarify.github.inbox;

import com.fasterxml.jackson.databind.JsonNode;
import dev.agentx.clarify.store.DeliveryQueue;
import dev.agentx.clarify.store.InboundDelivery;
import java.util.function.Consumer;

/** What the worker hands each delivery to (GitHub Mode: {@code handlers.DeliveryHandler}). */
@FunctionalInterface
public interface DeliveryProcessor {
    /**
     * Processes the delivery. {@code payload} is its body parsed (once, by the worker), or null if
     * the body is not a JSON object. {@code progress} says how far an earlier, interrupted attempt
     * got; {@code save} records each further step, so none runs twice: in the outbox journal, after
     * the effects the step queued, durable with them at the thread's next {@code Outbox.sync()},
     * which must come before the next step runs. Throwing means: try again later.
     */
    void handle(InboundDelivery delivery, JsonNode payload, DeliveryQueue.Progress progress, Consumer<DeliveryQueue.Progress> save);
}
