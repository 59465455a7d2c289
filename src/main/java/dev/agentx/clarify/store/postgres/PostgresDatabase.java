package dev.agentx.clarify.store.postgres;

import dev.agentx.clarify.protocol.ClarifyException;
import dev.agentx.clarify.store.UnitOfWork;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.LongSupplier;
import java.util.function.Supplier;
import javax.sql.DataSource;

/**
 * The PostgreSQL store, and the place to start reading it: one database, opened over a pool of
 * connections ({@link Connections}) whose sessions start with {@link #SESSION_SETTINGS}, its
 * server checked ({@link ServerCheck}) and its schema brought up to date or checked ({@link
 * SchemaMigrations}, as {@link Schema} says). Opened to write ({@link Schema#MIGRATE}: the server,
 * the destination of a copy), its schema is migrated, and one a newer build made is refused before
 * anything is written; opened to look ({@link Schema#EXPECT_CURRENT}: the CLI's read commands,
 * the source of a copy), it changes nothing and refuses a schema that is not the one this build
 * knows.
 *
 * <p>It is the unit of work of a delivery ({@link Transactions}: one transaction per unit, which
 * the store's classes join and defer their writes to) and hands out the store's parts: each
 * repository's state ({@link #repository(String)}: ledgers, statuses, events), the deliveries
 * ({@link PgDeliveryQueue}), the replicas' claims and leases ({@link PgReplicas}), their
 * heartbeats ({@link Heartbeats}), the shared notes, the dashboard's sessions and comment links,
 * and the notifications between replicas ({@link Notifications}).
 */
public final class PostgresDatabase implements AutoCloseable, UnitOfWork {
    /** What opening does with the database's schema. */
    public enum Schema {
        /** Brings it up to date, refusing one a newer build made: who writes (the server, a copy's destination). */
        MIGRATE,
        /** Leaves it alone and refuses one this build does not know: who only looks. */
        EXPECT_CURRENT
    }

    /**
     * The oldest PostgreSQL whose server this store works with ({@code server_version_num}): the
     * done mark asks {@code pg_current_xact_id_if_assigned()}, which came with 13.
     */
    public static final int OLDEST_SUPPORTED = 130000;

    /**
     * Every statement the server repeats is planned once per connection. They look rows up by
     * key or read small tables, where the plan does not depend on the values; the daily prunes
     * are the only ones whose range a custom plan could use. Left to choose, PostgreSQL's plan
     * cache compares the generic plan with the average cost of the custom plans it made before;
     * custom plans made while a table was small kept the take of a delivery planned again at
     * every run once the table had grown (0.24 to 0.29 ms of the database's CPU per delivery,
     * more than the statement's own execution).
     *
     * <p>The one plan a connection keeps must not depend on the table's size when it was made:
     * planned while {@code delivery_queue} was empty (its statistics say so after a vacuum),
     * every path costs nothing and the take and the done mark would read the whole queue for
     * the connection's life, however long the queue grew meanwhile (a backlog after an outage).
     * So sequential scans are off: a statement with a usable index uses it, one without scans
     * the table as before. Each lookup has one index to come by (the queue's line index leaves
     * out what a lookup by seq alone could match).
     */
    static final String GENERIC_PLANS = "SET plan_cache_mode = force_generic_plan; SET enable_seqscan = off";
    /** How long a statement waits for a row or issue lock before it gives up with LOCK_TIMEOUT. */
    static final String LOCK_TIMEOUT = "15s";
    /**
     * How long a session of ours may sit in an open transaction without sending a statement
     * before PostgreSQL ends it. Our transactions never wait on anything but the database (no
     * network call, no lock of our own, inside one), so only a process that stopped mid-way (a
     * paused VM, SIGSTOP, a GC pause this long) gets there; ending its session releases the
     * issue locks it held, so the replicas waiting on them go on before their {@link
     * #LOCK_TIMEOUT} instead of failing and waiting for it again. The paused process finds
     * its connection gone when it resumes, and its transaction rolled back: nothing of it
     * counted, and the delivery is taken again.
     */
    static final String IDLE_IN_TRANSACTION_TIMEOUT = "10s";
    /** What every connection of the pool sets at its start: the two timeouts above and {@link #GENERIC_PLANS}. */
    static final String SESSION_SETTINGS = "SET lock_timeout = '" + LOCK_TIMEOUT + "'; "
            + "SET idle_in_transaction_session_timeout = '" + IDLE_IN_TRANSACTION_TIMEOUT + "'; " + GENERIC_PLANS;

    private final Connections connections;
    private final String description;
    private final Transactions transactions;
    /** Folds the agent statuses' recorded changes behind the commits that recorded them. */
    private final PgStatusFolds statusFolds = new PgStatusFolds(this);
    private final Heartbeats heartbeats;
    private final Notifications notifications;
    /** The connections of their own handed out ({@link #dedicated}), closed with the database. */
    private final List<DedicatedConnection> dedicated = new CopyOnWriteArrayList<>();

    /** A database over a data source the caller owns (tests); migrated now. */
    public PostgresDatabase(DataSource dataSource, String description) {
        this(Connections.given(dataSource, description), Schema.MIGRATE);
    }

    private PostgresDatabase(Connections connections, Schema schema) {
        this.connections = connections;
        this.description = connections.description();
        this.transactions = new Transactions(connections.dataSource(), description,
                connections.lockTimeoutPerConnection());
        this.heartbeats = new Heartbeats(connections, transactions);
        this.notifications = new Notifications(connections, this::dedicated);
        new ServerCheck(connections.dataSource(), description).check();
        SchemaMigrations migrations = new SchemaMigrations(connections.dataSource(), description);
        if (schema == Schema.MIGRATE) {
            migrations.migrate();
        } else {
            migrations.expectCurrent();
        }
    }

    /**
     * Opens a pool of at most {@code poolSize} (and at least two) connections to the URL and migrates the schema.
     *
     * @throws ClarifyException INTERNAL when the database cannot be reached or migrated, saying which
     */
    public static PostgresDatabase open(DatabaseUrl url, int poolSize) {
        return open(url, poolSize, Duration.ZERO, Schema.MIGRATE);
    }

    /**
     * Opens a pool of at most {@code poolSize} (and at least two) connections to the URL, trying
     * to connect for up to {@code startWait} before giving up (a server starting beside its
     * database; zero tries once: a CLI command), and does {@code schema} with its schema.
     *
     * @throws ClarifyException INTERNAL when the database cannot be reached or migrated, or (to
     *     look) its schema is not this build's, saying which
     */
    public static PostgresDatabase open(DatabaseUrl url, int poolSize, Duration startWait, Schema schema) {
        Connections connections = Connections.pool(url, poolSize, startWait);
        try {
            return new PostgresDatabase(connections, schema);
        } catch (RuntimeException e) {
            connections.close();
            throw e;
        }
    }

    public String describe() {
        return description;
    }

    /** Which repository each state key is, under which name, and where the server may post; every replica sees them. */
    public PgRepositoryRecords records() {
        return new PgRepositoryRecords(this);
    }

    /** The state of one repository, by its key (GitHub's id of it, in decimal). */
    public PostgresRepositoryState repository(String repo) {
        return new PostgresRepositoryState(this, repo);
    }

    PgStatusFolds statusFolds() {
        return statusFolds;
    }

    /**
     * Starts folding the agent statuses' recorded changes now (a server at its start), not at the
     * first commit that records one: what a process that died left is folded without waiting for
     * a delivery (docs/storage.md).
     */
    public void foldStatuses() {
        statusFolds.start();
    }

    /** The replicas of one server on this database, as {@code replica} takes part. */
    public PgReplicas replicas(String replica, Clock clock) {
        return new PgReplicas(this, replica, clock);
    }

    /** The deliveries every replica of a server on this database acknowledged, as {@code replica} takes part. */
    public PgDeliveryQueue deliveries(String replica, Clock clock) {
        return new PgDeliveryQueue(this, replica, clock);
    }

    /** The notes every replica of a server on this database sees. */
    public PgNotes notes(Clock clock) {
        return new PgNotes(this, clock);
    }

    /** The dashboard's sessions, known to every replica. */
    public PgDashboardSessions dashboardSessions() {
        return new PgDashboardSessions(this);
    }

    /** The ids of the comments any replica posted, for the dashboard's links. */
    public PgCommentLinks commentLinks() {
        return new PgCommentLinks(this);
    }

    /** The keys of the repositories that have any state here, sorted as text. */
    public List<String> repositories() {
        return inTransaction(c -> {
            List<String> out = new ArrayList<>();
            try (PreparedStatement s = c.prepareStatement("SELECT repo FROM ledgers UNION SELECT repo FROM "
                    + "agent_statuses UNION SELECT repo FROM events ORDER BY 1"); ResultSet r = s.executeQuery()) {
                while (r.next()) {
                    out.add(r.getString(1));
                }
            }
            return out;
        });
    }

    /**
     * Deletes the state of {@code repo} (its ledgers, statuses, status changes not folded yet and
     * events) and the shared notes {@code notes}, in one transaction: what {@code agentx store
     * copy} wrote for a repository, removed again when the copy failed.
     */
    public void forgetRepository(String repo, List<String> notes) {
        inTransaction(c -> {
            for (String table : new String[] {"ledgers", "agent_statuses", "status_changes", "events"}) {
                try (PreparedStatement s = c.prepareStatement("DELETE FROM " + table + " WHERE repo = ?")) {
                    s.setString(1, repo);
                    s.executeUpdate();
                }
            }
            try (PreparedStatement s = c.prepareStatement("DELETE FROM shared_notes WHERE name = ANY (?)")) {
                s.setArray(1, c.createArrayOf("text", notes.toArray()));
                s.executeUpdate();
            }
            return null;
        });
    }

    /**
     * Whether the database answers a trivial query now, within about two seconds (readiness). A
     * connection of its own, not the pool's: the pool would wait its full connection timeout for a
     * database that is gone, and a busy pool must not look like a missing database.
     */
    public boolean reachable() {
        try (Connection c = connections.probe(); PreparedStatement s = c.prepareStatement("SELECT 1")) {
            s.setQueryTimeout(2);
            s.executeQuery().close();
            return true;
        } catch (SQLException e) {
            return false;
        }
    }

    /**
     * As {@link #reachable()}, the probe being the heartbeat of {@code replica} (its row in
     * {@code replica_beats} set to the database's clock): a replica that cannot beat is gone for
     * the others ({@link PgDeliveryQueue#GONE_AFTER}), and also refuses deliveries itself.
     */
    public boolean beat(String replica) {
        return heartbeats.beat(replica);
    }

    /**
     * The replicas (servers) that have beaten within {@link PgDeliveryQueue#GONE_AFTER}, with the
     * age of their last beat in whole seconds: those running on this database now, or stopped
     * without saying so (killed) within that time.
     */
    public Map<String, Long> runningReplicas() {
        return heartbeats.running();
    }

    /** Removes the heartbeat of {@code replica}, which stops: the others take over what it left at once. */
    public void leave(String replica) {
        heartbeats.leave(replica);
    }

    /**
     * Measures the replicas' terms ({@link ClaimTerms}) with {@code ticker} (nanoseconds, never
     * going back) instead of {@link System#nanoTime}: tests that stand for a replica paused.
     */
    public void tickTermsWith(LongSupplier ticker) {
        heartbeats.tickTermsWith(ticker);
    }

    Heartbeats heartbeats() {
        return heartbeats;
    }

    /**
     * Tells {@code changed} of each ledger change any process commits on this database (its
     * repository as the store keys it, and its issue), on a thread of its own, and {@code missed}
     * each time listening starts: what changed before may not have been told.
     */
    public void onLedgerChange(java.util.function.BiConsumer<String, Integer> changed, Runnable missed) {
        ledgerListeners.add(changed);
        LedgerSignals.listen(notifications, changed, missed);
    }

    /** This process's {@link #onLedgerChange} listeners, told directly of its own changes while it runs alone. */
    private final List<java.util.function.BiConsumer<String, Integer>> ledgerListeners =
            new java.util.concurrent.CopyOnWriteArrayList<>();

    /**
     * Whether a ledger change this process commits must go to the other processes on the database
     * ({@code NOTIFY}): yes, unless it is a replica that runs alone ({@link Heartbeats#alone}).
     */
    boolean othersMayListen() {
        return !heartbeats.alone();
    }

    /** Tells this process's own listeners that {@code repo}'s ledger of {@code issue} changed (committed). */
    void changedHere(String repo, int issue) {
        for (java.util.function.BiConsumer<String, Integer> l : ledgerListeners) {
            try {
                l.accept(repo, issue);
            } catch (RuntimeException e) {
                org.slf4j.LoggerFactory.getLogger(PostgresDatabase.class).debug("a ledger listener failed: {}", e.toString());
            }
        }
    }

    Notifications notifications() {
        return notifications;
    }

    /**
     * A connection of its own, outside the pool, for work one thread at a time does and that must
     * not wait behind the pool's users ({@link DedicatedConnection}); closed with the database.
     */
    DedicatedConnection dedicated() {
        DedicatedConnection c = new DedicatedConnection(this, () -> connections.own(
                DedicatedConnection.ANSWER_TIMEOUT_SECONDS), DedicatedConnection.IDLE_CHECK_NANOS);
        dedicated.add(c);
        return c;
    }

    /** Work on one connection in one transaction. */
    @FunctionalInterface
    public interface Work<T> {
        T run(Connection c) throws SQLException;
    }

    /**
     * Runs {@code work} in one transaction, or as part of the one this thread has open ({@link
     * Transactions#inTransaction}). A lock wait over {@link #LOCK_TIMEOUT} is LOCK_TIMEOUT (safe to
     * retry); any other database failure is INTERNAL, saying which database.
     */
    public <T> T inTransaction(Work<T> work) {
        return transactions.inTransaction(work);
    }

    /**
     * Runs {@code work} in auto-commit mode, each statement committed as it runs, or as part of the
     * transaction this thread has open ({@link Transactions#autoCommit}).
     */
    public <T> T autoCommit(Work<T> work) {
        return transactions.autoCommit(work);
    }

    @Override
    public <T> T run(Supplier<T> work) {
        return inTransaction(c -> work.get());
    }

    @Override
    public boolean open() {
        return transactions.open();
    }

    @Override
    public boolean atomic() {
        return true;
    }

    @Override
    public void join(Participant p) {
        transactions.join(p);
    }

    /** {@link Transactions#deferred}. */
    Pipeline deferred() {
        return transactions.deferred();
    }

    /** {@link Transactions#notesLocked}. */
    Map<String, String> notesLocked() {
        return transactions.notesLocked();
    }

    /** {@link Transactions#notesLockedIfAny}. */
    Map<String, String> notesLockedIfAny() {
        return transactions.notesLockedIfAny();
    }

    /** {@link Transactions#write}. */
    void write(Pipeline statements) {
        transactions.write(statements);
    }

    /** {@link Transactions#exchange}. */
    void exchange(Pipeline statements) {
        transactions.exchange(statements);
    }

    /** {@link Transactions#limitLockWaits(Connection)}. */
    void limitLockWaits(Connection c) throws SQLException {
        transactions.limitLockWaits(c);
    }

    /** {@link Transactions#limitLockWaits(Pipeline)}. */
    void limitLockWaits(Pipeline p) {
        transactions.limitLockWaits(p);
    }

    /** {@code e} as the caller's error, naming this database ({@link DatabaseFailures}). */
    ClarifyException failure(SQLException e) {
        return transactions.failure(e);
    }

    @Override
    public void close() {
        notifications.close();
        dedicated.forEach(DedicatedConnection::close);
        statusFolds.close();
        connections.close();
    }
}
