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
            out.put(p.pid() + "\u0000" + kind(p.postmaster(), p.cmdline()), p.stat().cpuNanos());
            if (p.postmaster()) {
                out.put(p.pid() + "\u0000" + ENDED, p.stat().endedChildrenCpuNanos());
            }
        }
        return Optional.of(out);
    }

    /** One process of a PostgreSQL server: its stat, whether it is the postmaster, its command line. */
    record Process(Procs.Stat stat, boolean postmaster, String cmdline) {
        long pid() {
            return stat.pid();
        }

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
            for (Procs.Stat p : Procs.all().orElseThrow(() -> new IOException("no /proc"))) {
                if (p.pid() == postmaster || p.parent() == postmaster) {
                    try {
                        out.add(new Process(p, p.pid() == postmaster,
                                Files.readString(Path.of("/proc", String.valueOf(p.pid()), "cmdline"))));
                    } catch (IOException gone) {
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
        return Procs.sinceByKind(before, now);
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
