package dev.agentx.clarify.bench;

import dev.agentx.clarify.files.Journal;
import dev.agentx.clarify.github.outbox.Outbox;
import dev.agentx.clarify.metrics.ServerMetrics;
import dev.agentx.clarify.store.files.FileDeliveryQueue;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.Random;

/**
 * What the outbox and inbox journals cost the server at start and at a compaction, against the
 * floor of reading their records. Modes, each meant for a fresh JVM (a start is a cold JVM):
 * <ul>
 *   <li>{@code build DIR KEYS DELIVERIES}: writes {@code DIR/journal} as a busy server leaves it
 *       just before a growth compaction: a compacted head of KEYS done keys and a mirror note per
 *       issue, then DELIVERIES deliveries' effects (a comment, a reaction, a label: each a queue
 *       and a done record) and a note each;</li>
 *   <li>{@code inbox-build DIR IDS}: writes {@code DIR/journal} as an inbox keeps it: the ids of
 *       IDS deliveries done with in the last 7 days;</li>
 *   <li>{@code floor DIR}: reads the journal's records and nothing else (the floor);</li>
 *   <li>{@code open DIR}: opens the outbox on it (read, parse, rebuild the memory), then compacts
 *       it 5 times as the worker's first tick and the daily prune do; prints the start, the median
 *       compaction and its CPU;</li>
 *   <li>{@code inbox-open DIR}: the same for the inbox.</li>
 * </ul>
 */
public final class JournalBench {
    private JournalBench() {
    }

    public static void main(String[] args) throws Exception {
        Path dir = Path.of(args[1]);
        switch (args[0]) {
            case "build" -> build(dir, Integer.parseInt(args[2]), Integer.parseInt(args[3]));
            case "floor" -> {
                long t0 = System.nanoTime();
                int n;
                try (Journal j = new Journal(dir.resolve("journal"))) {
                    n = j.records().size();
                }
                System.out.printf(Locale.ROOT, "floor %d %.0f%n", n, (System.nanoTime() - t0) / 1e6);
            }
            case "open" -> open(dir, false);
            case "inbox-build" -> inboxBuild(dir, Integer.parseInt(args[2]));
            case "inbox-open" -> open(dir, true);
            default -> throw new IllegalArgumentException("mode: build, inbox-build, floor, open or inbox-open");
        }
    }

    private static void open(Path dir, boolean inbox) {
        Clock clock = Clock.systemUTC();
        long t0 = System.nanoTime();
        Runnable prune;
        if (inbox) {
            prune = new FileDeliveryQueue(dir, clock)::prune;
        } else {
            prune = new Outbox(dir, null, clock, ServerMetrics.create())::prune;
        }
        double start = (System.nanoTime() - t0) / 1e6;
        var threads = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        List<Double> wall = new ArrayList<>();
        List<Double> cpu = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            long c = threads.getCurrentThreadCpuTime();
            long t = System.nanoTime();
            prune.run();
            wall.add((System.nanoTime() - t) / 1e6);
            cpu.add((threads.getCurrentThreadCpuTime() - c) / 1e6);
        }
        Collections.sort(wall);
        Collections.sort(cpu);
        System.out.printf(Locale.ROOT, "open %.0f %.0f %.0f%n", start, wall.get(2), cpu.get(2));
    }

    private static void build(Path dir, int keys, int deliveries) throws Exception {
        Files.createDirectories(dir);
        Random random = new Random(7);
        Instant now = Instant.now();
        int issues = Math.max(1, keys / 10);
        String body = "x".repeat(600);
        long seq = 0;
        try (Journal j = new Journal(dir.resolve("journal"))) {
            j.records();
            j.write(utf8("{\"op\":\"seq\",\"seq\":" + (keys + 3L * deliveries) + "}"));
            for (int i = 0; i < keys; i++) {
                Instant at = now.minus(Duration.ofSeconds(random.nextInt(29 * 86_400)));
                j.write(utf8("{\"op\":\"key\",\"seq\":0,\"hash\":\"" + hex(random) + "\",\"at\":\"" + at + "\"}"));
            }
            for (int i = 0; i < issues; i++) {
                j.write(note(i, 7));
            }
            for (int d = 0; d < deliveries; d++) {
                int issue = random.nextInt(issues);
                String effect = "{\"type\":\"comment\",\"key\":\"o/r#" + issue + "/CLR-" + d + "/0\",\"installation\":7,"
                        + "\"repo\":{\"owner\":\"o\",\"name\":\"r\"},\"issue\":" + issue + ",\"body\":\"" + body + "\"}";
                String[] effects = {effect,
                    "{\"type\":\"reaction\",\"key\":\"o/r#" + issue + "/c" + d + "/eyes\",\"installation\":7,"
                        + "\"repo\":{\"owner\":\"o\",\"name\":\"r\"},\"issue\":" + issue + ",\"commentId\":" + d
                        + ",\"content\":\"eyes\"}",
                    "{\"type\":\"add-labels\",\"key\":\"o/r#" + issue + "/labels/" + d + "\",\"installation\":7,"
                        + "\"repo\":{\"owner\":\"o\",\"name\":\"r\"},\"issue\":" + issue
                        + ",\"labels\":[\"needs-clarification\"]}"};
                for (String e : effects) {
                    seq++;
                    String hash = hex(random);
                    j.write(utf8("{\"op\":\"queue\",\"seq\":" + seq + ",\"hash\":\"" + hash + "\",\"entry\":{\"effect\":" + e
                            + ",\"queuedAt\":\"" + now + "\",\"attempts\":0,\"uncertain\":false,\"delivery\":\"d-" + d
                            + "\"}}"));
                    j.write(utf8("{\"op\":\"done\",\"seq\":" + seq + ",\"hash\":\"" + hash + "\",\"at\":\"" + now + "\"}"));
                }
                j.write(note(issue, d));
            }
            j.sync();
            System.out.printf(Locale.ROOT, "built %d %.1f%n", j.size(), j.bytes() / 1e6);
        }
    }

    private static void inboxBuild(Path dir, int ids) throws Exception {
        Files.createDirectories(dir);
        Random random = new Random(7);
        Instant now = Instant.now();
        try (Journal j = new Journal(dir.resolve("journal"))) {
            j.records();
            for (int i = 1; i <= ids; i++) {
                Instant at = now.minus(Duration.ofSeconds(random.nextInt(7 * 86_400)));
                j.write(utf8("{\"op\":\"done\",\"seq\":" + i + ",\"id\":\"" + new java.util.UUID(random.nextLong(),
                        random.nextLong()) + "\",\"at\":\"" + at + "\"}"));
            }
            j.sync();
            System.out.printf(Locale.ROOT, "built %d %.1f%n", j.size(), j.bytes() / 1e6);
        }
    }

    /**
     * The issue's mirror note as the server writes it (IssueMirror's state): the thread entries posted
     * per record id, so its keys are ids no other issue has.
     */
    private static byte[] note(int issue, int posted) {
        return utf8("{\"op\":\"note\",\"name\":\"mirror/7#" + issue + "\",\"note\":{\"installation\":7,"
                + "\"posted\":{\"CLR-" + issue + "-001\":" + posted + "},\"labels\":[\"needs-clarification\"],"
                + "\"generation\":" + posted + ",\"last\":null}}");
    }

    private static String hex(Random random) {
        return String.format("%016x%016x", random.nextLong(), random.nextLong());
    }

    private static byte[] utf8(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }
}
