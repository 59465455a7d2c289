package dev.agentx.clarify.store.postgres;

import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.function.Consumer;
import org.postgresql.PGConnection;
import org.postgresql.PGNotification;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The notifications of one channel ({@code LISTEN}), on a connection of its own outside the pool,
 * handed to a listener on a thread of its own. A connection that breaks is opened again after a
 * pause, and what was notified meanwhile is missed: a notification lets a replica act sooner,
 * never as the only way (whoever listens also looks again after a while). So that nothing waits
 * for a notification sent before the {@code LISTEN}, whoever listens is told each time listening
 * starts ({@code listening}): from then on every notification arrives, and what it waits for may
 * have happened already.
 */
final class PgListener implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(PgListener.class);
    /** How long one wait for notifications lasts, so that a close is noticed. */
    private static final int WAIT_MILLIS = 500;
    /** The pause before a broken connection is opened again. */
    private static final long REOPEN_MILLIS = 1_000;

    /** Opens the listening connection. */
    @FunctionalInterface
    interface Connector {
        Connection open() throws SQLException;
    }

    private final Connector connector;
    private final String channel;
    private final Consumer<String> listener;
    private final Runnable listening;
    private final Thread thread;
    private volatile boolean closed;

    /**
     * Starts listening on {@code channel} (an identifier of ours, not user input); {@code listening}
     * runs on the listener's thread once the {@code LISTEN} holds, again after each reconnection.
     */
    PgListener(Connector connector, String channel, Consumer<String> listener, Runnable listening) {
        if (!channel.matches("[a-z_]+")) {
            throw new IllegalArgumentException("not a channel name: " + channel);
        }
        this.connector = connector;
        this.channel = channel;
        this.listener = listener;
        this.listening = listening;
        this.thread = new Thread(this::run, "agentx-db:listen-" + channel);
        thread.setDaemon(true);
        thread.start();
    }

    private void run() {
        boolean warned = false;
        while (!closed) {
            try (Connection c = connector.open()) {
                try (Statement s = c.createStatement()) {
                    s.execute("LISTEN " + channel);
                }
                warned = false;
                tell(listening);
                PGConnection pg = c.unwrap(PGConnection.class);
                while (!closed) {
                    PGNotification[] got = pg.getNotifications(WAIT_MILLIS);
                    if (got == null) {
                        continue;
                    }
                    for (PGNotification n : got) {
                        deliver(n.getParameter());
                    }
                }
            } catch (SQLException | RuntimeException e) {
                if (closed) {
                    return;
                }
                if (!warned) {
                    LOG.warn("listening for {} on the database failed ({}); trying again every second meanwhile",
                            channel, e.getMessage());
                    warned = true;
                }
                try {
                    Thread.sleep(REOPEN_MILLIS);
                } catch (InterruptedException ie) {
                    return;
                }
            }
        }
    }

    private void deliver(String payload) {
        tell(() -> listener.accept(payload));
    }

    /** Runs what tells the listener, which may fail without ending the listening. */
    private void tell(Runnable told) {
        try {
            told.run();
        } catch (RuntimeException e) {
            LOG.warn("a listener of {} failed: {}", channel, e.toString(), e);
        }
    }

    @Override
    public void close() {
        closed = true;
        thread.interrupt();
        try {
            thread.join(WAIT_MILLIS * 2L);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
