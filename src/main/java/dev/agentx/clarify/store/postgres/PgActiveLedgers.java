package dev.agentx.clarify.store.postgres;

import dev.agentx.clarify.ledger.ActiveLedgers;
import dev.agentx.clarify.protocol.ClarifyException;
import dev.agentx.clarify.protocol.Ledger;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The active ledgers of a repository, read in one snapshot: every write keeps the row's
 * {@code active} column in step with its records, so a scan reads only the ledgers that have an
 * open record (through a partial index), whatever the number of closed ones.
 */
public final class PgActiveLedgers implements ActiveLedgers {
    private final PostgresDatabase db;
    private final String repo;
    private final PgLedgerStore ledgers;

    PgActiveLedgers(PostgresDatabase db, String repo, PgLedgerStore ledgers) {
        this.db = db;
        this.repo = repo;
        this.ledgers = ledgers;
    }

    @Override
    public Scan scan() {
        return db.inTransaction(c -> {
            try (PreparedStatement iso = c.prepareStatement("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")) {
                iso.execute();
            }
            List<Integer> issues = ledgers.issues(c, false);
            List<Ledger> active = new ArrayList<>();
            Map<Integer, String> damaged = new TreeMap<>();
            try (PreparedStatement s = c.prepareStatement("SELECT issue, ledger::text FROM ledgers WHERE repo = ? "
                    + "AND active ORDER BY issue")) {
                s.setString(1, repo);
                try (ResultSet r = s.executeQuery()) {
                    while (r.next()) {
                        int issue = r.getInt(1);
                        try {
                            Ledger l = ledgers.decode(issue, r.getString(2), false);
                            if (!l.active().isEmpty()) {
                                active.add(l);
                            }
                        } catch (ClarifyException e) {
                            damaged.put(issue, e.getMessage());
                        }
                    }
                }
            }
            return new Scan(issues, active, damaged);
        });
    }
}
