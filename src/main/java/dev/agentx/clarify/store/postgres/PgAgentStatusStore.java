package dev.agentx.clarify.store.postgres;

import com.fasterxml.jackson.core.JsonProcessingException;
import dev.agentx.clarify.files.JsonErrors;
import dev.agentx.clarify.protocol.ClarifyException;
import dev.agentx.clarify.protocol.ErrorCode;
import dev.agentx.clarify.status.AgentStatus;
import dev.agentx.clarify.status.AgentStatusCodec;
import dev.agentx.clarify.status.AgentStatusStore;
import dev.agentx.clarify.status.StatusRules;
import dev.agentx.clarify.store.UnitOfWork;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.function.UnaryOperator;

/**
 * A repository's agent statuses as one row of {@code agent_statuses} (the document
 * {@code agent-status.json} holds); an update locks the row for its read-modify-write.
 */
public final class PgAgentStatusStore implements AgentStatusStore {
    private final PostgresDatabase db;
    private final String repo;
    private final PgLedgerStore ledgers;
    private final AgentStatusCodec codec = new AgentStatusCodec();
    /** The changes waiting for the end of the transaction this thread has open, if any. */
    private final ThreadLocal<List<UnaryOperator<Map<String, AgentStatus>>>> pending = new ThreadLocal<>();

    PgAgentStatusStore(PostgresDatabase db, String repo, PgLedgerStore ledgers) {
        this.db = db;
        this.repo = repo;
        this.ledgers = ledgers;
    }

    @Override
    public Map<String, AgentStatus> read() {
        Map<String, AgentStatus> read = db.inTransaction(c -> read(c, false));
        return read == null ? new TreeMap<>() : read;
    }

    /** The statuses, or null when the repository has no row yet. */
    private Map<String, AgentStatus> read(Connection c, boolean forUpdate) throws SQLException {
        try (PreparedStatement s = c.prepareStatement("SELECT statuses::text FROM agent_statuses WHERE repo = ?"
                + (forUpdate ? " FOR UPDATE" : ""))) {
            s.setString(1, repo);
            try (ResultSet r = s.executeQuery()) {
                if (!r.next()) {
                    return null; // no row yet
                }
                try {
                    return codec.decode(r.getString(1).getBytes(StandardCharsets.UTF_8));
                } catch (JsonProcessingException e) {
                    throw new ClarifyException(ErrorCode.INTERNAL, "The agent statuses of " + repo + " in "
                            + db.describe() + " are damaged: " + JsonErrors.describe(e) + ". They only mirror the "
                            + "ledgers: delete the row and they are rebuilt as agents act.", e);
                }
            }
        }
    }

    /**
     * Changes the statuses. Inside a transaction ({@link PostgresDatabase#open}) the change is
     * made just before it commits, with the transaction's other status changes in one write: the
     * row is locked for the commit only, not for the rest of the transaction (a delivery), so the
     * deliveries of a repository's different issues do not queue behind each other's work.
     */
    @Override
    public void update(String actor, UnaryOperator<Map<String, AgentStatus>> change) {
        if (!db.open()) {
            apply(List.of(change));
            return;
        }
        List<UnaryOperator<Map<String, AgentStatus>>> changes = pending.get();
        if (changes == null) {
            List<UnaryOperator<Map<String, AgentStatus>>> fresh = new ArrayList<>();
            pending.set(fresh);
            db.join(new UnitOfWork.Participant() {
                @Override
                public void beforeCommit() {
                    pending.remove();
                    apply(fresh);
                }

                @Override
                public void rolledBack() {
                    pending.remove();
                }
            });
            changes = fresh;
        }
        changes.add(change);
    }

    /**
     * Reconciles the agents with the issue's ledger as the transaction has it when it commits (the
     * ledger's row lock orders the transactions of one issue, so this is the ledger as it now is).
     */
    @Override
    public void mirror(String actor, int issue, Set<String> agents) {
        update(actor, StatusRules.mirroring(ledgers, issue, agents));
    }

    /** Locks the row, makes the changes in order, writes it if they changed it. */
    private void apply(List<UnaryOperator<Map<String, AgentStatus>>> changes) {
        db.inTransaction(c -> {
            db.limitLockWaits(c);
            Map<String, AgentStatus> before = read(c, true);
            if (before == null) {
                // the repository's first status: a row to lock, which a concurrent first writer may make too
                try (PreparedStatement s = c.prepareStatement("INSERT INTO agent_statuses (repo, statuses, "
                        + "updated_at) VALUES (?, '{}'::jsonb, now()) ON CONFLICT (repo) DO NOTHING")) {
                    s.setString(1, repo);
                    s.executeUpdate();
                }
                before = read(c, true);
            }
            Map<String, AgentStatus> after = before;
            for (UnaryOperator<Map<String, AgentStatus>> change : changes) {
                after = new TreeMap<>(change.apply(after));
            }
            if (!after.equals(before)) {
                write(c, after);
            }
            return null;
        });
    }

    /** Replaces the statuses as they are (copying a store). */
    public void replace(Map<String, AgentStatus> statuses) {
        db.inTransaction(c -> {
            write(c, statuses);
            return null;
        });
    }

    private void write(Connection c, Map<String, AgentStatus> statuses) throws SQLException {
        try (PreparedStatement s = c.prepareStatement("INSERT INTO agent_statuses (repo, statuses, updated_at) "
                + "VALUES (?, ?::jsonb, now()) ON CONFLICT (repo) DO UPDATE SET statuses = excluded.statuses, "
                + "updated_at = excluded.updated_at")) {
            s.setString(1, repo);
            s.setString(2, new String(codec.encode(statuses), StandardCharsets.UTF_8));
            s.executeUpdate();
        }
    }
}
