package dev.agentx.clarify.bench;

import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;

/**
 * The CPU time of the machine's kernel threads (the children of {@code kthreadd}, pid 2), by
 * name up to its instance ({@code kworker/1:2H-kblockd} is {@code kworker}), from {@code
 * /proc/PID/stat}: the cores' time that none of the bench's processes had, such as the memory
 * monitor's page-out ({@code kdamond}) some virtual machines run.
 */
final class KernelThreads {
    private static final long KTHREADD = 2;

    private KernelThreads() {
    }

    /** Each kernel thread's CPU time so far (nanoseconds) by pid and name; empty where /proc cannot be read. */
    static Optional<Map<String, Long>> snapshot() {
        return Procs.all().map(all -> {
            Map<String, Long> out = new TreeMap<>();
            for (Procs.Stat p : all) {
                if (p.parent() == KTHREADD) {
                    out.put(p.pid() + "\u0000" + group(p.name()), p.cpuNanos());
                }
            }
            return out;
        });
    }

    /** The CPU time by name between two snapshots, the names with at least a tick of it. */
    static Map<String, Long> since(Map<String, Long> before, Map<String, Long> now) {
        return Procs.sinceByKind(before, now);
    }

    /** A kernel thread's name up to its first {@code /}, {@code .} or {@code :}: {@code kdamond.0} is {@code kdamond}. */
    static String group(String name) {
        int cut = 0;
        while (cut < name.length() && "/.:".indexOf(name.charAt(cut)) < 0) {
            cut++;
        }
        return cut == 0 ? name : name.substring(0, cut);
    }
}
