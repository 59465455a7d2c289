package dev.agentx.clarify.store.postgres;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.agentx.clarify.protocol.ClarifyException;
import dev.agentx.clarify.support.FreePorts;
import dev.agentx.clarify.support.TestPostgres;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The acknowledgements' connection of their own, on a real PostgreSQL: work whose connection
 * the database ended (a restart) runs once more on a new connection; work that failed for any
 * other reason, that waited out the answer's timeout, or whose connection could not be opened
 * does not; an idle connection the database ended is replaced before the work runs.
 */
@Tag("postgres")
class DedicatedConnectionTest {
    private TestPostgres.Database database;
    private PostgresDatabase db;
    private final AtomicInteger opened = new AtomicInteger();

    @BeforeEach
    void open() {
        database = TestPostgres.newDatabase();
        db = database.open(2);
    }

    @AfterEach
    void close() {
        db.close();
    }

    /** Opens connections to the test's database, counting them, with the given wait for answers (0: none). */
    private DedicatedConnection.Opener opener(int answerTimeoutSeconds) {
        return () -> {
            opened.incrementAndGet();
            Properties p = new Properties();
            p.setProperty("socketTimeout", String.valueOf(answerTimeoutSeconds));
            return DriverManager.getConnection(database.jdbcUrl(), p);
        };
    }

    private static int backend(Connection c) throws SQLException {
        try (Statement s = c.createStatement(); var r = s.executeQuery("SELECT pg_backend_pid()")) {
            r.next();
            return r.getInt(1);
        }
    }

    /** Ends the backend {@code pid} as a restart of the database would (SQLSTATE 57P01 to its client). */
    private void terminate(int pid) {
        assertEquals(true, aboutBackend("SELECT pg_terminate_backend(?)", pid));
    }

    /** The boolean {@code sql} answers about the backend {@code pid}, on the pool's connection. */
    private boolean aboutBackend(String sql, int pid) {
        return db.<Boolean>autoCommit(c -> {
            try (var s = c.prepareStatement(sql)) {
                s.setInt(1, pid);
                try (var r = s.executeQuery()) {
                    r.next();
                    return r.getBoolean(1);
                }
            }
        });
    }

    @Test
    void workWhoseConnectionTheDatabaseEndedRunsOnceMoreOnANewOne() {
        try (DedicatedConnection c = new DedicatedConnection(db, opener(0), Long.MAX_VALUE)) {
            int first = c.run(DedicatedConnectionTest::backend);
            assertEquals(first, c.run(DedicatedConnectionTest::backend), "one connection, kept");
            terminate(first);

            AtomicInteger tries = new AtomicInteger();
            int second = c.run(x -> {
                tries.incrementAndGet();
                return backend(x);
            });
            assertEquals(2, tries.get(), "the first try found its connection ended, the second ran");
            assertNotEquals(first, second);
            assertEquals(2, opened.get());
            // the session settings of the pool's connections hold on the new one too
            assertEquals("15s", c.run(x -> show(x, "lock_timeout")));
            assertEquals("force_generic_plan", c.run(x -> show(x, "plan_cache_mode")));
        }
    }

    private boolean backendAlive(int pid) {
        return aboutBackend("SELECT EXISTS (SELECT 1 FROM pg_stat_activity WHERE pid = ?)", pid);
    }

    private static String show(Connection c, String setting) throws SQLException {
        try (Statement s = c.createStatement(); var r = s.executeQuery("SHOW " + setting)) {
            r.next();
            return r.getString(1);
        }
    }

    @Test
    void workThatFailedForAnotherReasonIsNotRunAgainAndKeepsItsConnection() {
        try (DedicatedConnection c = new DedicatedConnection(db, opener(0), Long.MAX_VALUE)) {
            int first = c.run(DedicatedConnectionTest::backend);
            AtomicInteger tries = new AtomicInteger();
            ClarifyException e = assertThrows(ClarifyException.class, () -> c.run(x -> {
                tries.incrementAndGet();
                try (Statement s = x.createStatement()) {
                    s.execute("SELECT 1/0");
                }
                return null;
            }));
            assertTrue(e.getMessage().contains("division by zero"), e.getMessage());
            assertEquals(1, tries.get());
            assertEquals(first, c.run(DedicatedConnectionTest::backend), "the connection is kept");
            assertEquals(1, opened.get());
        }
    }

    /**
     * Two replicas given the same deliveries at once insert their ids in different orders; the
     * database breaks the deadlock by rolling one statement back. Work rolled back so runs again,
     * and finds the other's rows then.
     */
    @Test
    void workTheDatabaseRolledBackToBreakADeadlockRunsOnceMore() throws Exception {
        try (DedicatedConnection c = new DedicatedConnection(db, opener(0), Long.MAX_VALUE);
                Connection other = database.dataSource().getConnection()) {
            c.run(x -> {
                try (Statement s = x.createStatement()) {
                    s.execute("CREATE TABLE ids (id text PRIMARY KEY)");
                }
                return null;
            });
            other.setAutoCommit(false);
            try (Statement s = other.createStatement()) {
                s.execute("SET LOCAL deadlock_timeout = '60s'"); // so the dedicated connection's side is the one broken
                s.execute("INSERT INTO ids VALUES ('b')");
            }
            AtomicInteger tries = new AtomicInteger();
            java.util.concurrent.CompletableFuture<Integer> inserted = java.util.concurrent.CompletableFuture.supplyAsync(
                    () -> c.run(x -> {
                        tries.incrementAndGet();
                        try (Statement s = x.createStatement()) {
                            return s.executeUpdate("INSERT INTO ids VALUES ('a'), ('b') ON CONFLICT DO NOTHING");
                        }
                    }));
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (!db.<Boolean>autoCommit(x -> {
                try (var s = x.prepareStatement("SELECT EXISTS (SELECT 1 FROM pg_stat_activity WHERE wait_event_type "
                        + "= 'Lock' AND query LIKE 'INSERT INTO ids VALUES (''a'')%')"); var r = s.executeQuery()) {
                    r.next();
                    return r.getBoolean(1);
                }
            })) {
                assertTrue(System.nanoTime() < deadline, "the insert of a and b waits for b");
                Thread.onSpinWait();
            }
            try (Statement s = other.createStatement()) {
                s.execute("INSERT INTO ids VALUES ('a') ON CONFLICT DO NOTHING"); // the cycle: broken on the other side
            }
            other.commit();
            assertEquals(0, inserted.get(30, TimeUnit.SECONDS), "both rows were the other's by then");
            // at least once more: on a busy machine the other side may not have run on when the
            // work runs again, and the two meet in the same cycle a second time
            assertTrue(tries.get() >= 2, "rolled back, run once more: " + tries.get());
        }
    }

    @Test
    void workThatWaitedOutTheAnswersTimeoutIsNotRunAgainAndTheNextCallOpensANewConnection() {
        try (DedicatedConnection c = new DedicatedConnection(db, opener(1), Long.MAX_VALUE)) {
            int first = c.run(DedicatedConnectionTest::backend);
            AtomicInteger tries = new AtomicInteger();
            long start = System.nanoTime();
            assertThrows(ClarifyException.class, () -> c.run(x -> {
                tries.incrementAndGet();
                try (Statement s = x.createStatement()) {
                    s.execute("SELECT pg_sleep(5)");
                }
                return null;
            }));
            assertEquals(1, tries.get(), "a second wait would take the caller past what it may wait");
            assertTrue(System.nanoTime() - start < 4_000_000_000L, "given up after the answer's timeout");
            assertNotEquals(first, c.run(DedicatedConnectionTest::backend), "a new connection");
            assertEquals(2, opened.get());
        }
    }

    @Test
    void anIdleConnectionTheDatabaseEndedIsReplacedBeforeTheWorkRuns() {
        try (DedicatedConnection c = new DedicatedConnection(db, opener(0), 0)) {
            int first = c.run(DedicatedConnectionTest::backend);
            terminate(first);
            AtomicInteger tries = new AtomicInteger();
            int second = c.run(x -> {
                tries.incrementAndGet();
                return backend(x);
            });
            assertEquals(1, tries.get(), "the check found it ended: the work ran once, on a new connection");
            assertNotEquals(first, second);
        }
    }

    @Test
    void aConnectionThatCannotBeOpenedFailsTheWorkWithoutRunningIt() throws Exception {
        int nothingThere = FreePorts.next();
        AtomicInteger tries = new AtomicInteger();
        DedicatedConnection.Opener refused = () -> {
            opened.incrementAndGet();
            return DriverManager.getConnection("jdbc:postgresql://localhost:" + nothingThere + "/x?user=postgres");
        };
        try (DedicatedConnection c = new DedicatedConnection(db, refused, Long.MAX_VALUE)) {
            ClarifyException e = assertThrows(ClarifyException.class, () -> c.run(x -> tries.incrementAndGet()));
            assertTrue(e.getMessage().contains("refused"), e.getMessage());
            assertEquals(0, tries.get());
            assertEquals(1, opened.get(), "not tried again: the database is gone, not restarted");
        }
    }

    @Test
    void theDatabasesOwnIsClosedWithIt() throws InterruptedException {
        DedicatedConnection c = db.dedicated();
        int pid = c.run(DedicatedConnectionTest::backend);
        db.close();
        db = database.open(2);
        // the backend ends once it has read the client's goodbye: up to a few seconds on a busy machine
        long deadline = System.nanoTime() + 10_000_000_000L;
        while (backendAlive(pid) && System.nanoTime() < deadline) {
            Thread.sleep(20);
        }
        assertEquals(false, backendAlive(pid), "its backend is gone");
        assertThrows(ClarifyException.class, () -> c.run(DedicatedConnectionTest::backend), "closed for good");
    }
}
