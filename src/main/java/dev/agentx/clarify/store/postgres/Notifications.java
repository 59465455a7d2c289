package dev.agentx.clarify.store.postgres;

import java.sql.Array;
import java.sql.PreparedStatement;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Consumer;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The database's notifications between replicas ({@code LISTEN} and {@code NOTIFY}): a replica
 * sends a payload on a channel, and every replica listening on it is handed the payload. A
 * notification only lets a listener act sooner, never as the only way: one sent while nobody
 * listens, or while a listener's connection is broken, is missed, so whoever listens also looks
 * again after a while, and once each time its listening starts.
 *
 * <p>Notifications are sent by a thread of their own, on a connection of their own, never in the
 * transaction whose commit they tell of: PostgreSQL commits the transactions that notify one at a
 * time, each holding one lock for the whole database (the notification queue's) until its commit
 * is flushed, so a delivery's transaction that notified waited for every other notifying commit's
 * WAL flush instead of sharing one. Here the transaction commits first, with no notification; the
 * signals given meanwhile go out together, in one transaction committed without waiting for the
 * WAL's flush, which holds that lock for no flush at all.
 */
final class Notifications implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(Notifications.class);
    /** At most this many signals go out in one transaction. */
    static final int MAX_BATCH = 500;
    /** How long {@link #close} waits for the signals given before it to go out. */
    private static final long CLOSE_WAIT_MILLIS = 3_000;
    /** Every signal of the batch in one statement and one transaction, committed without waiting for its flush. */
    private static final String SEND = "SELECT count(pg_notify(s.channel, s.payload)), "
            + "set_config('synchronous_commit', 'off', true) FROM unnest(?::text[], ?::text[]) AS s(channel, payload)";

    private final Connections connections;
    /** The senders' connection of their own, opened at the first signal. */
    private final Supplier<DedicatedConnection> connection;
    /** The channels listened to ({@link #listen}), closed with the database. */
    private final List<PgListener> listeners = new CopyOnWriteArrayList<>();

    /** A signal to send: one {@code pg_notify}. */
    private record Signal(String channel, String payload) {
    }

    /** Guarded by this: the signals given and not sent yet (one of each), the sender, whether closed. */
    private final LinkedHashSet<Signal> pending = new LinkedHashSet<>();
    private Thread sender;
    private DedicatedConnection open;
    private boolean closed;

    Notifications(Connections connections, Supplier<DedicatedConnection> connection) {
        this.connections = connections;
        this.connection = connection;
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
     * Sends {@code payload} to the listeners of {@code channel} on every replica, soon after this
     * call, from the senders' thread: the caller does not wait for the database. Call it once what
     * it tells of is committed. The same payload on the same channel given twice before it goes
     * out is sent once. A signal that cannot be sent (the database unreachable) is dropped, as a
     * missed one is.
     */
    void signal(String channel, String payload) {
        synchronized (this) {
            if (closed) {
                return;
            }
            pending.add(new Signal(channel, payload));
            if (sender == null) {
                open = connection.get();
                sender = new Thread(this::send, "agentx-db:signals");
                sender.setDaemon(true);
                sender.start();
            }
            notifyAll();
        }
    }

    /** The senders' thread: sends what was given, a batch per transaction, until closed with nothing left. */
    private void send() {
        while (true) {
            List<Signal> batch = new ArrayList<>();
            DedicatedConnection c;
            synchronized (this) {
                while (pending.isEmpty() && !closed) {
                    try {
                        wait();
                    } catch (InterruptedException e) {
                        return;
                    }
                }
                if (pending.isEmpty()) {
                    return;
                }
                var it = pending.iterator();
                while (it.hasNext() && batch.size() < MAX_BATCH) {
                    batch.add(it.next());
                    it.remove();
                }
                c = open;
            }
            try {
                c.run(conn -> {
                    try (PreparedStatement s = conn.prepareStatement(SEND)) {
                        Array channels = conn.createArrayOf("text", batch.stream().map(Signal::channel).toArray());
                        Array payloads = conn.createArrayOf("text", batch.stream().map(Signal::payload).toArray());
                        s.setArray(1, channels);
                        s.setArray(2, payloads);
                        s.executeQuery().close();
                    }
                    return null;
                });
            } catch (RuntimeException e) {
                LOG.debug("{} signals not sent (whoever waits for them looks again shortly): {}", batch.size(),
                        e.toString());
            }
        }
    }

    /** Sends what was given before it (waiting a few seconds at most), then stops listening. */
    @Override
    public void close() {
        Thread s;
        synchronized (this) {
            closed = true;
            s = sender;
            notifyAll();
        }
        if (s != null) {
            try {
                s.join(CLOSE_WAIT_MILLIS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        listeners.forEach(PgListener::close);
    }
}
