package dev.agentx.clarify.store.postgres;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.agentx.clarify.files.IoErrors;
import dev.agentx.clarify.protocol.ClarifyException;
import dev.agentx.clarify.protocol.ErrorCode;
import dev.agentx.clarify.store.UnitOfWork;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import javax.sql.DataSource;
import org.flywaydb.core.Flyway;
import org.flywaydb.core.api.MigrationInfo;
import org.flywaydb.core.api.MigrationInfoService;
import org.flywaydb.core.api.MigrationState;

/**
 * The PostgreSQL store: a connection pool over one database. Opened to write ({@link Schema#MIGRATE}:
 * the server, the destination of a copy), its schema is brought up to date by the SQL migrations
 * in {@code src/main/resources/db/migration} (each migration runs once, recorded in
 * {@code flyway_schema_history}; several processes opening at once take turns on Flyway's lock),
 * and a schema a newer build made is refused before anything is written. Opened to look
 * ({@link Schema#EXPECT_CURRENT}: the CLI's read commands, the source of a copy), it changes
 * nothing and refuses a schema that is not the one this build knows. Each repository's state is
 * {@link #repository(String)}.
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
    /** The SQLSTATE of {@code agentx_refuse}, a check that failed its transaction (V2__refuse.sql). */
    static final String REFUSED = "P0001";
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

    private final DataSource dataSource;
    private final String description;
    private final AutoCloseable pool;
    /** Where the pool connects, for the readiness check's own connection; null for a given data source. */
    private final DatabaseUrl url;
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
    /** Whether every connection of the pool has {@link #LOCK_TIMEOUT} set at its start; else each lock sets it. */
    private final boolean lockTimeoutPerConnection;
    /** Folds the agent statuses' recorded changes behind the commits that recorded them. */
    private final PgStatusFolds statusFolds = new PgStatusFolds(this);
    /** What this replica's last heartbeat found: other replicas running ({@link #othersRunning()}). */
    private volatile boolean othersRunning;
    /** The replicas' terms, as their heartbeats ({@link #beat(String)}) keep them. */
    private final ClaimTerms terms = new ClaimTerms();
    /** The channels listened to ({@link #listen}), closed with the database. */
    private final List<PgListener> listeners = new java.util.concurrent.CopyOnWriteArrayList<>();
    /** The connections of their own handed out ({@link #dedicated}), closed with the database. */
    private final List<DedicatedConnection> dedicated = new java.util.concurrent.CopyOnWriteArrayList<>();

    /** A database over a data source the caller owns (tests); migrated now. */
    public PostgresDatabase(DataSource dataSource, String description) {
        this(dataSource, description, null, null, Schema.MIGRATE);
    }

    private PostgresDatabase(DataSource dataSource, String description, AutoCloseable pool, DatabaseUrl url,
                             Schema schema) {
        this.url = url;
        this.lockTimeoutPerConnection = pool != null;
        this.dataSource = dataSource;
        this.description = description;
        this.pool = pool;
        checkServer();
        if (schema == Schema.MIGRATE) {
            migrate();
        } else {
            expectCurrent();
        }
    }

    /**
     * Opens a pool of at most {@code poolSize} (and at least two) connections to the URL and migrates the schema.
     *
     * @throws ClarifyException INTERNAL when the database cannot be reached or migrated, saying which
     */
    public static PostgresDatabase open(DatabaseUrl url, int poolSize) {
        return open(url, poolSize, java.time.Duration.ZERO, Schema.MIGRATE);
    }

    /**
     * Opens a pool of at most {@code poolSize} (and at least two) connections to the URL, trying
     * to connect for up to {@code startWait} before giving up (a server starting beside its
     * database; zero tries once: a CLI command), and does {@code schema} with its schema.
     *
     * @throws ClarifyException INTERNAL when the database cannot be reached or migrated, or (to
     *     look) its schema is not this build's, saying which
     */
    public static PostgresDatabase open(DatabaseUrl url, int poolSize, java.time.Duration startWait, Schema schema) {
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(url.jdbcUrl());
        if (url.user() != null) {
            config.setUsername(url.user());
        }
        if (url.password() != null) {
            config.setPassword(url.password());
        }
        // the migration holds two connections at once (its lock and its work): a pool of one would wait forever
        config.setMaximumPoolSize(Math.max(2, poolSize));
        config.setMinimumIdle(Math.min(2, poolSize));
        config.setPoolName("agentx-db");
        config.setConnectionTimeout(5_000);
        config.setValidationTimeout(2_000);
        config.setAutoCommit(true);
        config.setConnectionInitSql(SESSION_SETTINGS);
        config.setInitializationFailTimeout(Math.max(1, startWait.toMillis()));
        HikariDataSource pool;
        try {
            pool = new HikariDataSource(config);
        } catch (RuntimeException e) {
            throw new ClarifyException(connectionLost(e) ? ErrorCode.UNAVAILABLE : ErrorCode.INTERNAL,
                    "cannot connect to PostgreSQL at " + url + ": "
                    + connectFailure(e) + ". Check the database URL (AGENTX_DATABASE_URL for the server, "
                    + "--database-url for a command) and that the database is up.", e);
        }
        try {
            return new PostgresDatabase(pool, url.toString(), pool, url, schema);
        } catch (RuntimeException e) {
            pool.close();
            throw e;
        }
    }

    /**
     * The oldest PostgreSQL whose server this store works with ({@code server_version_num}): the
     * done mark asks {@code pg_current_xact_id_if_assigned()}, which came with 13.
     */
    public static final int OLDEST_SUPPORTED = 130000;

    /**
     * Checks the server before anything is migrated or read, on one connection: its version
     * ({@link #requireSupportedVersion}) and that each connection is a session of its own ({@link
     * #requireSessionPerConnection}).
     */
    private void checkServer() {
        try (Connection a = dataSource.getConnection()) {
            requireSupportedVersion(a);
            requireSessionPerConnection(a);
        } catch (ClarifyException e) {
            throw e;
        } catch (SQLException | RuntimeException e) {
            throw new ClarifyException(ErrorCode.INTERNAL, "cannot check the server of " + description + ": "
                    + IoErrors.innermost(e), e);
        }
    }

    /** Refuses a server older than {@link #OLDEST_SUPPORTED}: named at start, rather than failing every done mark. */
    private void requireSupportedVersion(Connection c) throws SQLException {
        String[] version = query(c, "SELECT current_setting('server_version_num') || ' ' "
                + "|| current_setting('server_version')").split(" ", 2);
        if (Integer.parseInt(version[0]) < OLDEST_SUPPORTED) {
            throw new ClarifyException(ErrorCode.INTERNAL, description + " runs PostgreSQL " + version[1]
                    + ", and agentx needs PostgreSQL " + OLDEST_SUPPORTED / 10000 + " or later; nothing was changed "
                    + "in it. Upgrade the server, or give agentx a database on a newer one.");
        }
    }

    /**
     * Refuses a pooler between agentx and PostgreSQL that hands the statements of one client
     * connection to different server sessions (transaction pooling, as PgBouncer's {@code pool_mode
     * = transaction}): agentx keeps state in its sessions (the settings every connection starts with,
     * statements prepared once per connection, the migrations' lock, the connection that listens for
     * the other replicas' signals), and through such a pooler it would fail in ways that name none
     * of that. The probe: connection {@code a} sets a session variable and notes its session's
     * process; then, a few times, {@code b} opens a transaction and {@code a} reads its variable and
     * process again. A transaction pooler serves one of {@code b}'s transactions with the session
     * {@code a} gave back (at once when it reuses the last one freed, as PgBouncer does by default;
     * within a few rounds when it goes round them), or serves {@code a} from another session. On a
     * direct connection, or through a pooler in session mode, each connection is one session: no
     * round finds either.
     */
    private void requireSessionPerConnection(Connection a) throws SQLException {
        String probe = Long.toHexString(java.util.concurrent.ThreadLocalRandom.current().nextLong());
        String set = "SELECT pg_backend_pid() || ' ' || set_config('agentx.session_probe', '" + probe + "', false)";
        String read = "SELECT pg_backend_pid() || ' ' || current_setting('agentx.session_probe', true)";
        boolean kept = true;
        try (Connection b = dataSource.getConnection()) {
            String mine = query(a, set);
            b.setAutoCommit(false);
            try {
                for (int round = 0; round < 4 && kept; round++) {
                    kept = !mine.startsWith(query(b, "SELECT pg_backend_pid()::text") + " ")
                            && mine.equals(query(a, read));
                    b.rollback();
                }
                query(a, "SELECT set_config('agentx.session_probe', '', false)");
            } finally {
                try {
                    b.rollback();
                    b.setAutoCommit(true);
                } catch (SQLException e) {
                    // not thrown over what the probe found: the pool rolls back or drops the connection
                }
            }
        } catch (SQLException e) {
            // a statement prepared on one client connection met in another's session: the same finding
            if (cause(e, t -> t instanceof SQLException q && SHARED_SESSION_STATES.contains(q.getSQLState()))
                    .isEmpty()) {
                throw e;
            }
            kept = false;
        }
        if (!kept) {
            throw new ClarifyException(ErrorCode.INTERNAL, description + " runs one connection's statements in "
                    + "different sessions of the database: a pooler in transaction mode (PgBouncer's pool_mode = "
                    + "transaction, or another pooler's) is in between. agentx keeps state in each connection's "
                    + "session; nothing was changed in the database. Connect to PostgreSQL directly, or through the "
                    + "pooler in session mode (docs/storage.md).");
        }
    }

    /**
     * The SQLSTATEs of a prepared statement that a session has although its connection never
     * prepared it (42P05), or lacks although it did (26000): statements of one client connection
     * running in several sessions.
     */
    private static final java.util.Set<String> SHARED_SESSION_STATES = java.util.Set.of("42P05", "26000");

    /** The first column of the first row of {@code sql} on {@code c}, as text. */
    private static String query(Connection c, String sql) throws SQLException {
        try (java.sql.Statement s = c.createStatement(); ResultSet r = s.executeQuery(sql)) {
            r.next();
            return r.getString(1);
        }
    }

    private Flyway flyway() {
        return Flyway.configure(PostgresDatabase.class.getClassLoader()).dataSource(dataSource)
                .locations("classpath:db/migration").load();
    }

    /**
     * Brings the schema up to date, after refusing one a newer build made: Flyway would only warn
     * and go on, and this build would then write to tables whose meaning it does not know.
     */
    private void migrate() {
        MigrationInfoService info = schemaInfo();
        newer(info).ifPresent(newer -> {
            throw new ClarifyException(ErrorCode.INTERNAL, newer + " This agentx writes nothing to it, and nothing was "
                    + "changed in it: run the agentx that made it (or a newer one).");
        });
        try {
            flyway().migrate();
        } catch (RuntimeException e) {
            throw new ClarifyException(ErrorCode.INTERNAL, "cannot bring the schema of " + description
                    + " up to date: " + IoErrors.innermost(e), e);
        }
    }

    /** What the database's schema history says against this build's migrations. */
    private MigrationInfoService schemaInfo() {
        try {
            return flyway().info();
        } catch (RuntimeException e) {
            throw new ClarifyException(ErrorCode.INTERNAL, "cannot read the schema version of " + description + ": "
                    + IoErrors.innermost(e), e);
        }
    }

    /**
     * What to say of a schema a newer build made (a migration recorded that this build does not
     * have), or nothing.
     */
    private java.util.Optional<String> newer(MigrationInfoService info) {
        if (Arrays.stream(info.all()).noneMatch(m -> m.getState() == MigrationState.FUTURE_SUCCESS
                || m.getState() == MigrationState.FUTURE_FAILED)) {
            return java.util.Optional.empty();
        }
        return java.util.Optional.of("the schema of " + description + " is at version "
                + info.current().getVersion().getVersion() + ", made by a newer agentx; this one reads version "
                + latest(info) + ".");
    }

    /** The newest version this build's migrations make. */
    private static String latest(MigrationInfoService info) {
        return Arrays.stream(info.all()).filter(m -> m.getState().isResolved()).reduce((a, b) -> b)
                .map(m -> m.getVersion().getVersion()).orElse("?");
    }

    /**
     * Refuses a schema other than the one this build's migrations make, without changing it: none
     * yet, one a migration behind (the server of this build brings it up to date when it starts),
     * or one a newer build made.
     */
    private void expectCurrent() {
        MigrationInfoService info = schemaInfo();
        MigrationInfo current = info.current();
        String latest = latest(info);
        if (current == null) {
            throw new ClarifyException(ErrorCode.INTERNAL, description + " holds no agentx schema yet: it is made "
                    + "when 'agentx serve' (or 'agentx store copy --to' it) first opens the database; this command "
                    + "only reads.");
        }
        String version = current.getVersion().getVersion();
        if (info.pending().length > 0) {
            throw new ClarifyException(ErrorCode.INTERNAL, "the schema of " + description + " is at version "
                    + version + "; this agentx reads version " + latest + ". The server of this version brings "
                    + "it up to date when it starts; this command only reads and changes nothing.");
        }
        newer(info).ifPresent(newer -> {
            throw new ClarifyException(ErrorCode.INTERNAL, newer + " Use the agentx of the server's version.");
        });
    }

    /** Why a connection could not be made, in a few words: the driver's reason, a host name it could not find. */
    static String connectFailure(Throwable e) {
        return cause(e, t -> t instanceof java.net.UnknownHostException).map(t -> "unknown host " + t.getMessage())
                .orElseGet(() -> IoErrors.innermost(e).replaceAll("[.\\s]+$", ""));
    }

    /** The first of {@code e} and its causes that {@code which} accepts. */
    static java.util.Optional<Throwable> cause(Throwable e, java.util.function.Predicate<Throwable> which) {
        for (Throwable t = e; t != null; t = t.getCause() == t ? null : t.getCause()) {
            if (which.test(t)) {
                return java.util.Optional.of(t);
            }
        }
        return java.util.Optional.empty();
    }

    /** The state of one repository ({@code owner/name}). */
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
    public PgReplicas replicas(String replica, java.time.Clock clock) {
        return new PgReplicas(this, replica, clock);
    }

    /** The deliveries every replica of a server on this database acknowledged, as {@code replica} takes part. */
    public PgDeliveryQueue deliveries(String replica, java.time.Clock clock) {
        return new PgDeliveryQueue(this, replica, clock);
    }

    /** The notes every replica of a server on this database sees. */
    public PgNotes notes(java.time.Clock clock) {
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

    /** The repositories that have any state here, sorted. */
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
        try (Connection c = probeConnection(); PreparedStatement s = c.prepareStatement("SELECT 1")) {
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
        try (Connection c = probeConnection()) {
            long sent = terms.now();
            beat(c, replica, 2);
            terms.beaten(replica, sent);
            try (PreparedStatement s = c.prepareStatement("SELECT EXISTS (SELECT 1 FROM replica_beats WHERE replica <> ? "
                    + "AND " + PgDeliveryQueue.BEAT_FRESH + ")")) {
                s.setQueryTimeout(2);
                s.setString(1, replica);
                try (ResultSet r = s.executeQuery()) {
                    othersRunning = r.next() && r.getBoolean(1);
                }
            }
            return true;
        } catch (SQLException e) {
            return false;
        }
    }

    /**
     * The replicas (servers) that have beaten within {@link PgDeliveryQueue#GONE_AFTER}, with the
     * age of their last beat in whole seconds: those running on this database now, or stopped
     * without saying so (killed) within that time.
     */
    public Map<String, Long> runningReplicas() {
        return inTransaction(c -> {
            Map<String, Long> out = new java.util.TreeMap<>();
            try (PreparedStatement s = c.prepareStatement("SELECT replica, floor(extract(epoch FROM now() - seen_at)) "
                    + "FROM replica_beats WHERE " + PgDeliveryQueue.BEAT_FRESH); ResultSet r = s.executeQuery()) {
                while (r.next()) {
                    out.put(r.getString(1), Math.max(0, r.getLong(2)));
                }
            }
            return out;
        });
    }

    /** The term of {@code replica}'s claims ({@link ClaimTerms}): empty while its heartbeats have lapsed. */
    java.util.OptionalLong claimTerm(String replica) {
        return terms.current(replica);
    }

    /**
     * Measures the replicas' terms ({@link ClaimTerms}) with {@code ticker} (nanoseconds, never
     * going back) instead of {@link System#nanoTime}: tests that stand for a replica paused.
     */
    public void tickTermsWith(java.util.function.LongSupplier ticker) {
        terms.tickWith(ticker);
    }

    /** Whether other replicas had beaten within {@link PgDeliveryQueue#GONE_AFTER} at this replica's last {@link #beat}. */
    boolean othersRunning() {
        return othersRunning;
    }

    /**
     * Sets the heartbeat of {@code replica} to the database's clock on {@code c}, committed as
     * {@code c} commits; a beat more than {@link PgDeliveryQueue#STEADY_GAP} after the one before
     * (the replica or the database stalled) starts its steady time ({@code up_since}) again.
     */
    static void beat(Connection c, String replica, int timeoutSeconds) throws SQLException {
        try (PreparedStatement s = c.prepareStatement("INSERT INTO replica_beats (replica, seen_at, up_since) "
                + "VALUES (?, now(), now()) ON CONFLICT (replica) DO UPDATE SET up_since = CASE WHEN "
                + "replica_beats.seen_at > now() - make_interval(secs => " + PgDeliveryQueue.STEADY_GAP.toSeconds()
                + ") THEN replica_beats.up_since ELSE now() END, seen_at = now()")) {
            s.setQueryTimeout(timeoutSeconds);
            s.setString(1, replica);
            s.executeUpdate();
        }
    }

    /** Removes the heartbeat of {@code replica}, which stops: the others take over what it left at once. */
    public void leave(String replica) {
        autoCommit(c -> {
            try (PreparedStatement s = c.prepareStatement("DELETE FROM replica_beats WHERE replica = ?")) {
                s.setString(1, replica);
                return s.executeUpdate();
            }
        });
    }

    private Connection probeConnection() throws SQLException {
        return ownConnection(3);
    }

    /**
     * A connection of its own, outside the pool (with a given data source: one of its), that gives
     * up connecting after 2 s and waiting for an answer after {@code socketTimeoutSeconds} (0: never).
     */
    private Connection ownConnection(int socketTimeoutSeconds) throws SQLException {
        if (url == null) {
            return dataSource.getConnection();
        }
        java.util.Properties p = new java.util.Properties();
        if (url.user() != null) {
            p.setProperty("user", url.user());
        }
        if (url.password() != null) {
            p.setProperty("password", url.password());
        }
        p.setProperty("connectTimeout", "2");
        p.setProperty("loginTimeout", "2");
        p.setProperty("socketTimeout", String.valueOf(socketTimeoutSeconds));
        return new org.postgresql.Driver().connect(url.jdbcUrl(), p);
    }

    /**
     * A connection of its own, outside the pool, for work one thread at a time does and that must
     * not wait behind the pool's users ({@link DedicatedConnection}); closed with the database.
     */
    DedicatedConnection dedicated() {
        DedicatedConnection c = new DedicatedConnection(this,
                () -> ownConnection(DedicatedConnection.ANSWER_TIMEOUT_SECONDS), DedicatedConnection.IDLE_CHECK_NANOS);
        dedicated.add(c);
        return c;
    }

    /**
     * Hands {@code listener} the payload of every notification on {@code channel} ({@code NOTIFY}
     * by any replica), on a thread and a connection of their own, until the database is closed.
     * Notifications sent while that connection is broken, or before it first listens, are missed;
     * {@code listening} runs each time it starts to listen, so that the caller can look again.
     */
    void listen(String channel, java.util.function.Consumer<String> listener, Runnable listening) {
        // no socket timeout: the connection waits for notifications, and its waits are bounded by the driver
        listeners.add(new PgListener(() -> ownConnection(0), channel, listener, listening));
    }

    /**
     * Sends {@code payload} to the listeners of {@code channel} on every replica, in a transaction of
     * its own, committed without waiting for the WAL's flush: a notification only lets a listener act
     * sooner. Failures are the caller's to ignore.
     */
    void signal(String channel, String payload) {
        autoCommit(c -> {
            try (PreparedStatement s = c.prepareStatement(
                    "SELECT pg_notify(?, ?), set_config('synchronous_commit', 'off', true)")) {
                s.setString(1, channel);
                s.setString(2, payload);
                s.executeQuery().close();
            }
            return null;
        });
    }

    public String describe() {
        return description;
    }

    DataSource dataSource() {
        return dataSource;
    }

    /** Work on one connection in one transaction. */
    @FunctionalInterface
    public interface Work<T> {
        T run(Connection c) throws SQLException;
    }

    /**
     * Runs {@code work} in one transaction: committed when it returns, rolled back when it throws.
     * Called inside another {@code inTransaction} of the same thread, it joins that transaction,
     * after the writes deferred so far are sent ({@link #deferred}): {@code work} sees them. A lock
     * wait over {@link #LOCK_TIMEOUT} is LOCK_TIMEOUT (safe to retry); any other database failure
     * is INTERNAL, saying which database.
     */
    public <T> T inTransaction(Work<T> work) {
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
                        org.slf4j.LoggerFactory.getLogger(PostgresDatabase.class)
                                .debug("a connection failed after its transaction committed: {}", e.toString());
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
            mine = new java.util.HashMap<>();
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

    @Override
    public <T> T run(java.util.function.Supplier<T> work) {
        return inTransaction(c -> work.get());
    }

    @Override
    public boolean open() {
        return current.get() != null;
    }

    @Override
    public boolean atomic() {
        return true;
    }

    @Override
    public void join(Participant p) {
        List<Participant> joined = participants.get();
        if (joined == null) {
            throw new IllegalStateException("no transaction open on this thread to take part in");
        }
        joined.add(p);
    }

    /**
     * Runs {@code work} on a connection in auto-commit mode: each statement is its own
     * transaction, committed as it runs (one round trip for a single statement, where
     * {@link #inTransaction} needs a second one for the commit). Failures as there.
     */
    public <T> T autoCommit(Work<T> work) {
        if (current.get() != null) {
            return inTransaction(work); // inside a unit of this thread: part of its transaction
        }
        try (Connection c = dataSource.getConnection()) {
            return work.run(c);
        } catch (SQLException e) {
            throw failure(e);
        }
    }

    /** Makes the transaction's lock waits end after {@link #LOCK_TIMEOUT}, unless the connection does already. */
    void limitLockWaits(Connection c) throws SQLException {
        if (!lockTimeoutPerConnection) {
            try (PreparedStatement s = c.prepareStatement("SET LOCAL lock_timeout = '" + LOCK_TIMEOUT + "'")) {
                s.execute();
            }
        }
    }

    /** As {@link #limitLockWaits(Connection)}, as the first statement of {@code p}. */
    void limitLockWaits(Pipeline p) {
        if (!lockTimeoutPerConnection) {
            p.add("SET LOCAL lock_timeout = '" + LOCK_TIMEOUT + "'", x -> { });
        }
    }

    /**
     * Whether {@code e} says the connection broke: SQLSTATE class 08, the server shutting down
     * (57P01-57P03), or the session ended for sitting in its transaction past {@link
     * #IDLE_IN_TRANSACTION_TIMEOUT} (25P03: this process was paused).
     */
    static boolean connectionLost(Throwable e) {
        return cause(e, t -> t instanceof SQLException s && s.getSQLState() != null
                && (s.getSQLState().startsWith("08") || s.getSQLState().matches("57P0[123]|25P03"))).isPresent();
    }

    ClarifyException failure(SQLException e) {
        if ("55P03".equals(e.getSQLState())) {
            return new ClarifyException(ErrorCode.LOCK_TIMEOUT, "Another writer held the lock for over "
                    + LOCK_TIMEOUT + " in " + description + "; nothing was changed. Retry.", e);
        }
        java.util.Optional<Throwable> refused = cause(e, t -> t instanceof SQLException s
                && REFUSED.equals(s.getSQLState()));
        if (refused.isPresent()) {
            // a check by agentx_refuse failed the transaction: what it guarded was no longer this writer's
            Throwable t = refused.get();
            String why = t instanceof org.postgresql.util.PSQLException p && p.getServerErrorMessage() != null
                    ? p.getServerErrorMessage().getMessage() : t.getMessage();
            return new ClarifyException(ErrorCode.LOCK_LOST, why, e);
        }
        return new ClarifyException(connectionLost(e) ? ErrorCode.UNAVAILABLE : ErrorCode.INTERNAL, "PostgreSQL at "
                + description + ": " + IoErrors.innermost(e), e);
    }

    @Override
    public void close() {
        listeners.forEach(PgListener::close);
        dedicated.forEach(DedicatedConnection::close);
        statusFolds.close();
        if (pool != null) {
            try {
                pool.close();
            } catch (Exception e) {
                throw new IllegalStateException("closing the pool of " + description + ": " + e.getMessage(), e);
            }
        }
    }
}
