package dev.agentx.clarify.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;

/** The machine's processes as {@code /proc} shows them (Linux only), and CPU time summed by kind of process. */
final class Procs {
    /** Linux counts CPU time in ticks of 10 ms (USER_HZ 100). */
    static final long TICK_NANOS = 10_000_000L;

    private Procs() {
    }

    /** One process: its pid, its name and the fields of its {@code stat} after the name (field 3 first). */
    record Stat(long pid, String name, String[] fields) {
        long parent() {
            return Long.parseLong(fields[1]);
        }

        /** utime and stime. */
        long cpuNanos() {
            return (Long.parseLong(fields[11]) + Long.parseLong(fields[12])) * TICK_NANOS;
        }

        /** cutime and cstime: its children that ended, once reaped. */
        long endedChildrenCpuNanos() {
            return (Long.parseLong(fields[13]) + Long.parseLong(fields[14])) * TICK_NANOS;
        }
    }

    /** Every process now (those that end while we look are left out); empty where /proc cannot be read. */
    static Optional<List<Stat>> all() {
        List<Stat> out = new ArrayList<>();
        try (var procs = Files.list(Path.of("/proc"))) {
            for (Path p : (Iterable<Path>) procs::iterator) {
                String pid = p.getFileName().toString();
                if (!pid.chars().allMatch(Character::isDigit)) {
                    continue;
                }
                try {
                    String stat = Files.readString(p.resolve("stat"));
                    out.add(new Stat(Long.parseLong(pid), stat.substring(stat.indexOf('(') + 1, stat.lastIndexOf(')')),
                            stat.substring(stat.lastIndexOf(')') + 2).split(" ")));
                } catch (IOException | RuntimeException gone) {
                    // the process ended while we looked
                }
            }
        } catch (IOException | SecurityException e) {
            return Optional.empty();
        }
        return Optional.of(out);
    }

    /**
     * CPU nanoseconds per kind since {@code before}, from two snapshots keyed {@code pid NUL kind}
     * (processes new since then count in full); kinds with less than a tick are left out.
     */
    static Map<String, Long> sinceByKind(Map<String, Long> before, Map<String, Long> now) {
        Map<String, Long> out = new TreeMap<>();
        for (Map.Entry<String, Long> e : now.entrySet()) {
            String kind = e.getKey().substring(e.getKey().indexOf('\u0000') + 1);
            out.merge(kind, e.getValue() - before.getOrDefault(e.getKey(), 0L), Long::sum);
        }
        out.values().removeIf(v -> v < TICK_NANOS);
        return out;
    }
}
