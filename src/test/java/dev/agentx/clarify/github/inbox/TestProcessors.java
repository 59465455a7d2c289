package dev.agentx.clarify.github.inbox;

import com.fasterxml.jackson.databind.JsonNode;
import dev.agentx.clarify.store.DeliveryQueue.Progress;
import dev.agentx.clarify.store.InboundDelivery;
import java.util.function.Consumer;

/** Delivery processors as the worker's tests write them: changes only, nothing to do after the commit. */
final class TestProcessors {
    private TestProcessors() {
    }

    /** The changes of a delivery, as a test makes them. */
    @FunctionalInterface
    interface Body {
        void apply(InboundDelivery d, JsonNode payload, Progress progress, Consumer<Progress> save);
    }

    static DeliveryProcessor of(Body body) {
        return (d, payload) -> (progress, save) -> {
            body.apply(d, payload, progress, save);
            return DeliveryProcessor.NOTHING_AFTER;
        };
    }
}
