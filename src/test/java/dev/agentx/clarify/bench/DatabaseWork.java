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
 * the time the statements spent executing and the WAL they wrote. The
 * server must preload {@code pg_stat_statements}; {@link #start} creates the extension and clears
 * its counts, {@link #since} reads them. The benchmark's own queries are left out.
 */
final class DatabaseWork {
    /** One kind of statement, how often it ran, the milliseconds it spent executing and the WAL it wrote. */
    record Statement(long calls, double execMillis, long walBytes, String text) {
    }

    private final DataSource source;
    private final long commits0;

    private DatabaseWork(DataSource source, long commits0) {
        this.source = source;
        this.commits0 = commits0;
    }

    static DatabaseWork start(DataSource source) throws SQLException {
        try (Connection c = source.getConnection()) {
            try (PreparedStatement s = c.prepareStatement("CREATE EXTENSION IF NOT EXISTS pg_stat_statements")) {
                s.execute();
            }
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
            try (PreparedStatement s = c.prepareStatement("SELECT calls, total_exec_time, wal_bytes, "
                    + "regexp_replace(query, '\\s+', ' ', 'g') "
                    + "FROM pg_stat_statements WHERE dbid = (SELECT oid FROM pg_database WHERE datname = "
                    + "current_database()) AND query NOT LIKE '%pg_stat%' ORDER BY calls DESC");
                 ResultSet r = s.executeQuery()) {
                while (r.next()) {
                    out.add(new Statement(r.getLong(1), r.getDouble(2), r.getLong(3), r.getString(4)));
                }
            }
            return new Result(transactions, out);
        }
    }

    record Result(long transactions, List<Statement> statements) {
        long calls() {
            return statements.stream().mapToLong(Statement::calls).sum();
        }

        double execMillis() {
            return statements.stream().mapToDouble(Statement::execMillis).sum();
        }

        long walBytes() {
            return statements.stream().mapToLong(Statement::walBytes).sum();
        }
    }
}
