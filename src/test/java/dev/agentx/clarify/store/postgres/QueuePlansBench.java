package dev.agentx.clarify.store.postgres;

import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Instant;
import java.util.Map;
import java.util.Properties;

/**
 * Draining a backlog of the delivery queue over a connection whose plans were made while the
 * queue was empty. A pooled connection keeps one plan per statement, remade when the table's
 * statistics change: at each vacuum, which each replica runs every tick (5 s). A queue that was
 * empty at a tick (any quiet moment) and then gets a burst is read with the plans made for an
 * empty table until the next tick. Measured: the take and the done mark of each delivery, as the
 * server sends them, for each line index (every delivery, or only those in a line) and with
 * sequential scans on and off; autovacuum is off for the table, so the plans hold for the whole
 * drain as they do between two ticks. Prints Markdown. Not a test: {@code bench/run} runs it.
 * Usage: {@code QueuePlansBench DIR BACKLOG DRAINED}.
 */
public final class QueuePlansBench {
    private QueuePlansBench() {
    }

    private static final String LINE_EVERY_DELIVERY = "CREATE INDEX delivery_queue_line ON delivery_queue (order_key, seq)";
    private static final String LINE_IN_LINES = LINE_EVERY_DELIVERY + " WHERE order_key <> ''";

    public static void main(String[] args) throws Exception {
        Path dir = Path.of(args[0]);
        int backlog = Integer.parseInt(args[1]);
        int drained = Integer.parseInt(args[2]);
        Files.createDirectories(dir);
        try (EmbeddedPostgres pg = EmbeddedPostgres.builder().setDataDirectory(dir.resolve("pgdata"))
                .setCleanDataDirectory(true).setServerConfig("synchronous_commit", "on").setServerConfig("fsync", "on")
                .start()) {
            String url = "postgresql://postgres@localhost:" + pg.getPort() + "/postgres";
            PostgresDatabase.open(DatabaseUrl.parse(url, Map.of()), 2).close(); // the schema, migrated
            String jdbc = "jdbc:postgresql://localhost:" + pg.getPort() + "/postgres";
            System.out.println("A connection with generic plans (`plan_cache_mode = force_generic_plan`, as the server's "
                    + "pool sets) runs the take and the done mark once while the queue is empty and freshly vacuumed "
                    + "(the plans they get are shown), then " + backlog + " deliveries (bodies of 3 kB, 4 per issue) "
                    + "are queued and the first " + drained + " taken and marked done, in order, one transaction each "
                    + "(commits synchronous), with no vacuum in between (autovacuum off for the table; the server "
                    + "vacuums the queue every 5 s). Wall time per delivery (ms).");
            System.out.println();
            System.out.println("| line index | sequential scans | ms per delivery | take's plan | done mark's plan |");
            System.out.println("| --- | --- | --- | --- | --- |");
            for (String index : new String[] {LINE_EVERY_DELIVERY, LINE_IN_LINES}) {
                for (boolean seqscan : new boolean[] {true, false}) {
                    run(jdbc, index, seqscan, backlog, drained);
                }
            }
        }
    }

    private static void run(String jdbc, String index, boolean seqscan, int backlog, int drained) throws SQLException {
        Properties p = new Properties();
        p.setProperty("user", "postgres");
        p.setProperty("prepareThreshold", "1"); // a named server-side statement from the first run
        try (Connection admin = DriverManager.getConnection(jdbc, p); Statement s = admin.createStatement()) {
            s.execute("TRUNCATE delivery_queue, deliveries");
            s.execute("DROP INDEX delivery_queue_line");
            s.execute(index);
            s.execute("ALTER TABLE delivery_queue SET (autovacuum_enabled = false)");
            s.execute("VACUUM ANALYZE delivery_queue");
            try (Connection c = DriverManager.getConnection(jdbc, p)) {
                try (Statement set = c.createStatement()) {
                    set.execute("SET plan_cache_mode = force_generic_plan; SET enable_seqscan = " + (seqscan ? "on" : "off"));
                }
                take(c, 0); // planned now, on the empty queue
                done(c, 0, null); // no such delivery: not refused, so that it is only planned
                String takePlan = access(c, "EXPLAIN EXECUTE " + statement(c, DeliveryTurns.TAKE_HELD, TAKE_ARGS));
                String donePlan = access(c, "EXPLAIN EXECUTE " + statement(c, DoneMarks.DONE_MARK, DONE_ARGS));
                s.execute("INSERT INTO deliveries (id, event, received_at, replica) SELECT 'd-' || g, 'issue_comment', "
                        + "now(), 'r1' FROM generate_series(1, " + backlog + ") g");
                s.execute("INSERT INTO delivery_queue (seq, order_key, body, replica) SELECT seq, 'acme/shop#' || "
                        + "(seq % " + Math.max(1, backlog / 4) + "), convert_to(repeat('x', 3000), 'UTF8'), 'r1' "
                        + "FROM deliveries");
                long first;
                try (ResultSet r = s.executeQuery("SELECT min(seq) FROM delivery_queue")) {
                    r.next();
                    first = r.getLong(1);
                }
                long start = System.nanoTime();
                for (long seq = first; seq < first + drained; seq++) {
                    if (!take(c, seq)) {
                        throw new IllegalStateException("delivery " + seq + " was not first in its line");
                    }
                    done(c, seq, "delivery " + seq + " is not r1's");
                }
                double ms = (System.nanoTime() - start) / 1e6 / drained;
                System.out.printf("| %s | %s | %.3f | %s | %s |%n", index.contains("WHERE") ? "deliveries in a line (the server's)"
                        : "every delivery",
                        seqscan ? "on" : "off", ms, takePlan, donePlan);
            }
        }
    }

    private static boolean take(Connection c, long seq) throws SQLException {
        try (PreparedStatement s = c.prepareStatement(DeliveryTurns.TAKE_HELD)) {
            s.setBoolean(1, true);
            s.setLong(2, seq);
            s.setString(3, "r1");
            try (ResultSet r = s.executeQuery()) {
                return r.next();
            }
        }
    }

    /** The done mark as the server sends it; {@code refusal}: what it fails with if the row is not r1's (null: nothing). */
    private static void done(Connection c, long seq, String refusal) throws SQLException {
        try (PreparedStatement s = c.prepareStatement(DoneMarks.DONE_MARK)) {
            DoneMarks.markBinder(seq, "r1", "processed", null, Instant.now(), refusal)
                    .bind(new Pipeline.Params(s, c));
            s.execute(); // the mark returns a row: whether a later delivery of the line waits for it
        }
    }

    /** Arguments of the take and of the done mark, to EXPLAIN them with. */
    private static final String[] TAKE_ARGS = {"true", "1", "'r1'"};
    private static final String[] DONE_ARGS = {"1", "'r1'", "true", "false", "'processed'", "null", "now()", "true",
        "'not r1''s'"};

    /** The server-side statement the driver prepared for {@code sql}, called with {@code args}, to EXPLAIN it. */
    private static String statement(Connection c, String sql, String[] args) throws SQLException {
        try (PreparedStatement s = c.prepareStatement("SELECT name FROM pg_prepared_statements WHERE statement = ?")) {
            String numbered = numbered(sql);
            s.setString(1, numbered);
            try (ResultSet r = s.executeQuery()) {
                if (!r.next()) {
                    throw new IllegalStateException("not prepared: " + numbered);
                }
                return "\"" + r.getString(1) + "\"(" + String.join(", ", args) + ")";
            }
        }
    }

    /** {@code sql} with its {@code ?} numbered as the driver sends it ({@code $1}, {@code $2}, ...). */
    static String numbered(String sql) {
        StringBuilder out = new StringBuilder();
        int n = 0;
        for (char ch : sql.toCharArray()) {
            if (ch == '?') {
                out.append('$').append(++n);
            } else {
                out.append(ch);
            }
        }
        return out.toString();
    }

    /** How the plan reads delivery_queue: its scans of it, by index or whole. */
    private static String access(Connection c, String explain) throws SQLException {
        StringBuilder out = new StringBuilder();
        try (Statement s = c.createStatement(); ResultSet r = s.executeQuery(explain)) {
            while (r.next()) {
                String line = r.getString(1).strip().replaceFirst("^->\\s*", "");
                if (line.contains("Scan") && line.contains(" on delivery_queue")) {
                    String scan = line.replaceAll("\\s*\\(cost=.*", "").replace(" on delivery_queue", "");
                    out.append(out.length() == 0 ? "" : ", ").append(scan);
                }
            }
        }
        return out.toString();
    }
}
