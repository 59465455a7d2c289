package dev.agentx.clarify.store.postgres;

import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;

/**
 * The signals between replicas that an issue's line is free: a replica whose delivery waits for
 * an earlier one of its issue that another replica holds marks that one as waited for ({@link
 * DeliveryTurns#WAIT_FOR_HEAD}); the replica that finishes it says so on {@link #LINE_FREED}
 * ({@link Notifications}), with the line's order key, and the waiting one goes on at once. A
 * signal only lets the waiting replica go on sooner: should it be lost, the worker looks again
 * shortly.
 */
final class LineSignals {
    /**
     * The channel on which a replica that finishes a delivery another replica waits for says so
     * (its order key as the payload), so that the waiting one goes on at once.
     */
    static final String LINE_FREED = "agentx_line_freed";

    private final Notifications notifications;
    /** Told of the lines other replicas freed ({@link #onFreed}), once this replica listens. */
    private volatile Told told;
    private final AtomicBoolean listening = new AtomicBoolean();

    LineSignals(Notifications notifications) {
        this.notifications = notifications;
    }

    /** Whom {@link #onFreed} names. */
    private record Told(Consumer<String> freed, Runnable missed) {
    }

    /**
     * Tells {@code freed} the order key of each line another replica freed, and {@code missed} when
     * signals may have been missed, from this replica's first wait for another's delivery on
     * ({@link #listenOnce}): a server alone on its database never waits, and keeps no connection
     * open for it.
     */
    void onFreed(Consumer<String> freed, Runnable missed) {
        told = new Told(freed, missed);
    }

    /**
     * Starts listening for {@link #LINE_FREED} if not yet. The wait that starts it was marked before
     * the listening connection is open, and its signal may come first: once it listens (and again
     * each time it listens anew after its connection broke) the worker is told that signals may
     * have been missed, and looks at its waiting lines again at once.
     */
    void listenOnce() {
        Told signals = told;
        if (signals != null && listening.compareAndSet(false, true)) {
            notifications.listen(LINE_FREED, signals.freed(), signals.missed());
        }
    }

    /**
     * Tells the replica waiting for this line ({@link DeliveryTurns#WAIT_FOR_HEAD}) that its turn
     * has come, once the done mark is committed; nothing for a null key (nobody waits). The signal
     * is queued ({@link Notifications#signal}): should it be lost, or the replica miss it, that
     * replica looks again shortly.
     */
    void freed(String orderKey) {
        if (orderKey != null) {
            notifications.signal(LINE_FREED, orderKey);
        }
    }
}
