package dev.agentx.clarify.store.postgres;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.agentx.clarify.ledger.LedgerCodec;
import dev.agentx.clarify.ledger.LedgerStore.Mutation;
import dev.agentx.clarify.protocol.Ledger;
import dev.agentx.clarify.support.TestPostgres;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Every replica hears of a ledger change once the transaction that wrote it commits (a waiting
 * MCP call ends then), over a real PostgreSQL server: one signal per ledger written, none for a
 * transaction rolled back, and none through the database from a replica that runs alone, which
 * tells its own listeners. Two processes here are two databases opened on the same server.
 */
@Tag("postgres")
class LedgerSignalTest {
    private static final String OPEN = "{\"issueNumber\":%d,\"clarifications\":[{\"id\":\"CLR-%d-001\",\"from\":"
            + "\"engineer\",\"to\":\"architect\",\"topic\":\"t\",\"blocking\":true,\"status\":\"pending\",\"round\":1,"
            + "\"maxRounds\":5,\"created\":\"2026-11-26T08:00:00Z\",\"staleAfter\":\"2026-11-26T08:30:00Z\",\"thread\":"
            + "[{\"round\":1,\"from\":\"engineer\",\"type\":\"question\",\"body\":\"Q?\",\"timestamp\":"
            + "\"2026-11-26T08:00:00Z\"}]}]}";

    private TestPostgres.Database server;
    private PostgresDatabase writer;
    private PostgresDatabase listener;
    private final BlockingQueue<String> heard = new LinkedBlockingQueue<>();
    private final Semaphore listening = new Semaphore(0);

    @BeforeEach
    void open() throws Exception {
        server = TestPostgres.newDatabase();
        writer = server.open(4);
        listener = server.open(4);
        listener.onLedgerChange((repo, issue) -> heard.add(repo + "#" + issue), listening::release);
        assertTrue(listening.tryAcquire(10, TimeUnit.SECONDS), "the listener listens");
    }

    @AfterEach
    void close() {
        writer.close();
        listener.close();
    }

    private static Ledger open(int issue) {
        return new LedgerCodec().decode(OPEN.formatted(issue, issue).getBytes(StandardCharsets.UTF_8));
    }

    @Test
    void eachLedgerACommittedTransactionWroteIsSignalledAndNoneOfOneRolledBack() throws Exception {
        PgLedgerStore ledgers = writer.repository("acme/shop").ledgers();
        ledgers.update(7, "engineer", l -> Mutation.write(open(7), null));
        assertEquals("acme/shop#7", heard.poll(10, TimeUnit.SECONDS));

        // two ledgers in one transaction: both, once it committed
        ledgers.atomically(() -> {
            ledgers.update(8, "engineer", l -> Mutation.write(open(8), null));
            ledgers.update(9, "engineer", l -> Mutation.write(open(9), null));
            assertEquals(null, heard.poll(), "nothing before the commit");
            return null;
        });
        String first = heard.poll(10, TimeUnit.SECONDS);
        String second = heard.poll(10, TimeUnit.SECONDS);
        assertEquals(java.util.Set.of("acme/shop#8", "acme/shop#9"), java.util.Set.of(first, second));

        // rolled back: no signal; the next commit's is the next one heard (signals go out in order)
        assertThrows(IllegalStateException.class, () -> ledgers.atomically(() -> {
            ledgers.update(10, "engineer", l -> Mutation.write(open(10), null));
            throw new IllegalStateException("given up");
        }));
        ledgers.update(11, "engineer", l -> Mutation.write(open(11), null));
        assertEquals("acme/shop#11", heard.poll(10, TimeUnit.SECONDS), "nothing for the ledger rolled back");
    }

    /** A CLI command with a database URL closes the database right after its change: the signal still goes out. */
    @Test
    void aSignalGivenBeforeTheDatabaseClosesGoesOut() throws Exception {
        PostgresDatabase command = server.open(2);
        command.repository("acme/shop").ledgers().update(40, "engineer", l -> Mutation.write(open(40), null));
        command.close();
        assertEquals("acme/shop#40", heard.poll(10, TimeUnit.SECONDS));
    }

    /**
     * PostgreSQL commits notifying transactions one at a time, each holding a lock for the whole
     * database through its WAL flush: the transaction that writes a ledger must not be the one
     * that notifies, or every replica's delivery transactions would wait for each other's flushes.
     */
    @Test
    void theSignalComesFromATransactionOfItsOwnAfterTheWriteCommitted() throws Exception {
        try (java.sql.Connection raw = java.sql.DriverManager.getConnection(server.jdbcUrl())) {
            try (java.sql.Statement s = raw.createStatement()) {
                s.execute("LISTEN " + LedgerSignals.CHANGED);
            }
            PgLedgerStore ledgers = writer.repository("acme/shop").ledgers();
            int[] writersBackend = {0};
            ledgers.atomically(() -> {
                ledgers.update(30, "engineer", l -> Mutation.write(open(30), null));
                writersBackend[0] = writer.autoCommit(c -> {
                    try (java.sql.Statement s = c.createStatement();
                            java.sql.ResultSet r = s.executeQuery("SELECT pg_backend_pid()")) {
                        r.next();
                        return r.getInt(1);
                    }
                });
                return null;
            });
            assertEquals("acme/shop#30", heard.poll(10, TimeUnit.SECONDS));
            org.postgresql.PGNotification[] got = null;
            long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while ((got == null || got.length == 0) && System.nanoTime() < until) {
                got = raw.unwrap(org.postgresql.PGConnection.class).getNotifications(500);
            }
            assertTrue(got != null && got.length == 1, "one notification");
            assertEquals("30 acme/shop", got[0].getParameter());
            assertTrue(writersBackend[0] != 0 && got[0].getPID() != writersBackend[0],
                    "notified by backend " + got[0].getPID() + ", not by the writer's " + writersBackend[0]);
        }
    }

    @Test
    void aReplicaRunningAloneTellsItsOwnListenersAndNotifiesOnceAnotherRuns() throws Exception {
        BlockingQueue<String> own = new LinkedBlockingQueue<>();
        Semaphore ownListening = new Semaphore(0);
        writer.onLedgerChange((repo, issue) -> own.add(repo + "#" + issue), ownListening::release);
        assertTrue(ownListening.tryAcquire(10, TimeUnit.SECONDS));
        PgLedgerStore ledgers = writer.repository("acme/shop").ledgers();

        assertTrue(writer.beat("replica-a"), "a replica, and no other beats: alone");
        ledgers.update(20, "engineer", l -> Mutation.write(open(20), null));
        assertEquals("acme/shop#20", own.poll(10, TimeUnit.SECONDS), "its own listener is told once committed");
        // no NOTIFY: the other process's next signal is that of a write by a process that is no replica
        listener.repository("acme/shop").ledgers().update(21, "engineer", l -> Mutation.write(open(21), null));
        assertEquals("acme/shop#21", heard.poll(10, TimeUnit.SECONDS), "nothing sent for issue 20");
        assertEquals("acme/shop#21", own.poll(10, TimeUnit.SECONDS), "the replica hears the other's change");

        // another replica runs: from the next heartbeat on, changes go through the database again
        assertTrue(listener.beat("replica-b"));
        assertTrue(writer.beat("replica-a"));
        ledgers.update(22, "engineer", l -> Mutation.write(open(22), null));
        assertEquals("acme/shop#22", heard.poll(10, TimeUnit.SECONDS));
        assertEquals("acme/shop#22", own.poll(10, TimeUnit.SECONDS));
    }
}
