package dev.agentx.clarify.store.postgres;

import dev.agentx.clarify.files.IoErrors;
import dev.agentx.clarify.protocol.ClarifyException;
import dev.agentx.clarify.protocol.ErrorCode;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.Set;
import javax.sql.DataSource;

/**
 * Checks the server before anything is migrated or read: its version ({@link
 * PostgresDatabase#OLDEST_SUPPORTED}) and that each connection is a session of its own (no
 * pooler in transaction mode in between). Each refusal says that nothing was changed.
 */
final class ServerCheck {
    /**
     * The SQLSTATEs of a prepared statement that a session has although its connection never
     * prepared it (42P05), or lacks although it did (26000): statements of one client connection
     * running in several sessions.
     */
    private static final Set<String> SHARED_SESSION_STATES = Set.of("42P05", "26000");

    private final DataSource dataSource;
    private final String description;

    ServerCheck(DataSource dataSource, String description) {
        this.dataSource = dataSource;
        this.description = description;
    }

    /**
     * Checks the server on one connection: its version ({@link #requireSupportedVersion}) and that
     * each connection is a session of its own ({@link #requireSessionPerConnection}).
     */
    void check() {
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

    /**
     * Refuses a server older than {@link PostgresDatabase#OLDEST_SUPPORTED}: named at start, rather
     * than failing every done mark.
     */
    private void requireSupportedVersion(Connection c) throws SQLException {
        String[] version = query(c, "SELECT current_setting('server_version_num') || ' ' "
                + "|| current_setting('server_version')").split(" ", 2);
        if (Integer.parseInt(version[0]) < PostgresDatabase.OLDEST_SUPPORTED) {
            throw new ClarifyException(ErrorCode.INTERNAL, description + " runs PostgreSQL " + version[1]
                    + ", and agentx needs PostgreSQL " + PostgresDatabase.OLDEST_SUPPORTED / 10000 + " or later; "
                    + "nothing was changed in it. Upgrade the server, or give agentx a database on a newer one.");
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
            if (DatabaseFailures.cause(e, t -> t instanceof SQLException q
                    && SHARED_SESSION_STATES.contains(q.getSQLState())).isEmpty()) {
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

    /** The first column of the first row of {@code sql} on {@code c}, as text. */
    private static String query(Connection c, String sql) throws SQLException {
        try (java.sql.Statement s = c.createStatement(); ResultSet r = s.executeQuery(sql)) {
            r.next();
            return r.getString(1);
        }
    }
}
