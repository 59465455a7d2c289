package dev.agentx.clarify.bench;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import javax.sql.DataSource;

/**
 * The statements and transactions a PostgreSQL server ran over a span of a benchmark
 * ({@code pg_stat_statements} and {@code pg_stat_database}): counts, so unlike CPU times they do
 * not vary with how busy the machine is, and a change that saves statements shows as fewer; and
 * the time the statements spent planning and executing and the WAL they wrote. The server must
 * preload {@code pg_stat_statements} with {@code pg_stat_statements.track_planning} on; {@link
 * #install} creates the extension, {@link #start} clears
 * its counts, {@link #since} reads them. The benchmark's own queries are left out.
 */
final class DatabaseWork {
    /**
     * One kind of statement: how often it ran and how often it was planned (a statement the driver
     * has prepared on the server with a generic plan runs without), the milliseconds it spent
     * planning and executing, and the WAL it wrote.
     */
    record Statement(long calls, long plans, double planMillis, double execMillis, long walBytes, String text) {
    }

    private final DataSource source;
    private final long commits0;

    private DatabaseWork(DataSource source, long commits0) {
        this.source = source;
        this.commits0 = commits0;
    }

    /**
     * Creates the extension. Call it before the servers connect: creating it changes the catalog,
     * which throws away the plans every session has cached. Created between the warm-up and the
     * measured run, the take's statement was then planned at every run for the whole measured span
     * (1.0 plans and 0.24 ms of planning per delivery, none when the extension was there first):
     * the figures would have counted a planning the server does not do.
     */
    static void install(DataSource source) throws SQLException {
        try (Connection c = source.getConnection();
             PreparedStatement s = c.prepareStatement("CREATE EXTENSION IF NOT EXISTS pg_stat_statements")) {
            s.execute();
        }
    }

    /** Clears the counts; {@link #install} must have run. */
    static DatabaseWork start(DataSource source) throws SQLException {
        try (Connection c = source.getConnection()) {
            try (PreparedStatement s = c.prepareStatement("SELECT pg_stat_statements_reset()")) {
                s.execute();
            }
            return new DatabaseWork(source, commits(c));
        }
    }

    private static long commits(Connection c) throws SQLException {
        try (PreparedStatement s = c.prepareStatement("SELECT xact_commit + xact_rollback FROM pg_stat_database "
                + "WHERE datname = current_database()"); ResultSet r = s.executeQuery()) {
            r.next();
            return r.getLong(1);
        }
    }

    /** The transactions since {@link #start} and the statements, most called first. */
    Result since() throws SQLException {
        try (Connection c = source.getConnection()) {
            long transactions = commits(c) - commits0;
            List<Statement> out = new ArrayList<>();
            try (PreparedStatement s = c.prepareStatement("SELECT calls, plans, total_plan_time, total_exec_time, wal_bytes, "
                    + "regexp_replace(query, '\\s+', ' ', 'g') "
                    + "FROM pg_stat_statements WHERE dbid = (SELECT oid FROM pg_database WHERE datname = "
                    + "current_database()) AND query NOT LIKE '%pg_stat%' ORDER BY calls DESC");
                 ResultSet r = s.executeQuery()) {
                while (r.next()) {
                    out.add(new Statement(r.getLong(1), r.getLong(2), r.getDouble(3), r.getDouble(4), r.getLong(5),
                            r.getString(6)));
                }
            }
            return new Result(transactions, out);
        }
    }

    record Result(long transactions, List<Statement> statements) {
        long calls() {
            return statements.stream().mapToLong(Statement::calls).sum();
        }

        long plans() {
            return statements.stream().mapToLong(Statement::plans).sum();
        }

        double planMillis() {
            return statements.stream().mapToDouble(Statement::planMillis).sum();
        }

        double execMillis() {
            return statements.stream().mapToDouble(Statement::execMillis).sum();
        }

        long walBytes() {
            return statements.stream().mapToLong(Statement::walBytes).sum();
        }
    }
}
