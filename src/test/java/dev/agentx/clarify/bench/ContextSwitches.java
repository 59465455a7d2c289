package dev.agentx.clarify.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Stream;

/**
 * Context switches of this JVM's threads (Linux: {@code /proc/self/task/<tid>/status}), summed
 * by thread name as {@link CpuByThread} does. The kernel knows a thread by the first 15
 * characters of its Java name. Voluntary switches are a thread going to sleep (waiting for a
 * lock, a queue, a socket or the disk); involuntary ones are the scheduler taking its core away.
 * Counts, so they do not vary with the host's speed the way times do.
 */
final class ContextSwitches {
    private ContextSwitches() {
    }

    /** Voluntary and involuntary switches per thread: key tid + NUL + group. Empty where /proc is not there. */
    static Map<String, long[]> snapshot() {
        Map<String, long[]> out = new TreeMap<>();
        eachTask((task, group) -> {
            long voluntary = 0;
            long involuntary = 0;
            for (String line : Files.readAllLines(task.resolve("status"))) {
                if (line.startsWith("voluntary_ctxt_switches:")) {
                    voluntary = Long.parseLong(line.substring(line.indexOf(':') + 1).strip());
                } else if (line.startsWith("nonvoluntary_ctxt_switches:")) {
                    involuntary = Long.parseLong(line.substring(line.indexOf(':') + 1).strip());
                }
            }
            out.put(task.getFileName() + "\u0000" + group, new long[] {voluntary, involuntary});
        });
        return out;
    }

    /** Reads one of this JVM's threads: its folder under /proc/self/task and its group ({@link CpuByThread#group}). */
    @FunctionalInterface
    interface TaskReader {
        void read(Path task, String group) throws IOException;
    }

    /**
     * Hands each of this JVM's threads to {@code reader} (a thread that ends meanwhile is left
     * out); false where /proc/self/task cannot be listed.
     */
    static boolean eachTask(TaskReader reader) {
        Path tasks = Path.of("/proc/self/task");
        if (!Files.isDirectory(tasks)) {
            return false;
        }
        try (Stream<Path> s = Files.list(tasks)) {
            for (Path t : (Iterable<Path>) s::iterator) {
                try {
                    reader.read(t, CpuByThread.group(Files.readString(t.resolve("comm")).strip()));
                } catch (IOException | RuntimeException e) {
                    // the thread ended meanwhile
                }
            }
            return true;
        } catch (IOException e) {
            return false;
        }
    }

    /** Switches per thread group since {@code before} (threads new since then count in full). */
    static Map<String, long[]> since(Map<String, long[]> before) {
        Map<String, long[]> out = new TreeMap<>();
        for (Map.Entry<String, long[]> e : snapshot().entrySet()) {
            long[] was = before.getOrDefault(e.getKey(), new long[2]);
            String group = e.getKey().substring(e.getKey().indexOf('\u0000') + 1);
            long[] sum = out.computeIfAbsent(group, g -> new long[2]);
            sum[0] += e.getValue()[0] - was[0];
            sum[1] += e.getValue()[1] - was[1];
        }
        return out;
    }
}
