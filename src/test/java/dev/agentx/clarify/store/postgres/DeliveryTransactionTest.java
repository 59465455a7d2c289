package dev.agentx.clarify.store.postgres;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.agentx.clarify.app.LocalMode;
import dev.agentx.clarify.channel.HumanChannel;
import dev.agentx.clarify.config.ConfigLoader;
import dev.agentx.clarify.lock.LockManager;
import dev.agentx.clarify.protocol.ClarifyException;
import dev.agentx.clarify.protocol.ErrorCode;
import dev.agentx.clarify.routing.ClarifyCommand;
import dev.agentx.clarify.store.DeliveryQueue;
import dev.agentx.clarify.store.Notes;
import dev.agentx.clarify.store.Replicas;
import dev.agentx.clarify.support.TestPostgres;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A delivery's transaction on PostgreSQL: its writes wait for its next round trip and go with it
 * (the issue's ledger, its events, the issue's note, the effects' claims, the done mark last), so
 * the whole delivery costs a few round trips; what it deferred is seen by whatever joins it later
 * and by nobody else before the commit; a failure of the last send commits nothing.
 */
@Tag("postgres")
class DeliveryTransactionTest {
    private static final String REPO = "acme/shop";
    private static final String REPLICA = "r1";
    @TempDir
    Path root;
    private TestPostgres.Database d;
    private PostgresDatabase db;
    /** Statements prepared (each sent in a round trip of its own) and commits, on the store's connections. */
    private final AtomicInteger sent = new AtomicInteger();
    private final AtomicInteger commits = new AtomicInteger();
    /** Commits that sent a COMMIT of their own (a round trip): the transaction was still open in the driver. */
    private final AtomicInteger commitRoundTrips = new AtomicInteger();

    @AfterEach
    void close() {
        if (db != null) {
            db.close();
        }
    }

    /** The store over a fresh database whose connections count what is sent on them. */
    private PostgresDatabase open() {
        d = TestPostgres.newDatabase();
        DataSource real = d.dataSource();
        DataSource counting = (DataSource) Proxy.newProxyInstance(getClass().getClassLoader(),
                new Class<?>[] {DataSource.class}, (proxy, m, args) -> {
                    Object out = invoke(real, m, args);
                    return m.getName().equals("getConnection") ? counting((Connection) out) : out;
                });
        db = new PostgresDatabase(counting, d.name());
        sent.set(0);
        commits.set(0);
        commitRoundTrips.set(0);
        return db;
    }

    private Connection counting(Connection c) {
        return (Connection) Proxy.newProxyInstance(getClass().getClassLoader(), new Class<?>[] {Connection.class},
                (proxy, m, args) -> {
                    switch (m.getName()) {
                        case "prepareStatement", "createStatement", "prepareCall" -> sent.incrementAndGet();
                        case "commit" -> {
                            commits.incrementAndGet();
                            if (c.unwrap(org.postgresql.core.BaseConnection.class).getTransactionState()
                                    != org.postgresql.core.TransactionState.IDLE) {
                                commitRoundTrips.incrementAndGet();
                            }
                        }
                        default -> { }
                    }
                    return invoke(c, m, args);
                });
    }

    private static Object invoke(Object target, java.lang.reflect.Method m, Object[] args) throws Throwable {
        try {
            return m.invoke(target, args);
        } catch (InvocationTargetException e) {
            throw e.getCause();
        }
    }

    private LocalMode local(PostgresRepositoryState state) {
        return new LocalMode(root, Clock.systemUTC(), LockManager.standard(Clock.systemUTC()), state,
                new HumanChannel(), ConfigLoader.load(root.resolve(".agentx/config.toml")), Map.of());
    }

    private static ClarifyCommand.Ask ask(int issue, String question) {
        return new ClarifyCommand.Ask(issue, "engineer", "architect", "Auth", question, true, List.of(), null, null);
    }

    /** A delivery received and taken by this replica, ready for its unit. */
    private DeliveryQueue.Queued received(PgDeliveryQueue queue, String id) {
        List<DeliveryQueue.Queued> queued = new ArrayList<>();
        queue.onQueued(queued::add);
        assertEquals(DeliveryQueue.Accepted.QUEUED, queue.accept(id, "issue_comment",
                "{}".getBytes(StandardCharsets.UTF_8), REPO + "#1"));
        DeliveryQueue.Queued q = queued.get(0);
        assertTrue(queue.take(q, Instant.now()) instanceof DeliveryQueue.Turn.Mine);
        return q;
    }

    private long count(String sql) throws Exception {
        try (Connection c = d.dataSource().getConnection(); Statement s = c.createStatement();
             ResultSet r = s.executeQuery(sql)) {
            r.next();
            return r.getLong(1);
        }
    }

    @Test
    void aDeliverysCommandNoteClaimsDoneMarkAndCommitCostTwoRoundTrips() throws Exception {
        PostgresDatabase db = open();
        PostgresRepositoryState state = db.repository(REPO);
        LocalMode local = local(state);
        PgDeliveryQueue queue = db.deliveries(REPLICA, Clock.systemUTC());
        PgNotes notes = db.notes(Clock.systemUTC());
        PgReplicas replicas = db.replicas(REPLICA, Clock.systemUTC());
        DeliveryQueue.Queued q = received(queue, "d-1");
        sent.set(0);
        commits.set(0);
        commitRoundTrips.set(0);
        Set<String> claimed = db.run(() -> {
            // as a comment's command: the earlier run looked for, the question asked
            assertTrue(state.ledgers().readBeforeChange(1).isEmpty());
            local.engine().execute(ask(1, "JWT or sessions?"), "delivery/d-1/0", false);
            // the issue brought in step on GitHub: its note (locked and read with the ledger) written
            notes.lock(Notes.issueNote(REPO, 1), Map.class);
            notes.put(Notes.issueNote(REPO, 1), Map.of("posted", 1));
            Set<String> mine = replicas.claimEffects(Map.of("h1", new Replicas.ClaimedEffect("{\"comment\": 1}", null)),
                    Instant.now());
            queue.done(q);
            return mine;
        });
        // 1: the issue's lock, its ledger, its note's lock and note; 2: the ledger's write, the events, the
        // note's write, the statuses' change, the claims, the done mark and the COMMIT
        assertEquals(2, sent.get(), "statements sent in a round trip of their own");
        assertEquals(1, commits.get());
        assertEquals(0, commitRoundTrips.get(), "the COMMIT went with the last writes");
        assertEquals(Set.of("h1"), claimed, "the claims' result is known once the unit committed");
        assertEquals(1, count("SELECT count(*) FROM ledgers"));
        assertTrue(count("SELECT count(*) FROM events") > 0);
        assertEquals(1, count("SELECT count(*) FROM shared_notes"));
        assertEquals(1, count("SELECT count(*) FROM effect_claims"));
        assertEquals(1, count("SELECT count(*) FROM deliveries WHERE state = 'processed'"));
        assertEquals(0, queue.size());
    }

    @Test
    void whetherAnIssueHasALedgerIsAnsweredFromTheLedgerTheTransactionHolds() throws Exception {
        PostgresDatabase db = open();
        PostgresRepositoryState state = db.repository(REPO);
        LocalMode local = local(state);
        local.engine().execute(ask(1, "JWT or sessions?"), "delivery/d-0/0", false);
        db.run(() -> {
            assertTrue(state.ledgers().readBeforeChange(1).isPresent());
            assertTrue(state.ledgers().exists(1), "held, with a row");
            assertTrue(state.ledgers().readBeforeChange(3).isEmpty());
            assertFalse(state.ledgers().exists(3), "held, no row yet");
            local.engine().execute(ask(3, "Which queue?"), "delivery/d-1/0", false);
            assertTrue(state.ledgers().exists(3), "written in this transaction, not committed yet");
            assertFalse(state.ledgers().exists(2), "not held: read from the table");
            return null;
        });
        assertTrue(state.ledgers().exists(3));
    }

    @Test
    void whatATransactionDeferredIsSeenByWhatJoinsItAndByNobodyElseBeforeTheCommit() throws Exception {
        PostgresDatabase db = open();
        PostgresRepositoryState state = db.repository(REPO);
        LocalMode local = local(state);
        db.run(() -> {
            String id = local.engine().execute(ask(2, "Which database?")).record().id();
            assertEquals("CLR-2-001", id);
            // read in the transaction through a unit that joins it: the deferred write is sent first
            long seen = db.inTransaction(c -> {
                try (PreparedStatement s = c.prepareStatement("SELECT count(*) FROM ledgers WHERE issue = 2");
                     ResultSet r = s.executeQuery()) {
                    r.next();
                    return r.getLong(1);
                }
            });
            assertEquals(1, seen);
            try {
                assertEquals(0, count("SELECT count(*) FROM ledgers"), "not committed yet");
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
            return null;
        });
        assertEquals(1, count("SELECT count(*) FROM ledgers"));
        assertEquals("Which database?", state.ledgers().read(2).orElseThrow().clarifications().get(0).thread().get(0)
                .body());
    }

    @Test
    void aDoneMarkThatFindsTheDeliveryTakenOverRollsTheWholeDeliveryBack() throws Exception {
        PostgresDatabase db = open();
        PostgresRepositoryState state = db.repository(REPO);
        LocalMode local = local(state);
        PgDeliveryQueue queue = db.deliveries(REPLICA, Clock.systemUTC());
        DeliveryQueue.Queued q = received(queue, "d-2");
        try (Connection c = d.dataSource().getConnection(); PreparedStatement s = c.prepareStatement(
                "UPDATE delivery_queue SET replica = 'r2' WHERE seq = (SELECT seq FROM deliveries WHERE id = 'd-2')")) {
            s.executeUpdate(); // another replica took it over while this one was paused
        }
        ClarifyException e = assertThrows(ClarifyException.class, () -> db.run(() -> {
            local.engine().execute(ask(3, "Taken over?"), "delivery/d-2/0", false);
            queue.done(q);
            return null;
        }));
        assertEquals(ErrorCode.LOCK_LOST, e.code(), "safe to take again");
        assertTrue(e.getMessage().contains("not replica r1's to finish now"), e.getMessage());
        assertEquals(0, count("SELECT count(*) FROM ledgers"));
        assertEquals(0, count("SELECT count(*) FROM events"));
        assertEquals(0, count("SELECT count(*) FROM status_changes"));
        assertTrue(state.ledgers().read(3).isEmpty());
    }

    /** Records, as each done mark runs, the {@code synchronous_commit} its transaction will commit with. */
    private void watchDoneMarks() throws Exception {
        try (Connection c = d.dataSource().getConnection(); Statement s = c.createStatement()) {
            s.execute("ALTER DATABASE " + d.name() + " SET synchronous_commit = on"); // the test server's is off
            s.execute("CREATE TABLE seen_commits (mode text)");
            s.execute("CREATE FUNCTION see_commit() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
                    + "INSERT INTO seen_commits VALUES (current_setting('synchronous_commit')); RETURN NEW; END $$");
            s.execute("CREATE TRIGGER see_commit AFTER UPDATE OF state ON deliveries FOR EACH ROW "
                    + "EXECUTE FUNCTION see_commit()");
        }
    }

    private String seenCommit() throws Exception {
        try (Connection c = d.dataSource().getConnection(); Statement s = c.createStatement();
             ResultSet r = s.executeQuery("SELECT string_agg(mode, ',') FROM seen_commits")) {
            r.next();
            try (Statement clear = c.createStatement()) {
                clear.execute("DELETE FROM seen_commits");
            }
            return r.getString(1);
        }
    }

    @Test
    void aDeliveryWhoseOnlyWritesAreEffectClaimsWaitsForTheFlushOneThatWroteNothingDoesNot() throws Exception {
        PostgresDatabase db = open();
        watchDoneMarks();
        PgDeliveryQueue queue = db.deliveries(REPLICA, Clock.systemUTC());
        PgReplicas replicas = db.replicas(REPLICA, Clock.systemUTC());
        DeliveryQueue.Queued nothing = received(queue, "d-3");
        db.run(() -> {
            queue.done(nothing);
            return null;
        });
        assertEquals("off", seenCommit(), "a delivery that changed nothing commits without waiting for the WAL");
        DeliveryQueue.Queued replies = received(queue, "d-4");
        db.run(() -> {
            queue.done(replies); // marked before its effects are claimed: the mark still goes last
            db.join(new dev.agentx.clarify.store.UnitOfWork.Participant() {
                @Override
                public void beforeCommit() {
                    replicas.claimEffects(Map.of("h2", new Replicas.ClaimedEffect("{\"reply\": 1}", null)),
                            Instant.now());
                }
            });
            return null;
        });
        assertEquals("on", seenCommit(), "its effects are sent once it committed: it must be on disk first");
    }

    @Test
    void readingBeforeAChangeHoldsTheIssueUntilTheCommit() throws Exception {
        PostgresDatabase db = open();
        PostgresRepositoryState state = db.repository(REPO);
        LocalMode local = local(state);
        local.engine().execute(ask(5, "First?"));
        CompletableFuture<Void> holding = new CompletableFuture<>();
        CompletableFuture<Void> release = new CompletableFuture<>();
        CompletableFuture<Void> holder = CompletableFuture.runAsync(() -> db.run(() -> {
            assertEquals(1, state.ledgers().readBeforeChange(5).orElseThrow().clarifications().size());
            holding.complete(null);
            release.join();
            return null;
        }));
        holding.get(10, TimeUnit.SECONDS);
        CompletableFuture<String> second = CompletableFuture.supplyAsync(
                () -> local.engine().execute(ask(5, "Second?")).record().id());
        // the second writer waits for the issue's lock (seen in pg_locks), not for a clock
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (count("SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted") == 0) {
            assertTrue(System.nanoTime() < deadline, "the second writer never waited for the issue's lock");
            Thread.onSpinWait();
        }
        assertFalse(second.isDone());
        release.complete(null);
        holder.get(10, TimeUnit.SECONDS);
        assertEquals("CLR-5-002", second.get(10, TimeUnit.SECONDS));
    }
}
