package dev.agentx.clarify.bench;

import java.io.IOException;
import java.lang.management.CompilationMXBean;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * What the machine did in each second of a run: the share of both cores busy (all processes, from
 * {@code /proc/stat}: the server, the database, the stub, the load generator and whatever else the
 * host runs) and the JIT compiler's time in this JVM. Sampled every 100 ms on a thread of its own,
 * so a second with slow deliveries can be told apart: cores saturated, compiling, or neither.
 */
final class BusySeconds implements AutoCloseable {
    private static final CompilationMXBean JIT = ManagementFactory.getCompilationMXBean();
    /** {nanoTime, busy jiffies, all jiffies, JIT ms} per sample. */
    private final List<long[]> samples = new ArrayList<>();
    private final Thread sampler;
    private volatile boolean running = true;

    BusySeconds() {
        sample();
        sampler = new Thread(() -> {
            while (running) {
                try {
                    Thread.sleep(100);
                } catch (InterruptedException e) {
                    return;
                }
                sample();
            }
        }, "bench-busy-seconds");
        sampler.setDaemon(true);
        sampler.start();
    }

    private void sample() {
        long[] cpu = jiffies();
        synchronized (samples) {
            samples.add(new long[] {System.nanoTime(), cpu[0], cpu[1], JIT.getTotalCompilationTime()});
        }
    }

    /** {busy, all} jiffies of the machine (-1, -1 when /proc/stat cannot be read). */
    private static long[] jiffies() {
        try {
            String line = Files.readAllLines(Path.of("/proc/stat")).get(0); // cpu user nice system idle iowait irq softirq steal
            String[] f = line.trim().split("\\s+");
            long all = 0;
            for (int i = 1; i < Math.min(f.length, 9); i++) {
                all += Long.parseLong(f[i]);
            }
            long idle = Long.parseLong(f[4]) + Long.parseLong(f[5]);
            return new long[] {all - idle, all};
        } catch (IOException | RuntimeException e) {
            return new long[] {-1, -1};
        }
    }

    @Override
    public void close() {
        running = false;
        sampler.interrupt();
        try {
            sampler.join(1000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        sample();
    }

    /** Per second since {@code first} (a nanoTime): {busy percent of both cores, JIT ms}; busy -1 when unknown. */
    Map<Long, long[]> bySecond(long first) {
        Map<Long, long[]> out = new TreeMap<>();
        List<long[]> all;
        synchronized (samples) {
            all = new ArrayList<>(samples);
        }
        Map<Long, long[]> span = new TreeMap<>(); // second -> {busy, all, jit} summed over its sample intervals
        for (int i = 1; i < all.size(); i++) {
            long[] a = all.get(i - 1);
            long[] b = all.get(i);
            if (b[0] < first) {
                continue;
            }
            long[] s = span.computeIfAbsent((b[0] - first) / 1_000_000_000L, k -> new long[3]);
            s[0] += a[1] < 0 ? 0 : b[1] - a[1];
            s[1] += a[2] < 0 ? 0 : b[2] - a[2];
            s[2] += b[3] - a[3];
        }
        span.forEach((second, s) -> out.put(second, new long[] {s[1] == 0 ? -1 : Math.round(100.0 * s[0] / s[1]), s[2]}));
        return out;
    }
}
