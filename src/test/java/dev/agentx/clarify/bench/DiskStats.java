package dev.agentx.clarify.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;

/**
 * The block device counters of the disk a directory is on ({@code /sys/class/block/<dev>/stat},
 * Linux only): completed writes, flushes and discards, and the time the device took for its
 * flushes. The counts do not depend on how fast the host is at the hour of a run, so they show
 * what a change does to a delivery's disk work; the flush time shows whether the disk was slow
 * (a commit waits for a flush). They are the whole device's: other processes writing meanwhile
 * count too.
 */
record DiskStats(String device, long writes, long flushes, long discards, long flushMillis) {
    /** The counters of the device {@code dir} is on; empty when that cannot be told (not Linux, tmpfs, ...). */
    static Optional<DiskStats> of(Path dir) {
        return statFile(dir).flatMap(DiskStats::read);
    }

    /** The stat file of the device {@code dir} is on, to {@link #read} again and again. */
    static Optional<Path> statFile(Path dir) {
        try {
            String name = Files.getFileStore(dir).name(); // e.g. /dev/vda or /dev/sda1
            if (!name.startsWith("/dev/")) {
                return Optional.empty();
            }
            String dev = Path.of(name).toRealPath().getFileName().toString(); // a /dev/mapper link names dm-N
            Path stat = Path.of("/sys/class/block", dev, "stat");
            return Files.isReadable(stat) ? Optional.of(stat) : Optional.empty();
        } catch (IOException | RuntimeException e) {
            return Optional.empty();
        }
    }

    static Optional<DiskStats> read(Path stat) {
        try {
            String[] f = Files.readString(stat).trim().split("\\s+");
            // fields: reads 0-3, writes 4-7, in flight 8, ticks 9-10, discards 11-14 (4.18+), flushes 15-16 (5.5+)
            return Optional.of(new DiskStats(stat.getParent().getFileName().toString(), Long.parseLong(f[4]),
                    f.length > 16 ? Long.parseLong(f[15]) : -1, f.length > 11 ? Long.parseLong(f[11]) : -1,
                    f.length > 16 ? Long.parseLong(f[16]) : -1));
        } catch (IOException | RuntimeException e) {
            return Optional.empty();
        }
    }

    /** Per delivery since {@code before}: e.g. {@code 9.1 writes, 6.2 flushes, 1.0 discards}. */
    String perDelivery(DiskStats before, int deliveries) {
        return String.format("%.1f writes, %s flushes, %s discards", (writes - before.writes) / (double) deliveries,
                flushes < 0 ? "?" : String.format("%.1f", (flushes - before.flushes) / (double) deliveries),
                discards < 0 ? "?" : String.format("%.1f", (discards - before.discards) / (double) deliveries));
    }

    /** The device's average time per flush since {@code before}, in ms; -1 when it cannot tell or flushed nothing. */
    double millisPerFlush(DiskStats before) {
        long n = flushes - before.flushes;
        return flushes < 0 || n <= 0 ? -1 : (flushMillis - before.flushMillis) / (double) n;
    }
}
