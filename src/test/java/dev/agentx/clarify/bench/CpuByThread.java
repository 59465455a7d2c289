package dev.agentx.clarify.bench;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadInfo;
import java.lang.management.ThreadMXBean;
import java.util.Map;
import java.util.TreeMap;

/**
 * CPU time of this JVM's threads, summed by thread name with the numbers taken out
 * ({@code agentx-worker-3} counts as {@code agentx-worker-N}), so a benchmark can say which part
 * of the process (server, worker, stub, load generator) used the CPU. Threads that ended between
 * two snapshots are not counted; the pools measured here live for the whole run. The JVM's own
 * threads (JIT compiler, GC) are not visible here.
 */
final class CpuByThread {
    private CpuByThread() {
    }

    static Map<String, Long> snapshot() {
        ThreadMXBean mx = ManagementFactory.getThreadMXBean();
        Map<String, Long> out = new TreeMap<>();
        for (ThreadInfo t : mx.getThreadInfo(mx.getAllThreadIds())) {
            if (t == null) {
                continue;
            }
            long ns = mx.getThreadCpuTime(t.getThreadId());
            if (ns >= 0) {
                out.merge(t.getThreadId() + "\u0000" + group(t.getThreadName()), ns, Long::sum);
            }
        }
        return out;
    }

    /** CPU nanoseconds per thread group since {@code before} (threads new since then count in full). */
    static Map<String, Long> since(Map<String, Long> before) {
        Map<String, Long> now = snapshot();
        Map<String, Long> out = new TreeMap<>();
        for (Map.Entry<String, Long> e : now.entrySet()) {
            long used = e.getValue() - before.getOrDefault(e.getKey(), 0L);
            String group = e.getKey().substring(e.getKey().indexOf('\u0000') + 1);
            out.merge(group, used, Long::sum);
        }
        out.values().removeIf(v -> v < 1_000_000L);
        return out;
    }

    static String group(String threadName) {
        int at = threadName.indexOf('@'); // Jetty's acceptor: "<pool>-acceptor-0@<hash>-<connector>"
        return (at < 0 ? threadName : threadName.substring(0, at)).replaceAll("\\d+", "N");
    }

    /** Thread name prefixes and what those threads are; the kernel's names may be cut at 15 characters. */
    private static final String[][] KINDS = {
        {"agentx-worker-tick", "agentx serve: worker tick"},
        {"agentx-worker", "agentx serve: worker lanes (commands, ledgers, journals)"},
        {"agentx-sender", "agentx serve: outbox senders (GitHub API client)"},
        {"agentx-monitor", "agentx serve: monitor passes due after a second (MonitorPacing)"},
        {"JettyServerThreadPool", "Javalin (agentx serve and the bare handler): webhook requests"},
        {"github-stub", "the GitHub stub (a Javalin handler)"},
        {"bench-load", "benchmark: load generator (plain sockets)"},
        {"HttpClient", "java.net.http client threads (selector, executor)"},
        {"bench-stall-detector", "benchmark: stall detector (wakes every ms)"},
    };

    static String describe(String group) {
        for (String[] kind : KINDS) {
            if (group.startsWith(kind[0]) || (group.length() >= 15 && kind[0].startsWith(group))) {
                return kind[1];
            }
        }
        return group.equals("main") ? "benchmark driver" : "other";
    }
}
