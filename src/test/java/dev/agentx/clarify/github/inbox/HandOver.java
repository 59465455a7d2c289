package dev.agentx.clarify.github.inbox;

import dev.agentx.clarify.store.DeliveryQueue;
import java.time.Instant;
import java.util.List;
import java.util.function.Consumer;
import java.util.function.LongPredicate;

/**
 * A delivery queue whose deliveries are handed to the worker by the test ({@link #listener}), in
 * any order, as the request threads of deliveries acknowledged at the same moment may; what the
 * queue queues is added to the list given.
 */
final class HandOver implements DeliveryQueue {
    Consumer<Queued> listener;
    private final DeliveryQueue queue;

    HandOver(DeliveryQueue queue, List<Queued> queued) {
        this.queue = queue;
        queue.onQueued(queued::add);
    }

    @Override
    public void onQueued(Consumer<Queued> l) {
        listener = l;
    }

    @Override
    public Accepted accept(String id, String event, byte[] body, String key) {
        return queue.accept(id, event, body, key);
    }

    @Override
    public boolean received(String id) {
        return queue.received(id);
    }

    @Override
    public List<Queued> queued() {
        return queue.queued();
    }

    @Override
    public List<Queued> adoptable(Instant now) {
        return List.of(); // only what the test hands over
    }

    @Override
    public int size() {
        return queue.size();
    }

    @Override
    public Turn take(Queued q, Instant now) {
        return queue.take(q, now);
    }

    @Override
    public void saveProgress(Queued q, Progress p) {
        queue.saveProgress(q, p);
    }

    @Override
    public LongPredicate syncDone() {
        return queue.syncDone();
    }

    @Override
    public void done(Queued q) {
        queue.done(q);
    }

    @Override
    public void fail(Queued q, String why) {
        queue.fail(q, why);
    }

    @Override
    public void prune() {
        queue.prune();
    }
}
