package dev.agentx.clarify.store;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.agentx.clarify.ledger.LedgerStore.Mutation;
import dev.agentx.clarify.protocol.ClarifyException;
import dev.agentx.clarify.protocol.ErrorCode;
import dev.agentx.clarify.protocol.Ledger;
import dev.agentx.clarify.store.postgres.DatabaseUrl;
import dev.agentx.clarify.store.postgres.PostgresDatabase;
import dev.agentx.clarify.support.TestPostgres;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** The PostgreSQL store's own rules: migrations, URLs, what a writer refuses, lock waits. */
@Tag("postgres")
class PostgresDatabaseTest {
    /**
     * As docs/storage.md sets a server up: a role that is no superuser and owns its database. It
     * migrates the schema, owns every table it made, and vacuums the delivery queue (which needs
     * the table's owner) without PostgreSQL's warning that it may not.
     */
    @Test
    void aRoleThatOwnsItsDatabaseAndNoMoreRunsTheStore() throws Exception {
        TestPostgres.Database d = TestPostgres.newDatabase();
        try (PostgresDatabase db = d.open(2)) {
            List<String> warnings = new ArrayList<>();
            db.autoCommit(c -> {
                try (java.sql.Statement s = c.createStatement()) {
                    try (ResultSet r = s.executeQuery("SELECT current_user, rolsuper FROM pg_roles "
                            + "WHERE rolname = current_user")) {
                        r.next();
                        assertEquals(TestPostgres.OWNER, r.getString(1));
                        assertTrue(!r.getBoolean(2), "no superuser");
                    }
                    try (ResultSet r = s.executeQuery("SELECT tablename FROM pg_tables WHERE schemaname = 'public' "
                            + "AND tableowner <> current_user")) {
                        assertTrue(!r.next(), "a table owned by another role");
                    }
                    s.execute("VACUUM (SKIP_LOCKED) delivery_queue");
                    for (java.sql.SQLWarning w = s.getWarnings(); w != null; w = w.getNextWarning()) {
                        warnings.add(w.getMessage());
                    }
                }
                return null;
            });
            assertEquals(List.of(), warnings);
        }
    }

    @Test
    void serversStartingTogetherOnAnEmptyDatabaseMigrateItOnce() throws Exception {
        TestPostgres.Database d = TestPostgres.newDatabase();
        ExecutorService pool = Executors.newFixedThreadPool(3);
        try {
            List<Future<PostgresDatabase>> opened = new ArrayList<>();
            for (int i = 0; i < 3; i++) {
                Callable<PostgresDatabase> open = () -> PostgresDatabase.open(DatabaseUrl.parse(d.url(), Map.of()), 2);
                opened.add(pool.submit(open));
            }
            for (Future<PostgresDatabase> f : opened) {
                f.get().close();
            }
        } finally {
            pool.shutdownNow();
        }
        try (Connection c = d.dataSource().getConnection();
             PreparedStatement s = c.prepareStatement("SELECT count(*) FROM flyway_schema_history WHERE success");
             ResultSet r = s.executeQuery()) {
            r.next();
            assertTrue(r.getInt(1) >= 1);
        }
        try (Connection c = d.dataSource().getConnection();
             PreparedStatement s = c.prepareStatement("SELECT version, count(*) FROM flyway_schema_history "
                     + "GROUP BY version HAVING count(*) > 1");
             ResultSet r = s.executeQuery()) {
            assertTrue(!r.next(), "each migration ran once");
        }
    }

    @Test
    void analyzeGathersNoStatisticsForTheDocumentsNoQueryLooksInto() throws Exception {
        TestPostgres.Database d = TestPostgres.newDatabase();
        PostgresDatabase.open(DatabaseUrl.parse(d.url(), Map.of()), 2).close(); // brings the schema up to date
        try (Connection c = d.dataSource().getConnection(); java.sql.Statement s = c.createStatement()) {
            s.execute("INSERT INTO events (repo, type, issue, clarification_id, at, event) SELECT '1', 'question', i, "
                    + "'CLR-' || i || '-001', now(), jsonb_build_object('issue', i) FROM generate_series(1, 200) i");
            s.execute("INSERT INTO ledgers (repo, issue, version, active, ledger, updated_at) SELECT '1', i, 1, true, "
                    + "jsonb_build_object('issue', i), now() FROM generate_series(1, 200) i");
            s.execute("ANALYZE events, ledgers");
            try (ResultSet r = s.executeQuery("SELECT tablename || '.' || attname FROM pg_stats WHERE schemaname = "
                    + "'public' AND tablename IN ('events', 'ledgers') ORDER BY 1")) {
                List<String> columns = new ArrayList<>();
                while (r.next()) {
                    columns.add(r.getString(1));
                }
                assertTrue(columns.contains("events.repo") && columns.contains("ledgers.issue"),
                        "the other columns keep their statistics: " + columns);
                assertTrue(!columns.contains("events.event") && !columns.contains("ledgers.ledger"),
                        "no statistics for the documents: " + columns);
            }
        }
    }

    @Test
    void theServersConnectionsPlanARepeatedStatementOnceAndWaitForLocksAtMostFifteenSeconds() throws Exception {
        TestPostgres.Database d = TestPostgres.newDatabase();
        try (PostgresDatabase db = PostgresDatabase.open(DatabaseUrl.parse(d.url(), Map.of()), 2)) {
            long[] plans = db.autoCommit(c -> {
                if (TestPostgres.versionNumber(c) < 140000) {
                    return null; // pg_prepared_statements counts the plans from PostgreSQL 14 on
                }
                for (int i = 0; i < 12; i++) { // the driver prepares it on the server at its fifth run
                    try (PreparedStatement s = c.prepareStatement("SELECT issue FROM ledgers WHERE repo = ? "
                            + "AND issue = ?")) {
                        s.setString(1, "acme/shop");
                        s.setInt(2, i + 1);
                        s.executeQuery().close();
                    }
                }
                try (PreparedStatement s = c.prepareStatement("SELECT generic_plans, custom_plans "
                        + "FROM pg_prepared_statements WHERE statement LIKE 'SELECT issue FROM ledgers%'");
                     ResultSet r = s.executeQuery()) {
                    assertTrue(r.next(), "prepared on the server");
                    return new long[] {r.getLong(1), r.getLong(2)};
                }
            });
            if (plans != null) {
                assertEquals(0, plans[1], "no plan made for the values of one run");
                assertTrue(plans[0] >= 1, "the one generic plan, reused: " + plans[0]);
            }
            assertEquals("15s", db.autoCommit(c -> {
                try (PreparedStatement s = c.prepareStatement("SHOW lock_timeout"); ResultSet r = s.executeQuery()) {
                    r.next();
                    return r.getString(1);
                }
            }));
        }
    }

    @Test
    void aLedgerWithFieldsOfANewerVersionIsReadButNotWritten() throws Exception {
        TestPostgres.Database d = TestPostgres.newDatabase();
        try (PostgresDatabase db = new PostgresDatabase(d.dataSource(), d.name())) {
            try (Connection c = d.dataSource().getConnection(); PreparedStatement s = c.prepareStatement(
                    "INSERT INTO ledgers VALUES ('acme/shop', 3, 1, false, ?::jsonb, now())")) {
                s.setString(1, "{\"issueNumber\":3,\"clarifications\":[],\"futureField\":true}");
                s.executeUpdate();
            }
            var ledgers = db.repository("acme/shop").ledgers();
            assertEquals(3, ledgers.read(3).orElseThrow().issueNumber());
            ClarifyException e = assertThrows(ClarifyException.class,
                    () -> ledgers.update(3, "engineer", l -> Mutation.write(Ledger.empty(3), null)));
            assertEquals(ErrorCode.LEDGER_NEWER, e.code());
            assertTrue(e.getMessage().contains("futureField"), e.getMessage());
        }
    }

    @Test
    void aDamagedLedgerRowIsReportedWithTheWayToRebuildIt() throws Exception {
        TestPostgres.Database d = TestPostgres.newDatabase();
        try (PostgresDatabase db = new PostgresDatabase(d.dataSource(), d.name())) {
            try (Connection c = d.dataSource().getConnection(); PreparedStatement s = c.prepareStatement(
                    "INSERT INTO ledgers VALUES ('acme/shop', 4, 1, true, '{\"issueNumber\":5}'::jsonb, now())")) {
                s.executeUpdate();
            }
            ClarifyException e = assertThrows(ClarifyException.class,
                    () -> db.repository("acme/shop").ledgers().read(4));
            assertEquals(ErrorCode.LEDGER_DAMAGED, e.code());
            assertTrue(e.getMessage().contains("agentx sync --repo acme/shop --issue 4 --write"), e.getMessage());
            var scan = db.repository("acme/shop").activeLedgers().scan();
            assertEquals(List.of(4), List.copyOf(scan.damaged().keySet()), "the monitor's scan names it and goes on");
            // the way the message gives: delete the row, and sync (which rebuilds a missing ledger) can write it
            java.util.regex.Matcher delete = java.util.regex.Pattern.compile("\\((DELETE FROM [^)]*)\\)")
                    .matcher(e.getMessage());
            assertTrue(delete.find(), e.getMessage());
            try (Connection c = d.dataSource().getConnection(); PreparedStatement s = c.prepareStatement(delete.group(1))) {
                assertEquals(1, s.executeUpdate());
            }
            assertTrue(db.repository("acme/shop").ledgers().read(4).isEmpty());
        }
    }

    @Test
    void urlsInBothFormsAndThePasswordFile(@org.junit.jupiter.api.io.TempDir java.nio.file.Path dir) throws Exception {
        DatabaseUrl u = DatabaseUrl.parse("postgresql://agent%40x:p%3Ass@db.internal:6543/agentx?sslmode=require",
                Map.of());
        assertEquals("jdbc:postgresql://db.internal:6543/agentx?sslmode=require", u.jdbcUrl());
        assertEquals("agent@x", u.user());
        assertEquals("p:ss", u.password());
        assertTrue(!u.toString().contains("p:ss"), u.toString());
        DatabaseUrl jdbc = DatabaseUrl.parse("jdbc:postgresql://h/db?user=u&password=secret", Map.of());
        assertEquals("jdbc:postgresql://h/db?user=u&password=secret", jdbc.jdbcUrl());
        assertTrue(!jdbc.toString().contains("secret"), jdbc.toString());
        assertTrue(jdbc.hasPassword(), "the URL's password parameter is a password (the start-up summary says so)");
        assertTrue(u.hasPassword());
        assertTrue(!DatabaseUrl.parse("jdbc:postgresql://h/db?user=u", Map.of()).hasPassword());
        assertTrue(!DatabaseUrl.parse("jdbc:postgresql://h/db?user=u&password=", Map.of()).hasPassword());
        java.nio.file.Path file = java.nio.file.Files.writeString(dir.resolve("pw"), "from-file\n");
        DatabaseUrl withFile = DatabaseUrl.parse("postgres://agentx@h/db",
                Map.of(DatabaseUrl.PASSWORD_FILE_ENV, file.toString()));
        assertEquals("from-file", withFile.password());
        assertEquals("given", DatabaseUrl.parse("postgres://agentx:given@h/db",
                Map.of(DatabaseUrl.PASSWORD_FILE_ENV, file.toString())).password(), "the URL's password wins");
        IllegalArgumentException bad = assertThrows(IllegalArgumentException.class,
                () -> DatabaseUrl.parse("mysql://u:secret@h/db", Map.of()));
        assertTrue(bad.getMessage().contains("not a PostgreSQL URL") && !bad.getMessage().contains("secret"),
                bad.getMessage());
        assertThrows(IllegalArgumentException.class, () -> DatabaseUrl.parse("postgresql://u@h/db",
                Map.of(DatabaseUrl.PASSWORD_FILE_ENV, dir.resolve("missing").toString())));
        for (String port : new String[] {"notaport", "", "0", "70000"}) {
            IllegalArgumentException p = assertThrows(IllegalArgumentException.class,
                    () -> DatabaseUrl.parse("postgresql://u:secret@h:" + port + "/db", Map.of()));
            assertTrue(p.getMessage().contains("has the port '" + port + "'") && !p.getMessage().contains("secret"),
                    p.getMessage());
        }
        assertEquals("jdbc:postgresql://[::1]:5432,h2/db", DatabaseUrl.parse("postgresql://u@[::1]:5432,h2/db",
                Map.of()).jdbcUrl(), "IPv6 and several hosts");
    }

    /** A database that cannot be reached at start: a message saying why in a few words, and where the URL is set. */
    @Test
    void aHostThatDoesNotExistIsNamedAsSuch() {
        ClarifyException e = assertThrows(ClarifyException.class, () -> PostgresDatabase.open(
                DatabaseUrl.parse("postgresql://u:secret@no-such-host.invalid:5432/db", Map.of()), 2,
                java.time.Duration.ZERO, PostgresDatabase.Schema.EXPECT_CURRENT));
        assertTrue(e.getMessage().contains(": unknown host no-such-host.invalid. Check the database URL "
                + "(AGENTX_DATABASE_URL for the server, --database-url for a command)"), e.getMessage());
        assertTrue(!e.getMessage().contains("secret") && !e.getMessage().contains(".."), e.getMessage());
        assertEquals(dev.agentx.clarify.protocol.ErrorCode.UNAVAILABLE, e.code(), "the environment's, not a bug");
    }
    /**
     * A statement that fails inside a transaction aborts it in PostgreSQL: work of the same unit
     * that goes on (a monitor pass moving to its next record) fails at once, sending nothing the
     * database would only refuse, and the unit rolls back even if the failure was caught.
     */
    @Test
    void workThatGoesOnAfterAFailureInItsTransactionFailsAtOnceAndRollsBack() throws Exception {
        try (PostgresDatabase db = TestPostgres.newDatabase().open(2)) {
            db.autoCommit(c -> c.createStatement().executeUpdate("CREATE TABLE t (n int)"));
            List<String> seen = new ArrayList<>();
            ClarifyException rolledBack = assertThrows(ClarifyException.class, () -> db.inTransaction(c -> {
                db.autoCommit(x -> x.createStatement().executeUpdate("INSERT INTO t VALUES (1)"));
                try {
                    db.autoCommit(x -> x.createStatement().executeQuery("SELECT no_such_column FROM t"));
                } catch (ClarifyException e) {
                    seen.add(e.getMessage());
                }
                try {
                    db.autoCommit(x -> {
                        seen.add("sent");
                        return x.createStatement().executeQuery("SELECT 1");
                    });
                } catch (ClarifyException e) {
                    seen.add(e.getMessage());
                }
                return null;
            }));
            assertEquals(2, seen.size(), "nothing sent after the failure: " + seen);
            assertTrue(seen.get(0).contains("no_such_column"), seen.get(0));
            assertTrue(seen.get(1).startsWith("not run: the transaction it is part of failed earlier: ")
                    && seen.get(1).contains("no_such_column"), seen.get(1));
            assertTrue(rolledBack.getMessage().startsWith("rolled back: "), rolledBack.getMessage());
            assertEquals(0L, (long) db.autoCommit(c -> {
                try (ResultSet r = c.createStatement().executeQuery("SELECT count(*) FROM t")) {
                    r.next();
                    return r.getLong(1);
                }
            }), "the insert before the failure is rolled back");
            assertEquals(1, (int) db.autoCommit(c -> {
                try (ResultSet r = c.createStatement().executeQuery("SELECT 1")) {
                    r.next();
                    return r.getInt(1);
                }
            }), "the next unit runs");
        }
    }
}
