package dev.agentx.clarify.store.postgres;

import dev.agentx.clarify.ledger.ActiveLedgers;
import dev.agentx.clarify.protocol.ClarifyException;
import dev.agentx.clarify.protocol.Ledger;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The active ledgers of a repository, read in one snapshot: every write keeps the row's
 * {@code active} column in step with its records, so a scan reads only the rows of the ledgers that
 * have an open record (index {@code ledgers_active}), whatever the number of closed ones, and
 * counts nothing: the monitor pass after delivered events scans, and reading or counting every
 * row of a repository of some thousands of ledgers costs it tens of milliseconds
 * (bench/README.md).
 *
 * <p>A scan reads each active row's identity ({@code version}, raised by every write, and the
 * row's {@code xmin}, which a row deleted and made again does not keep) and reads and decodes
 * again only the ledgers whose identity changed since this object's last scan. The monitor pass
 * after every delivery, the dashboard and {@code /metrics} all scan; with thousands of open
 * clarifications, reading every ledger's document each time was most of a pass.
 */
public final class PgActiveLedgers implements ActiveLedgers {
    /** A row's identity: what a write of it, or a row deleted and made again, always changes. */
    private static final String IDENTITY = "version || ':' || xmin::text";
    private final PostgresDatabase db;
    private final String repo;
    private final PgLedgerStore ledgers;
    /** What the last scan read of each active ledger, by issue: its row's identity and the ledger or its damage. */
    private final Map<Integer, Known> known = new ConcurrentHashMap<>();

    /** An active row as read: {@code ledger} or, when it could not be decoded, {@code damage}. */
    private record Known(String identity, Ledger ledger, String damage) {
    }

    PgActiveLedgers(PostgresDatabase db, String repo, PgLedgerStore ledgers) {
        this.db = db;
        this.repo = repo;
        this.ledgers = ledgers;
    }

    /**
     * The active ledgers, in one snapshot of their own; inside a transaction of this thread, as
     * that transaction sees them (the agent statuses' fold looks at the other issues so).
     */
    @Override
    public Scan scan() {
        if (db.open()) {
            return db.inTransaction(this::scan);
        }
        return db.inTransaction(c -> {
            try (PreparedStatement iso = c.prepareStatement("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")) {
                iso.execute();
            }
            return scan(c);
        });
    }

    private Scan scan(Connection c) throws SQLException {
        // the active rows only, from their own (partial) index: a pass costs what is open
        Map<Integer, String> active = new LinkedHashMap<>(); // issue -> identity, ascending
        try (PreparedStatement s = c.prepareStatement("SELECT issue, " + IDENTITY
                + " FROM ledgers WHERE repo = ? AND active ORDER BY issue")) {
            s.setString(1, repo);
            try (ResultSet r = s.executeQuery()) {
                while (r.next()) {
                    active.put(r.getInt(1), r.getString(2));
                }
            }
        }
        // this scan's own view: another scan of this object may change the cache meanwhile
        Map<Integer, Known> seen = new HashMap<>();
        List<Integer> changed = new ArrayList<>();
        active.forEach((issue, identity) -> {
            Known k = known.get(issue);
            if (k != null && k.identity().equals(identity)) {
                seen.put(issue, k);
            } else {
                changed.add(issue);
            }
        });
        if (!changed.isEmpty()) {
            try (PreparedStatement s = c.prepareStatement("SELECT issue, " + IDENTITY + ", ledger::text "
                    + "FROM ledgers WHERE repo = ? AND issue = ANY (?)")) {
                s.setString(1, repo);
                s.setArray(2, c.createArrayOf("integer", changed.toArray()));
                try (ResultSet r = s.executeQuery()) {
                    while (r.next()) {
                        Known k = read(r.getInt(1), r.getString(2), r.getString(3));
                        seen.put(r.getInt(1), k);
                        known.put(r.getInt(1), k);
                    }
                }
            }
        }
        known.keySet().retainAll(active.keySet());
        List<Ledger> open = new ArrayList<>();
        Map<Integer, String> damaged = new TreeMap<>();
        for (Integer issue : active.keySet()) {
            Known k = seen.get(issue);
            if (k.damage() != null) {
                damaged.put(issue, k.damage());
            } else if (!k.ledger().active().isEmpty()) {
                open.add(k.ledger());
            }
        }
        return new Scan(open, damaged);
    }

    private Known read(int issue, String identity, String json) {
        try {
            return new Known(identity, ledgers.decode(issue, json, false), null);
        } catch (ClarifyException e) {
            return new Known(identity, null, e.getMessage());
        }
    }
}
