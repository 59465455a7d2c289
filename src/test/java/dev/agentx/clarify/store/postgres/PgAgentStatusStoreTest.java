package dev.agentx.clarify.store.postgres;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.agentx.clarify.app.LocalMode;
import dev.agentx.clarify.channel.HumanChannel;
import dev.agentx.clarify.config.ConfigLoader;
import dev.agentx.clarify.lock.LockManager;
import dev.agentx.clarify.routing.ClarifyCommand;
import dev.agentx.clarify.status.AgentState;
import dev.agentx.clarify.status.AgentStatus;
import dev.agentx.clarify.status.AgentStatusCodec;
import dev.agentx.clarify.support.TestPostgres;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Clock;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The agent statuses on PostgreSQL: a ledger change records what it makes of the agents with its
 * commit and never waits for the repository's statuses row; readers see recorded changes before
 * they are folded; folding puts them into the row in order, and what a dead process left is folded
 * by the next sweep.
 */
@Tag("postgres")
class PgAgentStatusStoreTest {
    private static final String REPO = "acme/shop";
    @TempDir
    Path root;
    private TestPostgres.Database d;
    private PostgresDatabase db;

    @AfterEach
    void close() {
        if (db != null) {
            db.close();
        }
    }

    private PostgresDatabase open() {
        d = TestPostgres.newDatabase();
        db = new PostgresDatabase(d.dataSource(), d.name());
        return db;
    }

    private LocalMode local(PostgresRepositoryState state) {
        return new LocalMode(root, Clock.systemUTC(), LockManager.standard(Clock.systemUTC()), state,
                new HumanChannel(), ConfigLoader.load(root.resolve(".agentx/config.toml")), Map.of());
    }

    private static ClarifyCommand.Ask ask(int issue, String question) {
        return new ClarifyCommand.Ask(issue, "engineer", "architect", "Auth", question, true, List.of(), null, null);
    }

    /** The statuses row as stored, without the changes not folded yet. */
    private Map<String, AgentStatus> row() throws Exception {
        try (Connection c = d.dataSource().getConnection(); PreparedStatement s = c.prepareStatement(
                "SELECT statuses::text FROM agent_statuses WHERE repo = ?")) {
            s.setString(1, REPO);
            try (ResultSet r = s.executeQuery()) {
                return r.next() ? new AgentStatusCodec().decode(r.getString(1).getBytes(StandardCharsets.UTF_8))
                        : Map.of();
            }
        }
    }

    private int recorded() throws Exception {
        try (Connection c = d.dataSource().getConnection();
             PreparedStatement s = c.prepareStatement("SELECT count(*) FROM status_changes");
             ResultSet r = s.executeQuery()) {
            r.next();
            return r.getInt(1);
        }
    }

    @Test
    void aLedgerChangeDoesNotWaitForTheStatusesRowAndReadersSeeItBeforeItIsFolded() throws Exception {
        PostgresRepositoryState state = open().repository(REPO);
        LocalMode local = local(state);
        local.engine().execute(ask(1, "First?"));
        state.statuses().fold();
        try (Connection holder = d.dataSource().getConnection()) {
            // another transaction holds the statuses row (a fold, a hook) for as long as this test wants
            holder.setAutoCommit(false);
            try (PreparedStatement s = holder.prepareStatement(
                    "SELECT 1 FROM agent_statuses WHERE repo = ? FOR UPDATE")) {
                s.setString(1, REPO);
                try (ResultSet r = s.executeQuery()) {
                    assertTrue(r.next(), "the first change's fold made the row");
                }
            }
            CompletableFuture<String> asked = CompletableFuture.supplyAsync(
                    () -> local.engine().execute(ask(2, "Second?")).record().id());
            String id = asked.get(10, TimeUnit.SECONDS); // would wait for the lock (15 s) if it touched the row
            assertEquals("CLR-2-001", id);
            Map<String, AgentStatus> seen = state.statuses().read();
            assertEquals(AgentState.BLOCKED_CLARIFICATION, seen.get("engineer").status());
            assertEquals(2, seen.get("engineer").issue(), "a reader applies the change not folded yet: " + seen);
            assertEquals(1, row().get("engineer").issue(), "the row waits for its fold");
            holder.rollback();
        }
        state.statuses().fold(); // after this, what the background folder had not folded is folded
        assertEquals(0, recorded());
        assertEquals(state.statuses().read(), row());
        assertEquals(2, row().get("engineer").issue());
    }

    @Test
    void foldingKeepsTheOrderOfTheChangesAcrossIssues() throws Exception {
        PostgresRepositoryState state = open().repository(REPO);
        LocalMode local = local(state);
        String first = local.engine().execute(ask(7, "JWT or sessions?")).record().id();
        local.engine().execute(ask(3, "Which database?"));
        local.engine().execute(new ClarifyCommand.Answer(first, "architect", "JWT."));
        state.statuses().fold();
        // answered on issue 7 later, the engineer still waits on issue 3: a working from 7 does not replace it
        AgentStatus engineer = row().get("engineer");
        assertEquals(AgentState.BLOCKED_CLARIFICATION, engineer.status(), row().toString());
        assertEquals(3, engineer.issue());
        assertEquals(row(), state.statuses().read());
    }

    @Test
    void aRolledBackChangeRecordsNothing() throws Exception {
        PostgresRepositoryState state = open().repository(REPO);
        LocalMode local = local(state);
        assertThrows(IllegalStateException.class, () -> state.ledgers().atomically(() -> {
            local.engine().execute(ask(4, "Rolled back?"));
            throw new IllegalStateException("the delivery failed after its command");
        }));
        assertEquals(0, recorded());
        assertEquals(Map.of(), state.statuses().read());
        assertTrue(state.ledgers().read(4).isEmpty());
    }

    @Test
    void whatADeadProcessLeftRecordedIsFoldedByTheNextSweep() throws Exception {
        PostgresRepositoryState state = open().repository(REPO);
        LocalMode local = local(state);
        local.engine().execute(ask(5, "Left behind?"));
        state.statuses().fold();
        Map<String, AgentStatus> folded = row();
        try (Connection c = d.dataSource().getConnection()) {
            // as a process leaves it that committed a change and died before its folder ran
            try (PreparedStatement s = c.prepareStatement("DELETE FROM agent_statuses")) {
                s.executeUpdate();
            }
            try (PreparedStatement s = c.prepareStatement("INSERT INTO status_changes (repo, issue, statuses) "
                    + "VALUES (?, 5, ?::jsonb)")) {
                s.setString(1, REPO);
                s.setString(2, new String(new AgentStatusCodec().encode(folded), StandardCharsets.UTF_8));
                s.executeUpdate();
            }
        }
        assertEquals(folded, state.statuses().read(), "read before any fold");
        try (PostgresDatabase next = new PostgresDatabase(d.dataSource(), d.name())) {
            next.statusFolds().sweep();
        }
        assertEquals(0, recorded());
        assertEquals(folded, row());
    }
}
