package dev.agentx.clarify.support;

import dev.agentx.clarify.store.DeliveryQueue;
import java.time.Instant;
import java.util.List;
import java.util.function.Consumer;
import java.util.function.LongPredicate;

/**
 * A delivery queue that passes every call to another, for tests and benchmarks that change one
 * or two of them. What it does not pass on: the signals of lines freed ({@link #onLineFreed}),
 * which a subclass passes on if it wants them.
 */
public abstract class ForwardingDeliveryQueue implements DeliveryQueue {
    protected final DeliveryQueue queue;

    protected ForwardingDeliveryQueue(DeliveryQueue queue) {
        this.queue = queue;
    }

    @Override
    public void onQueued(Consumer<Queued> listener) {
        queue.onQueued(listener);
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
        return queue.adoptable(now);
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

    @Override
    public void tidy() {
        queue.tidy();
    }
}
