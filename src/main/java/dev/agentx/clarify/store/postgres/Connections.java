package dev.agentx.clarify.store.postgres;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.agentx.clarify.protocol.ClarifyException;
import dev.agentx.clarify.protocol.ErrorCode;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.Properties;
import javax.sql.DataSource;

/**
 * Where the store's connections come from: the pool (HikariCP), whose connections start with
 * {@link PostgresDatabase#SESSION_SETTINGS}, and connections of their own outside it, for work that must not wait
 * behind the pool's users (the readiness probe and heartbeat, the acknowledgements' inserts, the
 * listeners of notifications). Over a data source the caller gives (tests) both come from it.
 */
final class Connections implements AutoCloseable {
    private final DataSource dataSource;
    /** The database, as messages name it: its URL without the password. */
    private final String description;
    /** The pool, closed with the connections; null for a given data source. */
    private final AutoCloseable pool;
    /** Where the pool connects, for the connections of their own; null for a given data source. */
    private final DatabaseUrl url;

    private Connections(DataSource dataSource, String description, AutoCloseable pool, DatabaseUrl url) {
        this.dataSource = dataSource;
        this.description = description;
        this.pool = pool;
        this.url = url;
    }

    /** The connections of a data source the caller owns (tests): its own settings, and every connection from it. */
    static Connections given(DataSource dataSource, String description) {
        return new Connections(dataSource, description, null, null);
    }

    /**
     * Opens a pool of at most {@code poolSize} (and at least two) connections to the URL, trying
     * to connect for up to {@code startWait} before giving up (zero tries once).
     *
     * @throws ClarifyException UNAVAILABLE when the database does not answer, INTERNAL when it
     *     refuses the connection (a login that failed), saying which
     */
    static Connections pool(DatabaseUrl url, int poolSize, Duration startWait) {
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
        config.setConnectionInitSql(PostgresDatabase.SESSION_SETTINGS);
        config.setInitializationFailTimeout(Math.max(1, startWait.toMillis()));
        try {
            HikariDataSource pool = new HikariDataSource(config);
            return new Connections(pool, url.toString(), pool, url);
        } catch (RuntimeException e) {
            throw new ClarifyException(DatabaseFailures.connectionLost(e) ? ErrorCode.UNAVAILABLE : ErrorCode.INTERNAL,
                    "cannot connect to PostgreSQL at " + url + ": "
                    + DatabaseFailures.connectFailure(e) + ". Check the database URL (AGENTX_DATABASE_URL for the "
                    + "server, --database-url for a command) and that the database is up.", e);
        }
    }

    /** The database, as messages name it. */
    String description() {
        return description;
    }

    /** The pool (or the given data source). */
    DataSource dataSource() {
        return dataSource;
    }

    /**
     * Whether every connection of the pool has {@link PostgresDatabase#LOCK_TIMEOUT} set at its start; a given
     * data source's do not, and each transaction that locks sets it.
     */
    boolean lockTimeoutPerConnection() {
        return pool != null;
    }

    /** A connection of its own for a check of a few seconds: the readiness probe, the heartbeat. */
    Connection probe() throws SQLException {
        return own(3);
    }

    /**
     * A connection of its own, outside the pool (with a given data source: one of its), that gives
     * up connecting after 2 s and waiting for an answer after {@code socketTimeoutSeconds} (0: never).
     */
    Connection own(int socketTimeoutSeconds) throws SQLException {
        if (url == null) {
            return dataSource.getConnection();
        }
        Properties p = new Properties();
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

    /** Closes the pool, if it is ours. */
    @Override
    public void close() {
        if (pool != null) {
            try {
                pool.close();
            } catch (Exception e) {
                throw new IllegalStateException("closing the pool of " + description + ": " + e.getMessage(), e);
            }
        }
    }
}
