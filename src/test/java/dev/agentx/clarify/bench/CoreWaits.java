package dev.agentx.clarify.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import javax.sql.DataSource;

/**
 * How long threads were ready to run and waited for a core (Linux: the second field of {@code
 * /proc/<pid>/task/<tid>/schedstat}, the time a task spent on a run queue), summed by what the
 * thread is: this JVM's threads by name as {@link CpuByThread} groups them, and on PostgreSQL its
 * connections' processes, with the one that runs the acknowledgements' inserts apart from the
 * others (found by its last statement in {@code pg_stat_activity}). A 202 that waits for its
 * insert's commit waits for that backend; how long the backend and the webhook threads stood in
 * the run queue tells whether a slow acknowledgement was the cores' being busy or the database's
 * own work. Empty where /proc has no schedstat.
 */
final class CoreWaits {
    /** The group of the backend that inserts the deliveries a 202 waits for. */
    static final String ACK_BACKEND = "PostgreSQL: backend of the acknowledgements' inserts";
    /** The group of the other connections' backends (the lanes', the senders', the monitor's, ...). */
    static final String OTHER_BACKENDS = "PostgreSQL: the other connections' backends";

    private CoreWaits() {
    }

    /**
     * Nanoseconds each thread waited for a core, key pid/tid + NUL + group; PostgreSQL's backends
     * (children of the postmaster of {@code pgData}, when given) with their group decided by {@code
     * ackBackends}.
     */
    static Map<String, Long> snapshot(Path pgData, Set<Long> ackBackends) {
        Map<String, Long> out = new TreeMap<>();
        if (!ContextSwitches.eachTask((task, group) -> out.put("t" + task.getFileName() + "\u0000" + group,
                waited(task)))) {
            return out;
        }
        if (pgData != null) {
            for (long pid : backends(pgData)) {
                try {
                    out.put("p" + pid + "\u0000" + (ackBackends.contains(pid) ? ACK_BACKEND : OTHER_BACKENDS),
                            waited(Path.of("/proc", Long.toString(pid))));
                } catch (IOException | RuntimeException e) {
                    // the connection ended meanwhile
                }
            }
        }
        return out;
    }

    /** Nanoseconds waited for a core per group since {@code before} (threads new since then count in full). */
    static Map<String, Long> since(Map<String, Long> before, Map<String, Long> now) {
        Map<String, Long> out = new TreeMap<>();
        for (Map.Entry<String, Long> e : now.entrySet()) {
            String group = e.getKey().substring(e.getKey().indexOf('\u0000') + 1);
            out.merge(group, e.getValue() - before.getOrDefault(e.getKey(), 0L), Long::sum);
        }
        return out;
    }

    /** The pids of the connections whose last statement was the acknowledgements' insert. */
    static Set<Long> ackBackends(DataSource database) {
        Set<Long> out = new TreeSet<>();
        try (Connection c = database.getConnection(); Statement s = c.createStatement();
                ResultSet r = s.executeQuery("SELECT pid FROM pg_stat_activity "
                        + "WHERE query LIKE 'WITH received AS (INSERT INTO deliveries%'")) {
            while (r.next()) {
                out.add(r.getLong(1));
            }
        } catch (SQLException e) {
            // not told apart then: every backend counts with the others
        }
        return out;
    }

    private static long waited(Path task) throws IOException {
        return Long.parseLong(Files.readString(task.resolve("schedstat")).strip().split(" ")[1]);
    }

    /** The postmaster's children that serve connections. */
    private static Set<Long> backends(Path pgData) {
        Set<Long> out = new TreeSet<>();
        DatabaseCpu.processes(pgData).ifPresent(all -> all.stream().filter(DatabaseCpu.Process::backend)
                .forEach(p -> out.add(p.pid())));
        return out;
    }
}
