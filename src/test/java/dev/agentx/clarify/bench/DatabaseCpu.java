package dev.agentx.clarify.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;

/**
 * CPU time of a PostgreSQL server's processes (the postmaster and its children, found through the
 * first line of {@code postmaster.pid} in its data directory), summed by what each process is:
 * {@code backend} for the connections' processes, the process title otherwise ({@code walwriter},
 * {@code checkpointer}, ...), and {@link #ENDED} for the processes that ended between two
 * snapshots: the postmaster's reaped children, autovacuum workers above all (each lives for one
 * table's vacuum, a few seconds at most, so a snapshot rarely sees one). Linux only (/proc); empty
 * elsewhere.
 */
final class DatabaseCpu {
    private static final long TICK_NANOS = 10_000_000L; // USER_HZ is 100 on Linux
    /** The kind of the CPU time of processes that ended: the postmaster's children it reaped. */
    static final String ENDED = "ended processes (autovacuum workers, ...)";

    private DatabaseCpu() {
    }

    static Optional<Map<String, Long>> snapshot(Path dataDirectory) {
        Optional<List<Process>> all = processes(dataDirectory);
        if (all.isEmpty()) {
            return Optional.empty();
        }
        Map<String, Long> out = new TreeMap<>();
        for (Process p : all.get()) {
            long ticks = Long.parseLong(p.stat()[11]) + Long.parseLong(p.stat()[12]);
            out.put(p.pid() + "\u0000" + kind(p.postmaster(), p.cmdline()), ticks * TICK_NANOS);
            if (p.postmaster()) { // cutime and cstime: its children that ended, once reaped
                out.put(p.pid() + "\u0000" + ENDED, (Long.parseLong(p.stat()[13]) + Long.parseLong(p.stat()[14]))
                        * TICK_NANOS);
            }
        }
        return Optional.of(out);
    }

    /** One process of a PostgreSQL server: its pid, whether it is the postmaster, the fields of its stat after the name, its command line. */
    record Process(long pid, boolean postmaster, String[] stat, String cmdline) {
        /** Whether it serves a connection ({@link #kind} {@code backend}). */
        boolean backend() {
            return !postmaster && kind(false, cmdline).equals("backend");
        }
    }

    /**
     * The postmaster of the server whose data directory is {@code dataDirectory} (the first line of
     * its {@code postmaster.pid}) and its children, as /proc shows them now; empty where that cannot
     * be read.
     */
    static Optional<List<Process>> processes(Path dataDirectory) {
        try {
            long postmaster = Long.parseLong(Files.readAllLines(dataDirectory.resolve("postmaster.pid")).get(0).trim());
            List<Process> out = new ArrayList<>();
            try (var procs = Files.list(Path.of("/proc"))) {
                for (Path p : (Iterable<Path>) procs::iterator) {
                    String name = p.getFileName().toString();
                    if (!name.chars().allMatch(Character::isDigit)) {
                        continue;
                    }
                    try {
                        String stat = Files.readString(p.resolve("stat"));
                        String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
                        long pid = Long.parseLong(name);
                        if (pid == postmaster || Long.parseLong(f[1]) == postmaster) {
                            out.add(new Process(pid, pid == postmaster, f, Files.readString(p.resolve("cmdline"))));
                        }
                    } catch (IOException | RuntimeException gone) {
                        // the process ended while we looked
                    }
                }
            }
            return Optional.of(out);
        } catch (IOException | RuntimeException e) {
            return Optional.empty();
        }
    }

    /** CPU nanoseconds per kind of process since {@code before} (processes new since then count in full). */
    static Map<String, Long> since(Map<String, Long> before, Map<String, Long> now) {
        Map<String, Long> out = new TreeMap<>();
        for (Map.Entry<String, Long> e : now.entrySet()) {
            String kind = e.getKey().substring(e.getKey().indexOf('\u0000') + 1);
            out.merge(kind, e.getValue() - before.getOrDefault(e.getKey(), 0L), Long::sum);
        }
        out.values().removeIf(v -> v < TICK_NANOS);
        return out;
    }

    private static String kind(boolean postmaster, String cmdline) {
        if (postmaster) {
            return "postmaster";
        }
        String title = cmdline.replace('\u0000', ' ').trim();
        if (title.startsWith("postgres: ")) {
            title = title.substring("postgres: ".length());
        }
        // a connection's title is "user database host(port) state"; the server's own processes have one word or two
        return title.contains("(") || title.split(" ").length > 3 ? "backend" : title;
    }
}
