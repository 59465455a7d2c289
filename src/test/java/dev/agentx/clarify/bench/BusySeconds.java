package dev.agentx.clarify.bench;

import java.io.IOException;
import java.lang.management.CompilationMXBean;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;

/**
 * What the machine did in each second of a run: the share of both cores busy (all processes, from
 * {@code /proc/stat}: the server, the database, the stub, the load generator and whatever else the
 * host runs), the share of them the hypervisor gave to other guests instead ({@code steal}: on a
 * virtual machine, time a core of ours wanted to run and could not), the flushes of the disk the
 * data is on and how long the device took for them, and the JIT compiler's time in this JVM. Sampled
 * every 100 ms on a thread of its own, so a second with slow deliveries can be told apart: cores
 * saturated, taken by the host, a slow disk, compiling, or none of these.
 */
final class BusySeconds implements AutoCloseable {
    private static final CompilationMXBean JIT = ManagementFactory.getCompilationMXBean();

    /**
     * One second of a run. Percentages are of both cores' time, -1 when unknown; the disk's figures
     * are -1 without a device (tmpfs) or without flushes in that second.
     *
     * @param flushMillis the device's average time per flush in the second
     * @param slowestFlushMillis the same over the slowest of its 100 ms samples: a lower bound of the
     *     longest flush
     */
    record Second(int busyPercent, int stealPercent, long flushes, double flushMillis, double slowestFlushMillis,
            long jitMillis) {
        /** e.g. {@code cores 93% busy, 31% stolen, disk 396 flushes at 0.18 ms (0.9 ms in its slowest 100 ms)}. */
        String machine() {
            String cores = busyPercent < 0 ? "cores ?" : "cores " + busyPercent + "% busy, " + stealPercent
                    + "% stolen";
            String disk = flushes < 0 ? "" : flushes == 0 ? ", no disk flushes" : String.format(
                    ", disk %d flushes at %.2f ms (%.1f ms in its slowest 100 ms)", flushes, flushMillis,
                    slowestFlushMillis);
            return cores + disk;
        }
    }

    /** {nanoTime, busy jiffies, all jiffies, steal jiffies, JIT ms, flushes, flush ms} per sample. */
    private final List<long[]> samples = new ArrayList<>();
    private final Optional<Path> disk;
    private final Thread sampler;
    private volatile boolean running = true;

    /** Sampling starts at once; {@code dataDir}'s device gives the disk figures. */
    BusySeconds(Path dataDir) {
        disk = DiskStats.statFile(dataDir);
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
        Optional<DiskStats> d = disk.flatMap(DiskStats::read);
        synchronized (samples) {
            samples.add(new long[] {System.nanoTime(), cpu[0], cpu[1], cpu[2], JIT.getTotalCompilationTime(),
                    d.map(DiskStats::flushes).orElse(-1L), d.map(DiskStats::flushMillis).orElse(-1L)});
        }
    }

    /** {busy, all, steal} jiffies of the machine (all -1 when /proc/stat cannot be read); busy counts steal. */
    private static long[] jiffies() {
        try {
            String line = Files.readAllLines(Path.of("/proc/stat")).get(0); // cpu user nice system idle iowait irq softirq steal
            String[] f = line.trim().split("\\s+");
            long all = 0;
            for (int i = 1; i < Math.min(f.length, 9); i++) {
                all += Long.parseLong(f[i]);
            }
            long idle = Long.parseLong(f[4]) + Long.parseLong(f[5]);
            return new long[] {all - idle, all, f.length > 8 ? Long.parseLong(f[8]) : 0};
        } catch (IOException | RuntimeException e) {
            return new long[] {-1, -1, -1};
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

    /** Per second since {@code first} (a nanoTime). */
    Map<Long, Second> bySecond(long first) {
        Map<Long, List<long[]>> spans = new TreeMap<>();
        List<long[]> all = samples();
        for (int i = 1; i < all.size(); i++) {
            long[] b = all.get(i);
            if (b[0] >= first) {
                spans.computeIfAbsent((b[0] - first) / 1_000_000_000L, k -> new ArrayList<>())
                        .add(delta(all.get(i - 1), b));
            }
        }
        Map<Long, Second> out = new TreeMap<>();
        spans.forEach((second, deltas) -> out.put(second, second(deltas)));
        return out;
    }

    /** The whole span from {@code first} (a nanoTime) to the last sample. */
    Second since(long first) {
        List<long[]> deltas = new ArrayList<>();
        List<long[]> all = samples();
        for (int i = 1; i < all.size(); i++) {
            if (all.get(i)[0] >= first) {
                deltas.add(delta(all.get(i - 1), all.get(i)));
            }
        }
        return second(deltas);
    }

    private List<long[]> samples() {
        synchronized (samples) {
            return new ArrayList<>(samples);
        }
    }

    /** {busy, all, steal, JIT ms, flushes, flush ms} between two samples; -1 for what either could not read. */
    private static long[] delta(long[] a, long[] b) {
        boolean cpu = a[1] >= 0 && b[1] >= 0;
        boolean disk = a[5] >= 0 && b[5] >= 0;
        return new long[] {cpu ? b[1] - a[1] : -1, cpu ? b[2] - a[2] : -1, cpu ? b[3] - a[3] : -1, b[4] - a[4],
                disk ? b[5] - a[5] : -1, disk ? b[6] - a[6] : -1};
    }

    /** Sums {@link #delta}s: the second (or span) they cover. */
    static Second second(List<long[]> deltas) {
        long busy = 0;
        long all = 0;
        long steal = 0;
        long jit = 0;
        long flushes = 0;
        long flushMillis = 0;
        boolean cpu = false;
        boolean disk = false;
        double slowest = 0;
        for (long[] d : deltas) {
            if (d[0] >= 0) {
                cpu = true;
                busy += d[0];
                all += d[1];
                steal += d[2];
            }
            jit += d[3];
            if (d[4] >= 0) {
                disk = true;
                flushes += d[4];
                flushMillis += d[5];
                if (d[4] > 0) {
                    slowest = Math.max(slowest, d[5] / (double) d[4]);
                }
            }
        }
        boolean cores = cpu && all > 0;
        return new Second(cores ? (int) Math.round(100.0 * busy / all) : -1,
                cores ? (int) Math.round(100.0 * steal / all) : -1, disk ? flushes : -1,
                disk && flushes > 0 ? flushMillis / (double) flushes : -1, disk && flushes > 0 ? slowest : -1, jit);
    }
}
