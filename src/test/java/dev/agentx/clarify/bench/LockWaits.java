package dev.agentx.clarify.bench;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.sql.DataSource;

/**
 * Lock waits in the database during a span of a run, from the server's log: with
 * {@code log_lock_waits} on, PostgreSQL logs a statement that waited for a lock longer than
 * {@code deadlock_timeout} ({@link DatabaseLog#SETTINGS}: 5 ms), and again when it got the lock, with how
 * long it waited. A wait is time an acknowledgement's insert or a lane's transaction spends on
 * no core and no disk, which neither the CPU figures nor the disk's show.
 */
final class LockWaits {
    /** "... acquired ShareLock on transaction 123 after 12.345 ms". */
    private static final Pattern ACQUIRED = Pattern.compile(DatabaseLog.ENTRY
            + "process \\d+ acquired (\\w+) on (.+?) after ([\\d.]+) ms");
    private static final Pattern RELATION = Pattern.compile("relation (\\d+) of database \\d+");
    /** What is locked by key rather than by relation: one row for each kind, not for each key. */
    private static final String[][] KINDS = {
        {"advisory lock \\[[^]]*\\]", "advisory locks (an issue's ledger, a shared note)"},
        {"transaction \\d+", "transactions (a row another transaction changed)"},
        {"tuple \\(\\d+,\\d+\\) of ", "rows of "},
    };

    private LockWaits() {
    }

    /**
     * The waits {@code log} records between {@code from} and {@code to}, by lock and
     * what it locks (a relation by its name, looked up in {@code database}; by its number without
     * one): how many, the longest.
     */
    static String between(DatabaseLog log, Instant from, Instant to, DataSource database) {
        Map<String, double[]> byLock = new TreeMap<>(); // count, longest ms
        Map<String, String> names = new java.util.HashMap<>(); // what the log says is locked: its name
        for (String line : log.lines()) {
            Matcher m = ACQUIRED.matcher(line);
            if (!m.find()) {
                continue;
            }
            Instant at = DatabaseLog.time(m.group(1));
            if (at.isBefore(from) || at.isAfter(to)) {
                continue;
            }
            String what = names.computeIfAbsent(m.group(3), locked -> named(locked, database));
            double[] w = byLock.computeIfAbsent(m.group(2) + " on " + what, k -> new double[2]);
            w[0]++;
            w[1] = Math.max(w[1], Double.parseDouble(m.group(4)));
        }
        if (byLock.isEmpty()) {
            return "none";
        }
        StringBuilder out = new StringBuilder();
        byLock.forEach((lock, w) -> out.append(out.length() == 0 ? "" : "; ")
                .append(String.format("%s: %d, the longest %.1f ms", lock, (int) w[0], w[1])));
        return out.toString();
    }

    /** {@code what} with "relation N of database M" as the relation's name, and keys as their kind. */
    private static String named(String what, DataSource database) {
        for (String[] kind : KINDS) {
            what = what.replaceAll(kind[0], kind[1]);
        }
        Matcher r = RELATION.matcher(what);
        if (!r.find() || database == null) {
            return what;
        }
        String name = "relation " + r.group(1);
        try (Connection c = database.getConnection();
             PreparedStatement s = c.prepareStatement("SELECT ?::oid::regclass::text")) {
            s.setLong(1, Long.parseLong(r.group(1)));
            try (ResultSet rs = s.executeQuery()) {
                if (rs.next()) {
                    name = rs.getString(1);
                }
            }
        } catch (SQLException e) {
            // gone, or the database is: the number says what it can
        }
        return what.substring(0, r.start()) + name + what.substring(r.end());
    }
}
