package dev.agentx.clarify.store.postgres;

import java.sql.PreparedStatement;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.function.Consumer;
import org.slf4j.LoggerFactory;

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
    /** Signals for {@link #signalSoon}'s thread to send. */
    private final LinkedBlockingQueue<Signal> outgoing = new LinkedBlockingQueue<>();
    /** The thread that sends them, started with the first; null before. */
    private Thread sender;
    private volatile boolean closed;

    private record Signal(String channel, String payload) {
    }

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

    /**
     * Sends {@code payload} on {@code channel} soon, from a thread of its own, together with the
     * signals queued meanwhile ({@link #signalAll}): for what a transaction that committed tells
     * the other replicas. A {@code NOTIFY} inside the transaction would hold up its commit:
     * PostgreSQL commits the transactions that notify one at a time, each holding one lock for
     * the whole database through its WAL flush, so every ledger write would wait for the others'
     * flushes instead of sharing one.
     */
    void signalSoon(String channel, String payload) {
        if (closed) {
            return;
        }
        synchronized (this) {
            if (sender == null) {
                sender = new Thread(this::sendQueued, "agentx-db:signals");
                sender.setDaemon(true);
                sender.start();
            }
        }
        outgoing.add(new Signal(channel, payload));
    }

    /** {@link #signalSoon}'s thread: each round sends what was queued, one statement per channel. */
    private void sendQueued() {
        List<Signal> batch = new ArrayList<>();
        while (!closed) {
            try {
                batch.add(outgoing.take());
            } catch (InterruptedException e) {
                return; // closed
            }
            outgoing.drainTo(batch);
            Map<String, Set<String>> byChannel = new LinkedHashMap<>();
            for (Signal sig : batch) {
                byChannel.computeIfAbsent(sig.channel(), k -> new LinkedHashSet<>()).add(sig.payload());
            }
            batch.clear();
            for (Map.Entry<String, Set<String>> e : byChannel.entrySet()) {
                try {
                    signalAll(e.getKey(), e.getValue());
                } catch (RuntimeException failure) {
                    // a signal only lets a listener act sooner: it looks again after a while anyway
                    LoggerFactory.getLogger(Notifications.class).debug("signals on {} not sent: {}", e.getKey(),
                            failure.toString());
                }
            }
        }
    }

    /** Sends each of {@code payloads} on {@code channel} in one statement, committed as {@link #signal} is. */
    void signalAll(String channel, Set<String> payloads) {
        transactions.autoCommit(c -> {
            try (PreparedStatement s = c.prepareStatement("SELECT pg_notify(?, p), "
                    + "set_config('synchronous_commit', 'off', true) FROM unnest(?::text[]) AS p")) {
                s.setString(1, channel);
                s.setArray(2, c.createArrayOf("text", payloads.toArray()));
                s.executeQuery().close();
            }
            return null;
        });
    }

    /** Stops listening and sending. */
    @Override
    public void close() {
        closed = true;
        synchronized (this) {
            if (sender != null) {
                sender.interrupt();
            }
        }
        listeners.forEach(PgListener::close);
    }
}
