package dev.agentx.clarify.store.postgres;

import dev.agentx.clarify.protocol.ClarifyException;
import dev.agentx.clarify.protocol.ErrorCode;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.concurrent.TimeUnit;

/**
 * A connection of its own, outside the pool, for work that one thread at a time does and that
 * must not wait behind the pool's users: the acknowledgements' inserts
 * ({@link PgDeliveryQueue#accept}), and the notifications' sender ({@link Notifications#signal},
 * whose every send is safe to repeat). The worker's 12 lanes share the pool, each holding a
 * connection for a whole delivery; an acknowledgement that waited for one waited for a lane's
 * transaction to end, while GitHub waits for the answer.
 *
 * <p>Opened at first use, in auto-commit mode, with the pool's session settings. Every wait for
 * the database's answer ends after {@link #ANSWER_TIMEOUT_SECONDS} (the driver closes the
 * connection then): a database that stops answering fails the call in time for its caller to
 * answer GitHub, instead of holding it and every acknowledgement queued behind it. After
 * {@link #IDLE_CHECK_NANOS} unused the connection is checked with a round trip before use (the
 * database may have restarted during a quiet spell). A call whose connection broke under it is
 * run once more on a new connection (after a database restart it was to the old server): only
 * for work that is safe to repeat, and not when the connection broke by waiting out the answer's
 * timeout (a second wait would take the caller past what it may wait) or could not be opened (the
 * database is gone, not restarted). A call the database rolled back to break a deadlock is run
 * again, after a pause of a few milliseconds, up to {@link #DEADLOCK_TRIES} times in all: two
 * replicas given the same deliveries at once insert their ids in different orders (the order of
 * receipt, which their sequence numbers keep, so the rows are not sorted to avoid it).
 */
final class DedicatedConnection implements AutoCloseable {
    /** How long a statement on this connection may wait for the database's answer: under the 10 s GitHub waits. */
    static final int ANSWER_TIMEOUT_SECONDS = 8;
    /** Unused this long, the connection is checked before use. */
    static final long IDLE_CHECK_NANOS = TimeUnit.SECONDS.toNanos(1);
    /** How long that check waits for the database's answer. */
    private static final int CHECK_TIMEOUT_SECONDS = 2;

    /** PostgreSQL's SQLSTATE for a deadlock it broke by rolling back one of the statements. */
    static final String DEADLOCK = "40P01";

    /** Opens a connection; one of its own ({@link Connections#own}), or a test's. */
    @FunctionalInterface
    interface Opener {
        Connection open() throws SQLException;
    }

    private final PostgresDatabase db;
    private final Opener opener;
    /** Unused this long (System.nanoTime), the connection is checked before use. */
    private final long idleCheckNanos;
    /** Guarded by this. */
    private Connection connection;
    private long lastUsed;
    private boolean closed;

    DedicatedConnection(PostgresDatabase db, Opener opener, long idleCheckNanos) {
        this.db = db;
        this.opener = opener;
        this.idleCheckNanos = idleCheckNanos;
    }

    /**
     * Runs {@code work} on the connection, each statement committed as it runs; once more on a
     * new connection when the one it had broke (see the class comment). Failures as
     * {@link PostgresDatabase#autoCommit}'s.
     */
    synchronized <T> T run(PostgresDatabase.Work<T> work) {
        if (closed) {
            throw new ClarifyException(ErrorCode.INTERNAL, "the connection to " + db.describe() + " is closed: "
                    + "the server is stopping");
        }
        boolean opened = connection != null;
        boolean reconnected = false;
        for (int attempt = 1; ; attempt++) {
            try {
                return used(work.run(connection()));
            } catch (SQLException e) {
                dropIfBroken(e);
                if (DEADLOCK.equals(e.getSQLState()) && attempt < DEADLOCK_TRIES) {
                    // another replica's insert took the same delivery ids in another order, and the
                    // database rolled this statement back; run again once that statement is through
                    // (an immediate rerun can take the first id before it and close the cycle again):
                    // those rows are duplicates then
                    pauseAfterDeadlock(attempt);
                    continue;
                }
                // a connection that broke under the work (a restarted database): once more on a new one
                if (reconnected || !opened || !DatabaseFailures.connectionLost(e) || answerTimedOut(e)) {
                    throw db.failure(e);
                }
                reconnected = true;
            }
        }
    }

    /** Tries in all for work the database rolls back to break a deadlock. */
    static final int DEADLOCK_TRIES = 4;

    /** A few milliseconds, more after each deadlock, jittered so that two replicas do not rerun in step. */
    private static void pauseAfterDeadlock(int attempt) {
        long millis = (long) ((5L << (attempt - 1)) * java.util.concurrent.ThreadLocalRandom.current().nextDouble(1.0, 2.0));
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new ClarifyException(ErrorCode.INTERNAL, "interrupted while running again after a deadlock", e);
        }
    }

    private <T> T used(T result) {
        lastUsed = System.nanoTime();
        return result;
    }

    /** The open connection, checked first if it was unused for a while; or a new one. */
    private Connection connection() throws SQLException {
        if (connection != null && System.nanoTime() - lastUsed > idleCheckNanos
                && !connection.isValid(CHECK_TIMEOUT_SECONDS)) {
            closeQuietly();
        }
        if (connection == null) {
            Connection c = opener.open();
            try {
                c.setAutoCommit(true);
                try (Statement s = c.createStatement()) {
                    s.execute(PostgresDatabase.SESSION_SETTINGS);
                }
            } catch (SQLException e) {
                try {
                    c.close();
                } catch (SQLException suppressed) {
                    e.addSuppressed(suppressed);
                }
                throw e;
            }
            connection = c;
            lastUsed = System.nanoTime();
        }
        return connection;
    }

    /** Drops the connection if {@code e} broke it, so that the next call opens a new one. */
    private void dropIfBroken(SQLException e) {
        boolean broken;
        try {
            broken = connection != null && (connection.isClosed() || DatabaseFailures.connectionLost(e));
        } catch (SQLException unknown) {
            broken = true;
        }
        if (broken) {
            closeQuietly();
        }
    }

    /** Whether {@code e} is a wait for the database's answer that ran out (the socket's read timeout). */
    private static boolean answerTimedOut(Throwable e) {
        return DatabaseFailures.cause(e, t -> t instanceof java.net.SocketTimeoutException).isPresent();
    }

    private void closeQuietly() {
        Connection c = connection;
        connection = null;
        if (c != null) {
            try {
                c.close();
            } catch (SQLException e) {
                // broken already: nothing to give back
            }
        }
    }

    @Override
    public synchronized void close() {
        closed = true;
        closeQuietly();
    }
}
