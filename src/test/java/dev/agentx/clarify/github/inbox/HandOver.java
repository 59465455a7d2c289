package dev.agentx.clarify.github.inbox;

import dev.agentx.clarify.store.DeliveryQueue;
import dev.agentx.clarify.support.ForwardingDeliveryQueue;
import java.time.Instant;
import java.util.List;
import java.util.function.Consumer;

/**
 * A delivery queue whose deliveries are handed to the worker by the test ({@link #listener}), in
 * any order, as the request threads of deliveries acknowledged at the same moment may; what the
 * queue queues is added to the list given.
 */
final class HandOver extends ForwardingDeliveryQueue {
    Consumer<Queued> listener;

    HandOver(DeliveryQueue queue, List<Queued> queued) {
        super(queue);
        queue.onQueued(queued::add);
    }

    @Override
    public void onQueued(Consumer<Queued> l) {
        listener = l;
    }

    @Override
    public List<Queued> adoptable(Instant now) {
        return List.of(); // only what the test hands over
    }
}
