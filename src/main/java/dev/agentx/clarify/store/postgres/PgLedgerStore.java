package dev.agentx.clarify.store.postgres;

import dev.agentx.clarify.ledger.LedgerCodec;
import dev.agentx.clarify.ledger.LedgerStore;
import dev.agentx.clarify.protocol.ClarifyException;
import dev.agentx.clarify.protocol.ErrorCode;
import dev.agentx.clarify.protocol.Ledger;
import dev.agentx.clarify.store.Notes;
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
 * Ledgers as rows of {@code ledgers}, the SPEC-1 document as {@code jsonb}. An update runs in a
 * transaction (the caller's, a delivery's, or one of its own): it takes the issue's lock (a
 * transaction-scoped advisory lock on the repository and issue, which also covers an issue that
 * has no row yet), reads the row, applies the engine's pure change and writes the row back with
 * its version one higher; other writers of the issue, in this process or any other replica, wait
 * for the commit. The transaction keeps the ledgers it holds, so its later reads and updates of
 * them cost no round trip, and sends the write with its next round trip. Holding an issue's ledger
 * also locks and reads the issue's note ({@link Notes#issueNote}) in the same round trip: the
 * server follows every change of a ledger by bringing the issue in step on GitHub, which locks
 * that note next. A reader never waits: it sees the last committed ledger. Each write is
 * signalled ({@link LedgerSignals#CHANGED}) once the transaction commits.
 */
public final class PgLedgerStore implements LedgerStore {
    private static final String SELECT = "SELECT ledger::text FROM ledgers WHERE repo = ? AND issue = ?";
    private static final String UPSERT = "INSERT INTO ledgers (repo, issue, version, active, ledger, updated_at) "
            + "VALUES (?, ?, 1, ?, ?::jsonb, now()) ON CONFLICT (repo, issue) DO UPDATE SET "
            + "version = ledgers.version + 1, active = excluded.active, ledger = excluded.ledger, "
            + "updated_at = excluded.updated_at";

    private final PostgresDatabase db;
    private final String repo;
    private final LedgerCodec codec = new LedgerCodec();
    /**
     * The issues whose lock the thread's open transaction holds, each with its ledger as the
     * transaction has it (empty: no row). The lock, held to the end of the transaction, keeps each
     * the ledger as stored (with this transaction's writes), so it is not selected and decoded again.
     */
    private final ThreadLocal<Map<Integer, Optional<Ledger>>> held = new ThreadLocal<>();
    /**
     * The issues whose ledger the thread's open transaction wrote, each with whether the other
     * processes on the database are to hear of it ({@link LedgerSignals}): told once it commits.
     */
    private final ThreadLocal<Map<Integer, Boolean>> changed = new ThreadLocal<>();

    PgLedgerStore(PostgresDatabase db, String repo) {
        this.db = db;
        this.repo = repo;
    }

    /**
     * One statement: outside a transaction it is its own (no BEGIN and COMMIT around it), inside
     * it joins it; none for an issue the transaction holds.
     */
    @Override
    public Optional<Ledger> read(int issue) {
        Map<Integer, Optional<Ledger>> mine = held.get();
        if (mine != null && mine.containsKey(issue)) {
            return mine.get(issue);
        }
        return db.autoCommit(c -> {
            try (PreparedStatement s = c.prepareStatement(SELECT)) {
                s.setString(1, repo);
                s.setInt(2, issue);
                try (ResultSet r = s.executeQuery()) {
                    return r.next() ? Optional.of(decode(issue, r.getString(1), false)) : Optional.empty();
                }
            }
        });
    }

    /**
     * Inside a transaction, takes the issue's lock now and reads the ledger under it: the change
     * that follows in the transaction reads nothing again, and a read that decides the change (a
     * command's earlier run, the record it names) sees what the change will see.
     */
    @Override
    public Optional<Ledger> readBeforeChange(int issue) {
        return db.open() ? hold(issue) : read(issue);
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
                + ". Nothing was changed. Delete its row (DELETE FROM ledgers WHERE repo = '" + repo + "' AND issue = "
                + issue + "), then 'agentx sync --repo " + repo + " --issue " + issue + " --write' rebuilds it from "
                + "the App's comments.");
    }

    /**
     * In the thread's transaction, or one of its own: takes the issue's lock and reads the ledger
     * (one round trip, with the writes deferred so far), unless the transaction holds it already;
     * applies the change; defers the write to the transaction's next round trip.
     */
    @Override
    public <T> T update(int issue, String actor, Function<Ledger, Mutation<T>> change) {
        if (!db.open()) {
            return db.inTransaction(c -> update(issue, actor, change));
        }
        Ledger current = hold(issue).orElse(Ledger.empty(issue));
        Mutation<T> m = change.apply(current);
        if (m.ledger() != null && !LedgerStore.unchanged(m.ledger(), current)) {
            Ledger next = m.ledger();
            byte[] json = codec.encode(next);
            db.deferred().add(UPSERT, p -> p.text(repo).integer(next.issueNumber()).bool(!next.active().isEmpty())
                    .text(new String(json, StandardCharsets.UTF_8)));
            // every replica's waiting calls hear of it once the transaction commits (none if it rolls back):
            // through the database, or for a replica running alone, from here (LedgerSignals)
            changed.get().put(issue, db.othersMayListen());
            held.get().put(issue, Optional.of(next));
        }
        return m.result();
    }

    /**
     * The issue's ledger as the thread's open transaction holds it: on the first call, the issue's
     * lock (a transaction-scoped advisory lock on the repository and issue, which also covers an
     * issue that has no row yet, waiting at most {@link PostgresDatabase#LOCK_TIMEOUT}) and the
     * read under it, in one round trip.
     */
    private Optional<Ledger> hold(int issue) {
        Map<Integer, Optional<Ledger>> mine = held.get();
        if (mine != null && mine.containsKey(issue)) {
            return mine.get(issue);
        }
        String[] text = {null};
        Pipeline p = new Pipeline();
        db.limitLockWaits(p);
        p.query("SELECT pg_advisory_xact_lock(hashtext(?), ?)", b -> b.text(repo).integer(issue), r -> { })
                .query(SELECT, b -> b.text(repo).integer(issue), r -> text[0] = r.next() ? r.getString(1) : null);
        // the server brings the issue in step on GitHub after changing its ledger, under the issue's
        // note: locked and read now, in the same round trip, that costs none of its own
        PgNotes.lockWith(db, p, Notes.issueNote(repo, issue));
        db.exchange(p);
        Optional<Ledger> ledger = text[0] == null ? Optional.empty() : Optional.of(decode(issue, text[0], true));
        if (mine == null) {
            Map<Integer, Optional<Ledger>> fresh = new HashMap<>();
            held.set(fresh);
            Map<Integer, Boolean> told = new java.util.TreeMap<>();
            changed.set(told);
            db.join(new UnitOfWork.Participant() {
                @Override
                public void committed() {
                    held.remove();
                    changed.remove();
                    told.forEach((issue, toOthers) -> LedgerSignals.committed(db, repo, issue, toOthers));
                }

                @Override
                public void rolledBack() {
                    held.remove();
                    changed.remove();
                }
            });
            mine = fresh;
        }
        mine.put(issue, ledger);
        return ledger;
    }

    /** One transaction: the ledger writes, statuses and events inside commit together. */
    @Override
    public <T> T atomically(java.util.function.Supplier<T> work) {
        return db.inTransaction(c -> work.get());
    }

    /** Writes a ledger as it is (the store copy's insert). */
    void write(Connection c, Ledger ledger) throws SQLException {
        try (PreparedStatement s = c.prepareStatement(UPSERT)) {
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

    /**
     * Inside a transaction that holds the issue (locked and read: a command looks at its issue's
     * ledger before the engine asks whether it exists), the answer is what it holds, with no
     * round trip; otherwise a query.
     */
    @Override
    public boolean exists(int issue) {
        Map<Integer, Optional<Ledger>> mine = held.get();
        if (mine != null && mine.containsKey(issue)) {
            return mine.get(issue).isPresent();
        }
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
