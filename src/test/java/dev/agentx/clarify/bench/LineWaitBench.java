package dev.agentx.clarify.bench;

import dev.agentx.clarify.github.inbox.DeliveryProcessor;
import dev.agentx.clarify.github.inbox.Worker;
import dev.agentx.clarify.github.outbox.Outbox;
import dev.agentx.clarify.metrics.ServerMetrics;
import dev.agentx.clarify.store.DeliveryQueue;
import dev.agentx.clarify.store.postgres.PgDeliveryQueue;
import dev.agentx.clarify.store.postgres.PostgresDatabase;
import dev.agentx.clarify.support.ForwardingDeliveryQueue;
import dev.agentx.clarify.support.TestPostgres;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * How long a delivery waits for the earlier delivery of its issue that another replica holds: from
 * the end of that one's processing (its done mark's commit follows) to the end of its own. Two
 * workers, replicas a and b, each with a pool of its own on one embedded PostgreSQL; per issue, a
 * delivery acknowledged by a (its processing takes {@link #WORK_MILLIS}) and right after it one
 * acknowledged by b, which finds a's held and waits. Issues one after another, {@link #GAP_MILLIS}
 * apart. Two ways for b to learn that its turn came, in alternating rounds: the signal of a's done
 * mark (NOTIFY, as the server runs), and looking again every 200 ms alone (the baseline: b's queue
 * hides the signals). Prints Markdown.
 *
 * <p>Usage: {@code LineWaitBench <workdir> [issuesPerRound] [rounds]}
 */
public final class LineWaitBench {
    static final long WORK_MILLIS = 5;
    static final long GAP_MILLIS = 20;

    private LineWaitBench() {
    }

    public static void main(String[] args) throws Exception {
        Path work = Path.of(args[0]);
        int issues = args.length > 1 ? Integer.parseInt(args[1]) : 200;
        int rounds = args.length > 2 ? Integer.parseInt(args[2]) : 2;
        TestPostgres.Database database = TestPostgres.newDatabase();
        Map<String, List<Double>> gaps = new java.util.LinkedHashMap<>();
        gaps.put("signal", new ArrayList<>());
        gaps.put("200 ms look", new ArrayList<>());
        int next = 0;
        for (int round = 0; round < 2 * rounds + 1; round++) {
            // the first round warms up, not counted
            String way = round % 2 == 1 ? "signal" : "200 ms look";
            List<Double> got = run(database, work.resolve("round-" + round), way.equals("signal"), next, issues);
            next += issues;
            if (round > 0) {
                gaps.get(way).addAll(got);
            }
        }
        System.out.println("## Waiting for another replica's delivery of the same issue");
        System.out.println();
        System.out.printf("Two replicas (workers with pools of their own) on one embedded PostgreSQL; per issue a "
                + "delivery held by replica a (%d ms of work) and one right after it held by b, issues %d ms apart; "
                + "%d issues per round, %d rounds each way, alternating, after a round of warm-up. Milliseconds "
                + "from the end of a's delivery's work to the end of b's.%n%n", WORK_MILLIS, GAP_MILLIS, issues, rounds);
        System.out.println("| b learns its turn came by | deliveries | p50 | p90 | p99 | max |");
        System.out.println("| --- | --- | --- | --- | --- | --- |");
        gaps.forEach((way, values) -> {
            List<Double> sorted = new ArrayList<>(values);
            sorted.sort(Double::compare);
            System.out.printf("| %s | %d | %.1f | %.1f | %.1f | %.1f |%n", way, sorted.size(), at(sorted, 0.50),
                    at(sorted, 0.90), at(sorted, 0.99), sorted.isEmpty() ? 0 : sorted.get(sorted.size() - 1));
        });
        System.out.println();
    }

    private static double at(List<Double> sorted, double q) {
        return sorted.isEmpty() ? 0 : sorted.get(Math.min(sorted.size() - 1, (int) Math.ceil(q * sorted.size()) - 1));
    }

    /** One round: {@code issues} issues from number {@code first}; b's gaps in milliseconds. */
    private static List<Double> run(TestPostgres.Database database, Path dir, boolean signals, int first, int issues)
            throws Exception {
        Files.createDirectories(dir);
        Clock clock = Clock.systemUTC();
        Map<String, Long> finished = new ConcurrentHashMap<>();
        ScheduledExecutorService beats = Executors.newSingleThreadScheduledExecutor();
        try (PostgresDatabase dbA = database.open(12); PostgresDatabase dbB = database.open(12)) {
            beats.scheduleWithFixedDelay(() -> {
                dbA.beat("replica-a");
                dbB.beat("replica-b");
            }, 0, 1, TimeUnit.SECONDS);
            PgDeliveryQueue a = dbA.deliveries("replica-a", clock);
            PgDeliveryQueue b = dbB.deliveries("replica-b", clock);
            try (Worker wa = worker(a, dbA, "replica-a", dir, clock, finished, WORK_MILLIS);
                 Worker wb = worker(signals ? b : new NoSignals(b), dbB, "replica-b", dir, clock, finished, 0)) {
                wa.start();
                wb.start();
                for (int i = first; i < first + issues; i++) {
                    String key = "acme/shop#" + (i + 1);
                    byte[] body = ("{\"action\":\"created\",\"repository\":{\"full_name\":\"acme/shop\"},\"issue\":"
                            + "{\"number\":" + (i + 1) + "}}").getBytes(StandardCharsets.UTF_8);
                    a.accept("a-" + i, "issue_comment", body, key);
                    b.accept("b-" + i, "issue_comment", body, key);
                    Thread.sleep(GAP_MILLIS);
                }
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
                while (finished.size() < 2 * issues && System.nanoTime() < deadline) {
                    Thread.sleep(10);
                }
            }
        } finally {
            beats.shutdownNow();
        }
        List<Double> out = new ArrayList<>();
        for (int i = first; i < first + issues; i++) {
            Long ta = finished.get("a-" + i);
            Long tb = finished.get("b-" + i);
            if (ta != null && tb != null) {
                out.add((tb - ta) / 1e6);
            }
        }
        return out;
    }

    private static Worker worker(DeliveryQueue queue, PostgresDatabase db, String replica, Path dir, Clock clock,
                                 Map<String, Long> finished, long workMillis) {
        ServerMetrics metrics = ServerMetrics.create();
        DeliveryProcessor processor = (d, payload) -> (progress, save) -> {
            if (workMillis > 0) {
                try {
                    Thread.sleep(workMillis); // the delivery's own work
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
            finished.put(d.id(), System.nanoTime());
            return DeliveryProcessor.NOTHING_AFTER;
        };
        Outbox outbox = new Outbox(dir.resolve(replica + "-outbox"), null, clock, metrics, db.replicas(replica, clock));
        return new Worker(queue, processor, outbox, clock, false, metrics, db.replicas(replica, clock), db);
    }

    /** The queue without its signals: the worker looks again at its own pace. */
    private static final class NoSignals extends ForwardingDeliveryQueue {
        NoSignals(DeliveryQueue queue) {
            super(queue);
        }
    }
}
