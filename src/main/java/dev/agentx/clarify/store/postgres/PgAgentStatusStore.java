package dev.agentx.clarify.store.postgres;

import com.fasterxml.jackson.core.JsonProcessingException;
import dev.agentx.clarify.files.JsonErrors;
import dev.agentx.clarify.protocol.ClarifyException;
import dev.agentx.clarify.protocol.ErrorCode;
import dev.agentx.clarify.protocol.Ledger;
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
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.function.UnaryOperator;

/**
 * A repository's agent statuses: one row of {@code agent_statuses} (the document
 * {@code agent-status.json} holds) and the changes recorded in {@code status_changes} that are
 * not folded into it yet.
 *
 * <p>A {@link #mirror} inside a transaction (a delivery, a command's ledger update) is recorded
 * just before the transaction commits, as what the issue's ledger now makes of the agents
 * ({@link StatusRules#derive}): one row of {@code status_changes} per issue, which commits with the
 * ledger change it follows or not at all. The statuses row is not touched then. Locked to the
 * commit, that one row would make every transaction of the repository wait for the one before it,
 * through its commit's flush of the WAL: one delivery at a time per repository, whatever the number
 * of lanes and replicas. After the commit the database's folder ({@link PgStatusFolds}) folds the
 * recorded changes into the row in the order recorded, all that are there at once ({@link #fold}),
 * and {@link #read} applies those not folded yet, so a reader sees every committed change. A fold
 * that a crash undoes (its deletes with its write) is folded again.
 *
 * <p>{@link #update} (a store copy writing the statuses whole) locks the row for its
 * read-modify-write.
 *
 * <p>Where a change ends an agent's clarification on its issue, the fold (and a read applying it)
 * looks at the repository's active ledgers for what is still open for the agent elsewhere
 * ({@link StatusRules.Elsewhere}), as the fold's transaction sees them.
 */
public final class PgAgentStatusStore implements AgentStatusStore {
    private final PostgresDatabase db;
    private final String repo;
    private final PgLedgerStore ledgers;
    /** What an agent's other issues hold open for it, for a clarification that ends on one ({@link StatusRules.Elsewhere}). */
    private final PgActiveLedgers active;
    private final AgentStatusCodec codec = new AgentStatusCodec();
    /** The updates waiting for the end of the transaction this thread has open, if any. */
    private final ThreadLocal<List<UnaryOperator<Map<String, AgentStatus>>>> pending = new ThreadLocal<>();
    /** The agents to mirror, by issue in the order first mirrored, when the transaction this thread has open commits. */
    private final ThreadLocal<Map<Integer, Set<String>>> mirrors = new ThreadLocal<>();

    PgAgentStatusStore(PostgresDatabase db, String repo, PgLedgerStore ledgers, PgActiveLedgers active) {
        this.db = db;
        this.repo = repo;
        this.ledgers = ledgers;
        this.active = active;
    }

    /** The other issues' open records, read once when a clarification ends ({@link StatusRules#apply}). */
    private StatusRules.Elsewhere elsewhere() {
        return StatusRules.elsewhere(() -> active.scan().active());
    }

    /** The statuses row with the changes not folded into it yet applied: every committed change. */
    @Override
    public Map<String, AgentStatus> read() {
        List<Map.Entry<Integer, String>> rows = db.autoCommit(c -> {
            // one statement, so one snapshot: the row (issue 0) and exactly the changes not folded into it
            List<Map.Entry<Integer, String>> out = new ArrayList<>();
            try (PreparedStatement s = c.prepareStatement("SELECT 0, 0, statuses::text FROM agent_statuses "
                    + "WHERE repo = ? UNION ALL SELECT id, issue, statuses FROM status_changes WHERE repo = ? "
                    + "ORDER BY 1")) {
                s.setString(1, repo);
                s.setString(2, repo);
                try (ResultSet r = s.executeQuery()) {
                    while (r.next()) {
                        out.add(Map.entry(r.getLong(1) == 0 ? 0 : r.getInt(2), r.getString(3)));
                    }
                }
            }
            return out;
        });
        // applied with the connection back in the pool: a change may look at the other issues
        StatusRules.Elsewhere elsewhere = elsewhere();
        Map<String, AgentStatus> statuses = new TreeMap<>();
        for (Map.Entry<Integer, String> row : rows) {
            Map<String, AgentStatus> doc = decode(row.getValue());
            statuses = row.getKey() == 0 ? doc : StatusRules.apply(statuses, row.getKey(), doc, elsewhere);
        }
        return statuses;
    }

    /** The statuses, or null when the repository has no row yet. */
    private Map<String, AgentStatus> read(Connection c, boolean forUpdate) throws SQLException {
        try (PreparedStatement s = c.prepareStatement("SELECT statuses::text FROM agent_statuses WHERE repo = ?"
                + (forUpdate ? " FOR UPDATE" : ""))) {
            s.setString(1, repo);
            try (ResultSet r = s.executeQuery()) {
                return r.next() ? decode(r.getString(1)) : null;
            }
        }
    }

    private Map<String, AgentStatus> decode(String json) {
        try {
            return codec.decode(json.getBytes(StandardCharsets.UTF_8));
        } catch (JsonProcessingException e) {
            throw new ClarifyException(ErrorCode.INTERNAL, "The agent statuses of " + repo + " in "
                    + db.describe() + " are damaged: " + JsonErrors.describe(e) + ". They only mirror the "
                    + "ledgers: delete the row (and the repository's rows of status_changes) and they are rebuilt "
                    + "as agents act.", e);
        }
    }

    /**
     * Folds the recorded changes into the statuses row in the order recorded and deletes them, in
     * one transaction, and says how many there were. Its commit does not wait for the WAL's flush:
     * the changes are durable already, and a fold that a crash of the database undoes comes back
     * as them. Two folds of one repository (two replicas' folders) take turns on the rows they delete.
     */
    int fold() {
        return db.inTransaction(c -> {
            db.limitLockWaits(c);
            try (PreparedStatement s = c.prepareStatement("SET LOCAL synchronous_commit = off")) {
                s.execute();
            }
            TreeMap<Long, Map.Entry<Integer, String>> taken = new TreeMap<>(); // by id: RETURNING keeps no order
            try (PreparedStatement s = c.prepareStatement("DELETE FROM status_changes WHERE repo = ? "
                    + "RETURNING id, issue, statuses")) {
                s.setString(1, repo);
                try (ResultSet r = s.executeQuery()) {
                    while (r.next()) {
                        taken.put(r.getLong(1), Map.entry(r.getInt(2), r.getString(3)));
                    }
                }
            }
            if (taken.isEmpty()) {
                return 0;
            }
            Map<String, AgentStatus> before = lockRow(c);
            Map<String, AgentStatus> after = before;
            StatusRules.Elsewhere elsewhere = elsewhere();
            for (Map.Entry<Integer, String> change : taken.values()) {
                after = StatusRules.apply(after, change.getKey(), decode(change.getValue()), elsewhere);
            }
            if (!after.equals(before)) {
                write(c, after);
            }
            return taken.size();
        });
    }

    /**
     * Changes the statuses. Inside a transaction ({@link PostgresDatabase#open}) the change is
     * made just before it commits, with the transaction's other updates in one write.
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
     * Brings the agents in line with the issue's ledger. Inside a transaction: recorded as it
     * commits, with the ledger as the transaction has it then, and folded behind it (see the class
     * comment). Outside one: at once, against the ledger as committed.
     */
    @Override
    public void mirror(String actor, int issue, Set<String> agents) {
        if (!db.open()) {
            apply(List.of(current -> StatusRules.reconcile(current,
                    ledgers.read(issue).orElse(Ledger.empty(issue)), agents, elsewhere())));
            return;
        }
        Map<Integer, Set<String>> recording = mirrors.get();
        if (recording == null) {
            Map<Integer, Set<String>> fresh = new LinkedHashMap<>();
            mirrors.set(fresh);
            db.join(new UnitOfWork.Participant() {
                @Override
                public void beforeCommit() {
                    mirrors.remove();
                    record(fresh);
                }

                @Override
                public void committed() {
                    db.statusFolds().due(repo);
                }

                @Override
                public void rolledBack() {
                    mirrors.remove();
                }
            });
            recording = fresh;
        }
        recording.computeIfAbsent(issue, i -> new TreeSet<>()).addAll(agents);
    }

    /**
     * Records what each issue's ledger, as the transaction has it, makes of its agents: one
     * statement, sent with the transaction's commit.
     */
    private void record(Map<Integer, Set<String>> recording) {
        List<Integer> issues = new ArrayList<>();
        List<String> derived = new ArrayList<>();
        for (Map.Entry<Integer, Set<String>> m : recording.entrySet()) {
            Ledger ledger = ledgers.read(m.getKey()).orElse(Ledger.empty(m.getKey()));
            Map<String, AgentStatus> statuses = StatusRules.derive(ledger, m.getValue());
            if (!statuses.isEmpty()) {
                issues.add(m.getKey());
                derived.add(new String(codec.encode(statuses), StandardCharsets.UTF_8));
            }
        }
        if (issues.isEmpty()) {
            return;
        }
        // unnest keeps the arrays' order, so the ids (the fold's order) follow the order of first mirroring
        db.deferred().add("INSERT INTO status_changes (repo, issue, statuses) SELECT ?, i, s "
                + "FROM unnest(?::int[], ?::text[]) WITH ORDINALITY AS t(i, s, n) ORDER BY n",
                p -> p.text(repo).integers(issues).texts(derived));
    }

    /** Locks the row, makes the changes in order, writes it if they changed it. */
    private void apply(List<UnaryOperator<Map<String, AgentStatus>>> changes) {
        db.inTransaction(c -> {
            db.limitLockWaits(c);
            Map<String, AgentStatus> before = lockRow(c);
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

    /** Locks the statuses row for the transaction and reads it, making it first for the repository's first status. */
    private Map<String, AgentStatus> lockRow(Connection c) throws SQLException {
        Map<String, AgentStatus> row = read(c, true);
        if (row != null) {
            return row;
        }
        // a row to lock, which a concurrent first writer may make too
        try (PreparedStatement s = c.prepareStatement("INSERT INTO agent_statuses (repo, statuses, updated_at) "
                + "VALUES (?, '{}'::jsonb, now()) ON CONFLICT (repo) DO NOTHING")) {
            s.setString(1, repo);
            s.executeUpdate();
        }
        return read(c, true);
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
