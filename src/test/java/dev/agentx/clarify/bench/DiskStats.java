package dev.agentx.clarify.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;

/**
 * The block device counters of the disk a directory is on ({@code /sys/class/block/<dev>/stat},
 * Linux only): completed writes, flushes and discards. Unlike times, these counts do not depend on
 * how fast the host is at the hour of a run, so they show what a change does to a delivery's disk
 * work. They are the whole device's: other processes writing meanwhile count too.
 */
record DiskStats(String device, long writes, long flushes, long discards) {
    /** The counters of the device {@code dir} is on; empty when that cannot be told (not Linux, tmpfs, ...). */
    static Optional<DiskStats> of(Path dir) {
        try {
            String name = Files.getFileStore(dir).name(); // e.g. /dev/vda or /dev/sda1
            if (!name.startsWith("/dev/")) {
                return Optional.empty();
            }
            String dev = Path.of(name).toRealPath().getFileName().toString(); // a /dev/mapper link names dm-N
            Path stat = Path.of("/sys/class/block", dev, "stat");
            if (!Files.isReadable(stat)) {
                return Optional.empty();
            }
            String[] f = Files.readString(stat).trim().split("\\s+");
            // fields: reads 0-3, writes 4-7, in flight 8, ticks 9-10, discards 11-14 (4.18+), flushes 15-16 (5.5+)
            return Optional.of(new DiskStats(dev, Long.parseLong(f[4]), f.length > 15 ? Long.parseLong(f[15]) : -1,
                    f.length > 11 ? Long.parseLong(f[11]) : -1));
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
}
