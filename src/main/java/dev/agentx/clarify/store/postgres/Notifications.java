package dev.agentx.clarify.store.postgres;

import java.sql.PreparedStatement;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Consumer;

/**
 * The database's notifications between replicas ({@code LISTEN} and {@code NOTIFY}): a replica
 * sends a payload on a channel, and every replica listening on it is handed the payload. A
 * notification only lets a listener act sooner, never as the only way: one sent while nobody
 * listens, or while a listener's connection is broken, is missed, so whoever listens also looks
 * again after a while, and once each time its listening starts.
 */
final class Notifications implements AutoCloseable {
    private final Connections connections;
    private final Transactions transactions;
    /** The channels listened to ({@link #listen}), closed with the database. */
    private final List<PgListener> listeners = new CopyOnWriteArrayList<>();

    Notifications(Connections connections, Transactions transactions) {
        this.connections = connections;
        this.transactions = transactions;
    }

    /**
     * Hands {@code listener} the payload of every notification on {@code channel} ({@code NOTIFY}
     * by any replica), on a thread and a connection of their own, until the database is closed.
     * Notifications sent while that connection is broken, or before it first listens, are missed;
     * {@code listening} runs each time it starts to listen, so that the caller can look again.
     */
    void listen(String channel, Consumer<String> listener, Runnable listening) {
        // no socket timeout: the connection waits for notifications, and its waits are bounded by the driver
        listeners.add(new PgListener(() -> connections.own(0), channel, listener, listening));
    }

    /**
     * Sends {@code payload} to the listeners of {@code channel} on every replica, in a transaction of
     * its own, committed without waiting for the WAL's flush: a notification only lets a listener act
     * sooner. Failures are the caller's to ignore.
     */
    void signal(String channel, String payload) {
        transactions.autoCommit(c -> {
            try (PreparedStatement s = c.prepareStatement(
                    "SELECT pg_notify(?, ?), set_config('synchronous_commit', 'off', true)")) {
                s.setString(1, channel);
                s.setString(2, payload);
                s.executeQuery().close();
            }
            return null;
        });
    }

    /** Stops listening. */
    @Override
    public void close() {
        listeners.forEach(PgListener::close);
    }
}
