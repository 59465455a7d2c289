package dev.agentx.clarify.store.postgres;

import dev.agentx.clarify.ledger.LedgerCodec;
import dev.agentx.clarify.ledger.LedgerStore;
import dev.agentx.clarify.protocol.ClarifyException;
import dev.agentx.clarify.protocol.ErrorCode;
import dev.agentx.clarify.protocol.Ledger;
import dev.agentx.clarify.store.UnitOfWork;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Function;

/**
 * Ledgers as rows of {@code ledgers}, the SPEC-1 document as {@code jsonb}. An update is one
 * transaction: it takes the issue's lock (a transaction-scoped advisory lock on the repository and
 * issue, which also covers an issue that has no row yet), reads the row, applies the engine's pure
 * change and writes the row back with its version one higher; other writers of the issue, in this
 * process or any other replica, wait for the commit. A reader never waits: it sees the last
 * committed ledger.
 */
public final class PgLedgerStore implements LedgerStore {
    private final PostgresDatabase db;
    private final String repo;
    private final LedgerCodec codec = new LedgerCodec();
    /** The ledgers the thread's open transaction has written, by issue (see {@link #remember}). */
    private final ThreadLocal<Map<Integer, Ledger>> written = new ThreadLocal<>();

    PgLedgerStore(PostgresDatabase db, String repo) {
        this.db = db;
        this.repo = repo;
    }

    /** One statement: outside a transaction it is its own (no BEGIN and COMMIT around it), inside it joins it. */
    @Override
    public Optional<Ledger> read(int issue) {
        return db.autoCommit(c -> read(c, issue, false));
    }

    private Optional<Ledger> read(Connection c, int issue, boolean forWrite) throws SQLException {
        Map<Integer, Ledger> mine = written.get();
        if (mine != null && mine.containsKey(issue)) {
            return Optional.of(mine.get(issue));
        }
        try (PreparedStatement s = c.prepareStatement("SELECT ledger::text FROM ledgers WHERE repo = ? AND issue = ?")) {
            s.setString(1, repo);
            s.setInt(2, issue);
            try (ResultSet r = s.executeQuery()) {
                if (!r.next()) {
                    return Optional.empty();
                }
                return Optional.of(decode(issue, r.getString(1), forWrite));
            }
        }
    }

    /** Decodes a ledger row; a writer refuses fields this version does not know, as the file store does. */
    Ledger decode(int issue, String json, boolean forWrite) {
        Set<String> unknown = new TreeSet<>();
        Ledger ledger;
        try {
            ledger = codec.decode(json.getBytes(StandardCharsets.UTF_8), unknown);
        } catch (IllegalArgumentException e) {
            throw damaged(issue, e.getMessage());
        }
        if (ledger.issueNumber() != issue) {
            throw damaged(issue, "issueNumber is " + ledger.issueNumber() + " but the row is for issue " + issue);
        }
        if (forWrite && !unknown.isEmpty()) {
            throw new ClarifyException(ErrorCode.LEDGER_NEWER, "The ledger of " + where(issue) + " has fields this "
                    + "version of agentx does not know (" + String.join(", ", unknown) + "): a newer version wrote it. "
                    + "It can be read, but changing it here would lose them, so nothing was changed. Upgrade agentx.");
        }
        return ledger;
    }

    private String where(int issue) {
        return repo + "#" + issue + " in " + db.describe();
    }

    private ClarifyException damaged(int issue, String why) {
        return new ClarifyException(ErrorCode.LEDGER_DAMAGED, "The ledger of " + where(issue) + " is damaged: " + why
                + ". Nothing was changed. 'agentx sync --repo " + repo + " --issue " + issue + " --write' rebuilds it "
                + "from the App's comments.");
    }

    @Override
    public <T> T update(int issue, String actor, Function<Ledger, Mutation<T>> change) {
        return db.inTransaction(c -> {
            lockIssue(c, issue);
            Ledger current = read(c, issue, true).orElse(Ledger.empty(issue));
            Mutation<T> m = change.apply(current);
            if (m.ledger() != null && !LedgerStore.unchanged(m.ledger(), current)) {
                write(c, m.ledger());
                remember(m.ledger());
            }
            return m.result();
        });
    }

    /**
     * Keeps a ledger this transaction wrote for its later reads (the statuses mirrored at its
     * commit, a delivery's next command on the issue): the issue's lock, held to the end of the
     * transaction, keeps it the ledger as stored, so it is not selected and decoded again.
     */
    private void remember(Ledger ledger) {
        Map<Integer, Ledger> mine = written.get();
        if (mine == null) {
            Map<Integer, Ledger> fresh = new HashMap<>();
            written.set(fresh);
            db.join(new UnitOfWork.Participant() {
                @Override
                public void committed() {
                    written.remove();
                }

                @Override
                public void rolledBack() {
                    written.remove();
                }
            });
            mine = fresh;
        }
        mine.put(ledger.issueNumber(), ledger);
    }

    /** One transaction: the ledger writes, statuses and events inside commit together. */
    @Override
    public <T> T atomically(java.util.function.Supplier<T> work) {
        return db.inTransaction(c -> work.get());
    }

    /** Takes the issue's lock for the rest of the transaction, waiting at most {@link PostgresDatabase#LOCK_TIMEOUT}. */
    private void lockIssue(Connection c, int issue) throws SQLException {
        db.limitLockWaits(c);
        try (PreparedStatement s = c.prepareStatement("SELECT pg_advisory_xact_lock(hashtext(?), ?)")) {
            s.setString(1, repo);
            s.setInt(2, issue);
            s.executeQuery().close();
        }
    }

    /** Writes a ledger as it is (the store copy's insert; an update's write). */
    void write(Connection c, Ledger ledger) throws SQLException {
        try (PreparedStatement s = c.prepareStatement("INSERT INTO ledgers (repo, issue, version, active, ledger, "
                + "updated_at) VALUES (?, ?, 1, ?, ?::jsonb, now()) ON CONFLICT (repo, issue) DO UPDATE SET "
                + "version = ledgers.version + 1, active = excluded.active, ledger = excluded.ledger, "
                + "updated_at = excluded.updated_at")) {
            s.setString(1, repo);
            s.setInt(2, ledger.issueNumber());
            s.setBoolean(3, !ledger.active().isEmpty());
            s.setString(4, new String(codec.encode(ledger), StandardCharsets.UTF_8));
            s.executeUpdate();
        }
    }

    /** Writes ledgers as they are, in one transaction (copying a store). */
    public void writeAll(List<Ledger> ledgers) {
        db.inTransaction(c -> {
            for (Ledger l : ledgers) {
                write(c, l);
            }
            return null;
        });
    }

    @Override
    public boolean exists(int issue) {
        return db.autoCommit(c -> {
            try (PreparedStatement s = c.prepareStatement("SELECT 1 FROM ledgers WHERE repo = ? AND issue = ?")) {
                s.setString(1, repo);
                s.setInt(2, issue);
                try (ResultSet r = s.executeQuery()) {
                    return r.next();
                }
            }
        });
    }

    @Override
    public List<Integer> issues() {
        return db.inTransaction(c -> issues(c, false));
    }

    List<Integer> issues(Connection c, boolean activeOnly) throws SQLException {
        List<Integer> out = new ArrayList<>();
        try (PreparedStatement s = c.prepareStatement("SELECT issue FROM ledgers WHERE repo = ?"
                + (activeOnly ? " AND active" : "") + " ORDER BY issue")) {
            s.setString(1, repo);
            try (ResultSet r = s.executeQuery()) {
                while (r.next()) {
                    out.add(r.getInt(1));
                }
            }
        }
        return out;
    }

    String repo() {
        return repo;
    }
}
