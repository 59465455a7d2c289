package dev.agentx.clarify.store.postgres;

import dev.agentx.clarify.protocol.ClarifyException;
import dev.agentx.clarify.store.UnitOfWork.Participant;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import javax.sql.DataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The unit of work on PostgreSQL: the transaction each thread has open, which work of the same
 * thread joins; the writes it defers to its next round trip or its commit ({@link Pipeline}); who
 * takes part in it ({@link Participant}), told before the commit and after it; the notes it
 * locked. A statement that fails inside it aborts it: later work of the unit fails at once.
 */
final class Transactions {
    private static final Logger LOG = LoggerFactory.getLogger(Transactions.class);
    private final DataSource dataSource;
    private final String description;
    /** Whether every connection has {@link PostgresDatabase#LOCK_TIMEOUT} set at its start; else each lock sets it. */
    private final boolean lockTimeoutPerConnection;
    /** The transaction this thread has open, if any: work inside it joins it. */
    private final ThreadLocal<Connection> current = new ThreadLocal<>();
    /** Who takes part in the transaction this thread has open ({@link #join}), in the order they joined. */
    private final ThreadLocal<List<Participant>> participants = new ThreadLocal<>();
    /** The writes the transaction this thread has open has not sent yet ({@link #deferred}). */
    private final ThreadLocal<Pipeline> deferred = new ThreadLocal<>();
    /** The notes the transaction this thread has open locked, as it last read or wrote them ({@link #notesLocked}). */
    private final ThreadLocal<Map<String, String>> notesLocked = new ThreadLocal<>();
    /**
     * The failure of a statement inside this thread's transaction, which PostgreSQL has aborted
     * then: the unit's later work fails with it at once instead of sending statements the
     * database only refuses ("current transaction is aborted"), until the transaction ends.
     */
    private final ThreadLocal<ClarifyException> aborted = new ThreadLocal<>();

    Transactions(DataSource dataSource, String description, boolean lockTimeoutPerConnection) {
        this.dataSource = dataSource;
        this.description = description;
        this.lockTimeoutPerConnection = lockTimeoutPerConnection;
    }

    /**
     * Runs {@code work} in one transaction: committed when it returns, rolled back when it throws.
     * Called inside another {@code inTransaction} of the same thread, it joins that transaction,
     * after the writes deferred so far are sent ({@link #deferred}): {@code work} sees them. A lock
     * wait over {@link PostgresDatabase#LOCK_TIMEOUT} is LOCK_TIMEOUT (safe to retry); any other
     * database failure is INTERNAL, saying which database.
     */
    <T> T inTransaction(PostgresDatabase.Work<T> work) {
        Connection open = current.get();
        if (open != null) {
            // inside another unit of this thread: part of its transaction, committed with it
            ClarifyException earlier = aborted.get();
            if (earlier != null) {
                throw new ClarifyException(earlier.code(), "not run: the transaction it is part of failed earlier: "
                        + earlier.getMessage(), earlier);
            }
            try {
                deferred.get().sendAllButLast(open);
                return work.run(open);
            } catch (SQLException e) {
                ClarifyException f = failure(e);
                aborted.set(f);
                throw f;
            }
        }
        List<Participant> joined = new ArrayList<>();
        boolean committed = false;
        Exception workFailed = null;
        try (Connection c = dataSource.getConnection()) {
            c.setAutoCommit(false);
            current.set(c);
            participants.set(joined);
            Pipeline writes = new Pipeline();
            deferred.set(writes);
            try {
                T result = work.run(c);
                ClarifyException failed = aborted.get();
                if (failed != null) {
                    // work that went on past a failure of its own (a monitor pass's next record):
                    // PostgreSQL aborted the transaction then, and nothing of it can commit
                    throw new ClarifyException(failed.code(), "rolled back: " + failed.getMessage(), failed);
                }
                // a participant may join another while it runs: every one is told, in order
                for (int i = 0; i < joined.size(); i++) {
                    joined.get(i).beforeCommit();
                }
                for (Participant p : joined) {
                    p.committing();
                }
                // the writes not sent yet and the COMMIT, in one round trip; commit() then sends nothing
                writes.sendAndCommit(c);
                c.commit();
                committed = true;
                return result;
            } catch (SQLException | RuntimeException e) {
                workFailed = e;
                try {
                    c.rollback();
                } catch (SQLException suppressed) {
                    e.addSuppressed(suppressed);
                }
                throw e;
            } finally {
                current.remove();
                participants.remove();
                deferred.remove();
                notesLocked.remove();
                aborted.remove();
                try {
                    c.setAutoCommit(true);
                } catch (SQLException e) {
                    if (workFailed != null) {
                        // the connection broke, and that failed the work: its failure says why, not
                        // this one (the pool has closed the broken connection since)
                        workFailed.addSuppressed(e);
                    } else if (!committed) {
                        throw e;
                    } else {
                        // committed, and the connection broke after: the pool drops it; the work stands
                        LOG.debug("a connection failed after its transaction committed: {}", e.toString());
                    }
                }
            }
        } catch (SQLException e) {
            throw failure(e);
        } finally {
            tell(joined, committed);
        }
    }

    /**
     * Tells the participants how the transaction ended, outside it (its connection back in the
     * pool: what they do is their own unit). Every one is told; the first failure is thrown then.
     */
    private static void tell(List<Participant> joined, boolean committed) {
        RuntimeException failed = null;
        for (Participant p : joined) {
            try {
                if (committed) {
                    p.committed();
                } else {
                    p.rolledBack();
                }
            } catch (RuntimeException e) {
                if (failed == null) {
                    failed = e;
                } else {
                    failed.addSuppressed(e);
                }
            }
        }
        if (failed != null) {
            throw failed;
        }
    }

    /**
     * Runs {@code work} on a connection in auto-commit mode: each statement is its own
     * transaction, committed as it runs (one round trip for a single statement, where
     * {@link #inTransaction} needs a second one for the commit). Failures as there.
     */
    <T> T autoCommit(PostgresDatabase.Work<T> work) {
        if (current.get() != null) {
            return inTransaction(work); // inside a unit of this thread: part of its transaction
        }
        try (Connection c = dataSource.getConnection()) {
            return work.run(c);
        } catch (SQLException e) {
            throw failure(e);
        }
    }

    /** Whether this thread has a transaction open. */
    boolean open() {
        return current.get() != null;
    }

    /**
     * Takes part in the transaction this thread has open.
     *
     * @throws IllegalStateException when this thread has no transaction open
     */
    void join(Participant p) {
        List<Participant> joined = participants.get();
        if (joined == null) {
            throw new IllegalStateException("no transaction open on this thread to take part in");
        }
        joined.add(p);
    }

    /**
     * The writes of the transaction this thread has open that wait to be sent: each is sent with
     * the transaction's next round trip ({@link #exchange}, another unit joining it) or with its
     * commit, not on its own. A writer defers only what nothing it does later in the transaction
     * reads back from the database (what it reads again it keeps: the ledgers and notes this
     * transaction holds). The {@link Pipeline#last} part is sent at the commit only, after every
     * other write.
     *
     * @throws IllegalStateException when this thread has no transaction open
     */
    Pipeline deferred() {
        Pipeline writes = deferred.get();
        if (writes == null) {
            throw new IllegalStateException("no transaction open on this thread to defer a write to");
        }
        return writes;
    }

    /**
     * The notes the transaction this thread has open holds the lock of ({@link PgNotes#lock}), each
     * as the transaction last read or wrote it (null: no such note); forgotten when it ends.
     *
     * @throws IllegalStateException when this thread has no transaction open
     */
    Map<String, String> notesLocked() {
        if (!open()) {
            throw new IllegalStateException("a note is locked inside a unit only");
        }
        Map<String, String> mine = notesLocked.get();
        if (mine == null) {
            mine = new HashMap<>();
            notesLocked.set(mine);
        }
        return mine;
    }

    /** As {@link #notesLocked()}, or null when this thread has no transaction open or it locked no note. */
    Map<String, String> notesLockedIfAny() {
        return notesLocked.get();
    }

    /**
     * Writes {@code statements}: inside the transaction this thread has open, deferred with its
     * other writes ({@link #deferred}); outside one, sent at once in one round trip, a single
     * statement auto-committed, several in a transaction of their own.
     */
    void write(Pipeline statements) {
        if (open()) {
            statements.moveTo(deferred());
        } else if (statements.size() == 1) {
            autoCommit(c -> {
                statements.send(c);
                return null;
            });
        } else {
            inTransaction(c -> {
                statements.send(c);
                return null;
            });
        }
    }

    /**
     * Sends {@code statements} in one round trip with the writes deferred so far (first, so the
     * statements see them), inside the transaction this thread has open.
     *
     * @throws IllegalStateException when this thread has no transaction open
     */
    void exchange(Pipeline statements) {
        Pipeline writes = deferred();
        statements.moveTo(writes);
        try {
            writes.sendAllButLast(current.get());
        } catch (SQLException e) {
            throw failure(e);
        }
    }

    /**
     * Makes the transaction's lock waits end after {@link PostgresDatabase#LOCK_TIMEOUT}, unless
     * the connection does already.
     */
    void limitLockWaits(Connection c) throws SQLException {
        if (!lockTimeoutPerConnection) {
            try (PreparedStatement s = c.prepareStatement("SET LOCAL lock_timeout = '"
                    + PostgresDatabase.LOCK_TIMEOUT + "'")) {
                s.execute();
            }
        }
    }

    /** As {@link #limitLockWaits(Connection)}, as the first statement of {@code p}. */
    void limitLockWaits(Pipeline p) {
        if (!lockTimeoutPerConnection) {
            p.add("SET LOCAL lock_timeout = '" + PostgresDatabase.LOCK_TIMEOUT + "'", x -> { });
        }
    }

    /** {@code e} as the caller's error ({@link DatabaseFailures}). */
    ClarifyException failure(SQLException e) {
        return DatabaseFailures.of(e, description);
    }
}
