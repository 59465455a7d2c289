package dev.agentx.clarify.bench;

import dev.agentx.clarify.github.GitHubMode;
import dev.agentx.clarify.github.GitHubSettings;
import dev.agentx.clarify.github.support.GitHubRig;
import dev.agentx.clarify.github.webhook.SignatureVerifier;
import dev.agentx.clarify.metrics.ServerMetrics;
import dev.agentx.clarify.support.MutableClock;
import io.javalin.Javalin;
import java.net.URI;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Webhook acknowledgement and end-to-end latency of {@code agentx serve} (the real server, its own
 * worker, the system clock) with a plain stub as the GitHub API ({@link GitHubStub}), against a bare
 * Javalin handler that answers 200, in the same JVM; the deliveries are sent over plain sockets
 * ({@link SocketLoad}), so that the load generator and the stub take as little of the cores as
 * they can. Load: signed {@code issue_comment} deliveries, clarifications from question to answer
 * to resolution ({@link #deliveries}), sent to 127.0.0.1 only, bounded in count.
 * The servers run the clarification monitor after every delivery, as {@code agentx serve} does.
 * Prints Markdown.
 *
 * <p>Usage: {@code WebhookBench <workdir> [steadyRate] [steadySeconds] [saturationCount] [clients]}
 */
public final class WebhookBench {
    /** What queueing a delivery durably is on the store benchmarked (words for the report). */
    private static String queueing = "the inbox's append and fdatasync";
    /** The machine's busy cores and the JIT's time in each second of the steady run and its drain. */
    private static BusySeconds steadyBusy;

    /** The kind in a posted comment's hidden marker, as it stands in the POST's JSON body (quotes escaped). */
    private static final Pattern KIND = Pattern.compile("\\\\\"kind\\\\\":\\\\\"(question|answer|resolution)\\\\\"");
    /**
     * How many questions later a question is answered, and as many again later resolved: a list
     * of deliveries is clarifications from question to resolution, at most {@code 2 * LAG}
     * of them open at a time.
     */
    static final int LAG = 30;

    private final SocketLoad load = new SocketLoad();
    /** The open loop's senders: a delivery is handed to one at its send time. */
    private final ExecutorService senders = Executors.newFixedThreadPool(64, named("bench-load"));
    /** The closed loop's clients (made once: each keeps its connections from run to run). */
    private ExecutorService clientPool;

    private static java.util.concurrent.ThreadFactory named(String prefix) {
        AtomicInteger n = new AtomicInteger();
        return r -> {
            Thread t = new Thread(r, prefix + "-" + n.incrementAndGet());
            t.setDaemon(true);
            return t;
        };
    }

    /** {@code id}: {@code bench-<issue>-q|a|r} for the question, its answer and its resolution. */
    record Delivery(String id, byte[] body, String signature) {
    }

    /**
     * Delivery sent (its intended send time) to its comment POSTed to the stub, and deliveries whose comment never
     * came; {@code timed} holds each time as {intended send nanoTime, nanos to the POST}.
     */
    private record EndToEnd(Stats stats, int missing, List<long[]> timed) {
        static EndToEnd of(Map<String, Long> sentAt, Map<String, Long> postedAt) {
            List<Long> nanos = new ArrayList<>();
            List<long[]> timed = new ArrayList<>();
            int missing = 0;
            for (Map.Entry<String, Long> s : sentAt.entrySet()) {
                Long p = postedAt.get(s.getKey());
                if (p == null) {
                    missing++;
                } else {
                    nanos.add(p - s.getValue());
                    timed.add(new long[] {s.getValue(), p - s.getValue()});
                }
            }
            return new EndToEnd(Stats.ofNanos(nanos), missing, timed);
        }

        /**
         * The seconds of the run (by intended send time) in which a delivery took longer than {@code overMillis}
         * end to end: how many, the slowest, the longest a 202 sent in the same second waited for its
         * queueing (from {@code acks}' Server-Timing), and what the machine did in that second (see
         * {@link BusySeconds}): one cluster after a stall of the disk or of the cores, or a backlog spread
         * over the run.
         */
        String timeline(Run acks, long overMillis, BusySeconds busy) {
            long first = timed.stream().mapToLong(t -> t[0]).min().orElse(0);
            java.util.TreeMap<Long, long[]> bySecond = new java.util.TreeMap<>(); // {count, over, max nanos}
            for (long[] t : timed) {
                long[] b = bySecond.computeIfAbsent((t[0] - first) / 1_000_000_000L, k -> new long[3]);
                b[0]++;
                if (t[1] > overMillis * 1_000_000L) {
                    b[1]++;
                }
                b[2] = Math.max(b[2], t[1]);
            }
            Map<Long, Long> queueMax = new java.util.HashMap<>();
            synchronized (acks.timed()) {
                for (long[] t : acks.timed()) {
                    queueMax.merge((t[0] - first) / 1_000_000_000L, t[2], Math::max);
                }
            }
            Map<Long, BusySeconds.Second> machine = busy.bySecond(first);
            StringBuilder out = new StringBuilder();
            long seconds = 0;
            for (Map.Entry<Long, long[]> e : bySecond.entrySet()) {
                long[] b = e.getValue();
                if (b[1] == 0) {
                    continue;
                }
                seconds++;
                BusySeconds.Second m = machine.getOrDefault(e.getKey(), new BusySeconds.Second(-1, -1, -1, -1, -1, 0));
                out.append(out.length() == 0 ? "" : "; ").append(String.format("%d s: %d of %d (max %.0f ms, queueing max "
                        + "%.1f ms, %s, JIT %d ms)", e.getKey(), b[1], b[0], b[2] / 1e6,
                        queueMax.getOrDefault(e.getKey(), -1L) / 1e6, m.machine(), m.jitMillis()));
            }
            return seconds == 0 ? "none" : seconds + " of " + bySecond.size() + " seconds: " + out;
        }
    }

    /**
     * What a run measured: ack latencies (from the intended send time), the requests not acknowledged by
     * HTTP status (0: no answer), deliveries per second, and each ack as {intended send nanoTime (closed-loop
     * runs: the send's), latency nanos, the server's queue nanos, its handler nanos} (the last two from the
     * 202's Server-Timing, -1 without it).
     */
    record Run(List<Long> ackNanos, Map<Integer, Integer> failures, double perSecond, List<long[]> timed) {
        int errors() {
            return failures.values().stream().mapToInt(Integer::intValue).sum();
        }
    }

    private static final java.lang.management.CompilationMXBean JIT =
            java.lang.management.ManagementFactory.getCompilationMXBean();
    /**
     * A checkpoint of the database after the warm-up, as a server that has run for a while has had
     * (one every few minutes): it recycles the WAL segments the warm-up filled into the next ones,
     * so that the measured runs write their WAL into files allocated already, as a running
     * server's commits do, instead of into segments made new for a database just created (which
     * no checkpoint had recycled yet: each new segment's blocks are allocated by the commits that
     * first reach them, and with {@code wal_init_zero} on it would be written whole first).
     */
    private static void checkpoint(javax.sql.DataSource database) throws java.sql.SQLException {
        try (java.sql.Connection c = database.getConnection(); java.sql.Statement s = c.createStatement()) {
            s.execute("CHECKPOINT");
        }
    }

    /** The JIT counts as settled once a round of warm-up load spends less than this share of its time compiling. */
    static final double SETTLED = 0.05;
    static final int MIN_ROUNDS = 3;
    /** At most this many rounds (-Dwebhook.bench.maxRounds=N for a quick look). */
    static final int MAX_ROUNDS = Integer.getInteger("webhook.bench.maxRounds", 40);
    /** At most this many rounds of a server's warm-up right before each of its measured runs. */
    static final int REWARM_ROUNDS = 10;

    /** How the warm-up went: rounds, deliveries, seconds, whether the JIT settled, and its compile time per round. */
    private record Warmup(int rounds, int deliveries, double seconds, boolean settled, List<Long> jitMillis) {
        void print(long measuredJitMillis) {
            System.out.printf("Warm-up (not measured): %d rounds, %d deliveries in %.0f s, until a round spent less than "
                    + "%.0f%% of its time in the JIT compiler (%s; compile ms per round: %s). JIT compile time during "
                    + "the measured runs below: %d ms.%n%n", rounds, deliveries, seconds, SETTLED * 100,
                    settled ? "settled" : "NOT settled after " + MAX_ROUNDS + " rounds: figures include compiling",
                    jitMillis, measuredJitMillis);
        }
    }

    /**
     * Warms both servers up until the JIT has compiled what the load runs. A server runs for days;
     * measured while C2 still compiles (with few cores that takes a while, one compiler thread busy
     * throughout), the figures would show the compiler's CPU, not the server's.
     * Each round: 1,000 deliveries to each server closed-loop, a drain, 2 s at the steady rate, a drain.
     */
    private Warmup warmUp(GitHubMode mode, String app, String base, GitHubRig rig, AtomicInteger issues, int rate,
                          int clients) {
        long start = System.nanoTime();
        List<Long> jit = new ArrayList<>();
        int deliveries = 0;
        boolean settled = false;
        int round = 0;
        while (round < MAX_ROUNDS && !settled) {
            long c0 = JIT.getTotalCompilationTime();
            long t0 = System.nanoTime();
            closedLoop(base, deliveries(rig, issues, 1000), clients);
            closedLoop(app, deliveries(rig, issues, 1000), clients);
            drain(mode, Duration.ofSeconds(120));
            openLoop(app, deliveries(rig, issues, 2 * rate), rate, null);
            drain(mode, Duration.ofSeconds(120));
            deliveries += 2000 + 2 * rate;
            long compiled = JIT.getTotalCompilationTime() - c0;
            jit.add(compiled);
            round++;
            settled = round >= MIN_ROUNDS && compiled < SETTLED * (System.nanoTime() - t0) / 1e6;
        }
        return new Warmup(round, deliveries, (System.nanoTime() - start) / 1e9, settled, jit);
    }

    /**
     * Warms one server up again right before its measured run, until a round spends less than {@link #SETTLED}
     * of its time compiling (at most {@link #REWARM_ROUNDS} rounds); returns the compile ms per round. Both
     * servers share this JVM, and so do Jetty's, Javalin's and the JDK's HTTP client's code: a run of one
     * server recompiles that shared code for its own profile and leaves the other's code unused, which the
     * JVM may then throw away ({@code UseCodeCacheFlushing}). Measured straight after the bare handler's
     * run, agentx's first acknowledgements would be slower, and the worker, which steps back to one lane
     * while acknowledgements queue up ({@code AckPriority}), would fall behind for those first seconds,
     * which would decide the end-to-end p99. A server in production is not preceded by another one's
     * load. App rounds: 1,000
     * deliveries closed-loop, a drain, 2 s at the steady rate, a drain; bare rounds: the closed loop.
     */
    private List<Long> rewarm(GitHubMode mode, String url, boolean app, GitHubRig rig, AtomicInteger issues, int rate,
                              int clients) {
        List<Long> jit = new ArrayList<>();
        for (int round = 0; round < REWARM_ROUNDS; round++) {
            long c0 = JIT.getTotalCompilationTime();
            long t0 = System.nanoTime();
            closedLoop(url, deliveries(rig, issues, 1000), clients);
            if (app) {
                drain(mode, Duration.ofSeconds(120));
                openLoop(url, deliveries(rig, issues, 2 * rate), rate, null);
                drain(mode, Duration.ofSeconds(120));
            }
            long compiled = JIT.getTotalCompilationTime() - c0;
            jit.add(compiled);
            if (compiled < SETTLED * (System.nanoTime() - t0) / 1e6) {
                break;
            }
        }
        return jit;
    }

    public static void main(String[] args) throws Exception {
        Path work = Path.of(args[0]);
        int rate = args.length > 1 ? Integer.parseInt(args[1]) : 200;
        int seconds = args.length > 2 ? Integer.parseInt(args[2]) : 20;
        int saturation = args.length > 3 ? Integer.parseInt(args[3]) : 1000;
        int clients = args.length > 4 ? Integer.parseInt(args[4]) : 8;
        try {
            new WebhookBench().run(work, rate, seconds, saturation, clients);
        } catch (Throwable e) {
            // the servers' threads would keep the JVM, and bench/run with it, waiting for good
            e.printStackTrace();
            System.exit(1);
        }
        System.exit(0);
    }

    private void run(Path work, int rate, int seconds, int saturation, int clients) throws Exception {
        if (java.nio.file.Files.exists(work.resolve("data"))) {
            // the same delivery ids again would be answered 200 as duplicates, and nothing processed
            throw new IllegalArgumentException(work.resolve("data") + " exists: give the benchmark a new directory");
        }
        Map<String, Long> sentAt = new ConcurrentHashMap<>();
        Map<String, Long> postedAt = new ConcurrentHashMap<>();
        GitHubRig rig = new GitHubRig(work.resolve("data"), MutableClock.at(Clock.systemUTC().instant().toString()),
                false);
        io.zonky.test.db.postgres.embedded.EmbeddedPostgres pg = null;
        if (Boolean.getBoolean("agentx.bench.postgres")) {
            // the repositories' state in PostgreSQL (AGENTX_DATABASE_URL), committed durably as in production
            io.zonky.test.db.postgres.embedded.EmbeddedPostgres.Builder builder =
                    io.zonky.test.db.postgres.embedded.EmbeddedPostgres.builder()
                    .setDataDirectory(work.resolve("pgdata")).setCleanDataDirectory(true)
                    .setServerConfig("synchronous_commit", "on").setServerConfig("fsync", "on")
                    // what docs/storage.md ("Server settings") and the compose recipe give PostgreSQL
                    .setServerConfig("wal_init_zero", "off")
                    // counts of the statements run, for the database's work per delivery (DatabaseWork)
                    .setServerConfig("shared_preload_libraries", "pg_stat_statements")
                    .setServerConfig("pg_stat_statements.track_planning", "on");
            for (String[] setting : DatabaseLog.SETTINGS) {
                builder.setServerConfig(setting[0], setting[1]);
            }
            // the database's log (autovacuum's rounds, lock waits: DatabaseLog) in the work dir, kept after the run
            pg = builder.setServerConfig("log_directory", work.resolve("pglog").toString()).start();
            DatabaseWork.install(pg.getPostgresDatabase());
            database = pg.getPostgresDatabase();
            rig.database("postgresql://postgres@localhost:" + pg.getPort() + "/postgres");
            store = " (repository state in PostgreSQL)";
            storeNote = "The repositories' ledgers, statuses and events in PostgreSQL (AGENTX_DATABASE_URL; embedded "
                    + "PostgreSQL on the same machine, synchronous_commit and fsync on, wal_init_zero off as "
                    + "docs/storage.md says, and a CHECKPOINT after the warm-up, as a running server has one every "
                    + "few minutes: the runs write their WAL into recycled segments), and so are the deliveries: "
                    + "a 202 waits for the commit of the delivery's row; the outbox in the data dir as always.";
            queueing = "the insert and commit of its row";
            ackGoal = 15;
            endToEndGoal = 100;
            if (Integer.getInteger("agentx.bench.replicas", 1) == 2) {
                store = " (two replicas, repository state in PostgreSQL)";
                storeNote = "Two servers (replicas) in this JVM, each with its own data dir, on one embedded PostgreSQL "
                        + "on the same machine (synchronous_commit and fsync on); the load generator sends each "
                        + "delivery to one of them (by a hash of its id), as a load balancer would, so the same load as "
                        + "the single-server runs is split over both. Each delivery is a row of the shared deliveries "
                        + "table, taken in its issue's order by the replica holding it, and each effect is claimed "
                        + "before it is sent (docs/storage.md, Replicas).";
            }
        }
        // GitHub's API: the stub's handler records when each round's comment came (the delivery that
        // asked, answered or resolved); WireMock, which the tests use, took a tenth of the cores here
        GitHubStub github = new GitHubStub(GitHubRig.API_REPO, (issue, body) -> {
            Matcher k = KIND.matcher(body);
            if (k.find()) {
                postedAt.putIfAbsent("bench-" + issue + "-" + k.group(1).charAt(0), System.nanoTime());
            }
        });
        GitHubSettings rigSettings = rig.settings();
        GitHubSettings settings = new GitHubSettings(rigSettings.appId(), rigSettings.privateKey(),
                rigSettings.webhookSecrets(), github.baseUrl(), rigSettings.dataDir(), 0, rigSettings.webhookPath(),
                rigSettings.maxBodyBytes(), 0, rigSettings.redeliveryInterval(), rigSettings.clientId(),
                rigSettings.clientSecret(), rigSettings.database());
        GitHubMode mode = GitHubMode.create(settings, Clock.systemUTC(),
                new GitHubMode.Options(false, dev.agentx.clarify.github.RepositoryMonitor.STANDARD,
                        new dev.agentx.clarify.channel.HumanChannel(), "127.0.0.1")).start();
        Javalin bare = Javalin.create(cfg -> {
            cfg.startup.showJavalinBanner = false;
            cfg.jetty.port = 0;
            cfg.jetty.host = "127.0.0.1";
            cfg.routes.addHttpHandler(io.javalin.http.HandlerType.POST, GitHubSettings.DEFAULT_PATH,
                    ctx -> ctx.status(200).result("ok\n"));
        }).start();
        String app = "http://127.0.0.1:" + mode.port() + GitHubSettings.DEFAULT_PATH;
        if (Integer.getInteger("agentx.bench.replicas", 1) == 2) {
            if (pg == null) {
                throw new IllegalArgumentException("two replicas share a database: set -Dagentx.bench.postgres=true");
            }
            Path data2 = work.resolve("data-2");
            java.nio.file.Files.createDirectories(data2);
            java.nio.file.Files.copy(work.resolve("data").resolve("agentx.toml"), data2.resolve("agentx.toml"));
            GitHubSettings s2 = new GitHubSettings(settings.appId(), settings.privateKey(), settings.webhookSecrets(),
                    settings.apiUrl(), data2, 0, settings.webhookPath(), settings.maxBodyBytes(), 0,
                    settings.redeliveryInterval(), settings.clientId(), settings.clientSecret(), settings.database());
            replica = GitHubMode.create(s2, Clock.systemUTC(), new GitHubMode.Options(false,
                    dev.agentx.clarify.github.RepositoryMonitor.STANDARD, new dev.agentx.clarify.channel.HumanChannel(),
                    "127.0.0.1")).start();
            app = app + ",http://127.0.0.1:" + replica.port() + GitHubSettings.DEFAULT_PATH;
        }
        String base = "http://127.0.0.1:" + bare.port() + GitHubSettings.DEFAULT_PATH;
        AtomicInteger issues = new AtomicInteger(1000);
        GcPauses gc = null;
        try {
            // warm-up of both, not measured
            Warmup warmup = warmUp(mode, app, base, rig, issues, rate, clients);
            if (pg != null) {
                checkpoint(pg.getPostgresDatabase());
            }
            long jit0 = JIT.getTotalCompilationTime();
            // Every measured run's deliveries are made (and signed) before the runs. They are the load
            // generator's, not the server's, but share its heap: made during the runs, they would be young
            // objects that every young collection copies again, lengthening its pause.
            // The calibrating System.gc() of GcPauses moves them into the old generation, where the
            // bodies a GitHub would send do not weigh on the server's collections either.
            int steadyCount = rate * seconds;
            int half = Math.max(1, rate / 2);
            List<Delivery> baseSteadyLoad = deliveries(rig, issues, steadyCount);
            List<Delivery> steadyLoad = deliveries(rig, issues, steadyCount);
            List<Delivery> halfLoad = deliveries(rig, issues, half * seconds);
            List<Delivery> baseSatLoad = deliveries(rig, issues, saturation);
            List<Delivery> appSatLoad = deliveries(rig, issues, saturation);
            gc = new GcPauses();
            Stalls stalls = new Stalls();

            Map<String, List<Long>> rewarms = new LinkedHashMap<>();
            rewarms.put("before the bare handler's steady run", rewarm(mode, base, false, rig, issues, rate, clients));
            long codeBefore = codeCacheUsed();
            Run baseSteady = openLoop(base, baseSteadyLoad, rate, null);
            long codeAfterBare = codeCacheUsed();
            // The probes read /proc, the disk's counters and the database in this JVM, through JDK and driver code
            // the server's compiled code shares; read for the first time right before the run, they would add
            // types to that code's profiles and C2 would recompile Jetty's request reading in the run's first
            // seconds (seen in a recording: the bench's first /proc reads deoptimized InputStream.read, then
            // HttpInput.read took 349 ms of C2). Read once before the re-warm-up, and the sampler of the busy
            // seconds running through it, they are in the profiles the re-warm-up compiles from, as in the run.
            Probes.start(mode, work, pg).finish(mode, steadyCount);
            steadyBusy = new BusySeconds(work.resolve("data"));
            rewarms.put("before agentx's steady run", rewarm(mode, app, true, rig, issues, rate, clients));
            Probes probes = Probes.start(mode, work, pg);
            java.time.Instant steadyFrom = java.time.Instant.now();
            Run appSteady = openLoop(app, steadyLoad, rate, sentAt);
            stalls.close();
            List<GcPauses.Pause> steadyPauses = gc.since(firstDue(appSteady));
            List<GcPauses.Pause> basePauses = gc.since(firstDue(baseSteady));
            List<Stalls.Stall> steadyStalls = stalls.since(firstDue(appSteady));
            List<Stalls.Stall> baseStalls = stalls.since(firstDue(baseSteady));
            drain(mode, Duration.ofSeconds(120));
            steadyBusy.close();
            java.time.Instant steadyTo = java.time.Instant.now();
            Probes.Measured measured = probes.finish(mode, appSteady.ackNanos().size());
            Map<String, Long> steadyCpu = measured.cpu();
            Map<String, Long> steadyKernel = measured.kernel();
            java.util.Optional<Map<String, Long>> steadyDbCpu = measured.dbCpu();
            Map<String, long[]> switches = measured.switches();
            Map<String, Long> coreWaits = measured.coreWaits();
            DatabaseWork.Result steadyDbWork = measured.dbWork();
            String steadyWal = measured.wal();
            double waited = measured.waited();
            EndToEnd e2e = EndToEnd.of(sentAt, postedAt);
            // the same at half the rate: the pipeline's own latency when the cores are not saturated
            Map<String, Long> halfSentAt = new ConcurrentHashMap<>();
            Run appHalf = openLoop(app, halfLoad, half, halfSentAt);
            drain(mode, Duration.ofSeconds(120));
            EndToEnd halfE2e = EndToEnd.of(halfSentAt, postedAt);
            rewarms.put("before the bare handler's saturation run", rewarm(mode, base, false, rig, issues, rate, clients));
            Run baseSat = closedLoop(base, baseSatLoad, clients);
            rewarms.put("before agentx's saturation run", rewarm(mode, app, true, rig, issues, rate, clients));
            Run appSat = closedLoop(app, appSatLoad, clients);
            long drainStart = System.nanoTime();
            drain(mode, Duration.ofSeconds(300));
            double drainSeconds = (System.nanoTime() - drainStart) / 1e9;
            long measuredJit = JIT.getTotalCompilationTime() - jit0
                    - rewarms.values().stream().flatMap(List::stream).mapToLong(Long::longValue).sum();
            report(warmup, measuredJit, rate, seconds, saturation, clients, baseSteady, appSteady, baseSat, appSat, e2e, half, appHalf,
                    halfE2e, drainSeconds, storage(work.resolve("data")));
            if (pg != null) {
                String autovacuum;
                String lockWaits;
                try {
                    DatabaseLog log = DatabaseLog.read(work.resolve("pglog"));
                    autovacuum = Autovacuum.between(log, steadyFrom, steadyTo);
                    lockWaits = LockWaits.between(log, steadyFrom, steadyTo, database);
                } catch (java.io.IOException e) {
                    autovacuum = lockWaits = "unknown (" + e.getMessage() + ")";
                }
                System.out.printf("PostgreSQL's autovacuum during the steady run and its drain (from its log; a round a "
                        + "minute over the tables that changed enough, on the same cores): %s.%n%n", autovacuum);
                System.out.printf("Lock waits in the database over 5 ms during the steady run and its drain (from its "
                        + "log, log_lock_waits; by lock and what it locks: how many, the longest): %s.%n%n", lockWaits);
                System.out.printf("The database's WAL during the steady run and its drain (pg_stat_wal, pg_stat_bgwriter, "
                        + "pg_wal; checkpoints are in its log, log_checkpoints): %s.%n%n", steadyWal);
            }
            System.out.printf("Before each measured run its server was warmed up again, until a round spent less "
                    + "than %.0f%% of its time compiling (the other server's run in the same JVM recompiles the code they "
                    + "share, Jetty's and Javalin's, for its own use; measured straight after the bare handler's run, "
                    + "agentx lost its first seconds to that; at most %d rounds): compile ms per round %s.%n%n",
                    SETTLED * 100, REWARM_ROUNDS, rewarms.entrySet().stream().map(e -> e.getKey() + " " + e.getValue())
                            .collect(java.util.stream.Collectors.joining("; ")));
            System.out.printf("Code cache (the JIT's compiled code): %.1f MB used before the bare handler's steady run, "
                    + "%.1f MB after it, %.1f MB at the end, of %.0f MB reserved (JVM flag UseCodeCacheFlushing: %s; with "
                    + "it on, the JVM removes compiled code that was not used for a while, such as the server's while "
                    + "the bare handler's run compiled other code).%n%n",
                    codeBefore / 1e6, codeAfterBare / 1e6, codeCacheUsed() / 1e6, codeCacheReserved() / 1e6,
                    vmOption("UseCodeCacheFlushing"));
            System.out.printf("Where the steady run's slow acknowledgements came from (collector: %s; GC pauses are the "
                    + "whole JVM's: server, stub and load generator, placed within %.1f ms; a stall: a thread of normal "
                    + "priority that wakes every ms woke more than %d ms late, whatever the cause):%n%n",
                    collectors(steadyPauses), gc.uncertaintyMillis(), Stalls.LATE_NANOS / 1_000_000);
            System.out.println("- bare Javalin: " + tail(baseSteady, basePauses, baseStalls));
            System.out.println("- agentx serve: " + tail(appSteady, steadyPauses, steadyStalls));
            System.out.println("- the machine during agentx's steady run and its drain: "
                    + steadyBusy.since(firstDue(appSteady)).machine()
                    + " (stolen: the part of busy in which the hypervisor gave our cores to other guests)");
            System.out.println();
            System.out.printf("CPU time per delivery during the steady run and its drain, by thread (and on "
                    + "PostgreSQL by the database's processes, and the machine's kernel threads; %d deliveries; "
                    + "2 cores give 10 ms per delivery at 200/s):%n%n", steadyCount);
            System.out.println("| threads | what they are | CPU ms per delivery |");
            System.out.println("| --- | --- | --- |");
            for (Map.Entry<String, Long> c : steadyCpu.entrySet()) {
                System.out.printf("| %s | %s | %.2f |%n", c.getKey(), CpuByThread.describe(c.getKey()),
                        c.getValue() / 1e6 / steadyCount);
            }
            if (steadyDbCpu.isPresent()) {
                for (Map.Entry<String, Long> c : steadyDbCpu.get().entrySet()) {
                    String what = switch (c.getKey()) {
                        case "backend" -> "the database's processes serving the servers' connections";
                        case DatabaseCpu.ENDED -> "the database's processes that ended during the run, once reaped";
                        default -> "the database's own process";
                    };
                    System.out.printf("| PostgreSQL: %s | %s | %.2f |%n", c.getKey(), what, c.getValue() / 1e6 / steadyCount);
                }
            }
            for (Map.Entry<String, Long> c : steadyKernel.entrySet()) {
                System.out.printf("| kernel: %s | the machine's kernel threads%s | %.2f |%n", c.getKey(),
                        c.getKey().equals("kdamond") ? " (the memory monitor's page-out of cold memory)" : "",
                        c.getValue() / 1e6 / steadyCount);
            }
            System.out.println();
            if (!switches.isEmpty()) {
                System.out.printf("Context switches per delivery during the same time, by thread (the kernel's "
                        + "counts; names cut at 15 characters; voluntary: the thread waited, involuntary: its core was "
                        + "taken):%n%n");
                System.out.println("| threads | what they are | voluntary | involuntary |");
                System.out.println("| --- | --- | --- | --- |");
                long[] all = new long[2];
                for (Map.Entry<String, long[]> c : switches.entrySet()) {
                    all[0] += c.getValue()[0];
                    all[1] += c.getValue()[1];
                    if (c.getValue()[0] + c.getValue()[1] >= steadyCount / 10) {
                        System.out.printf("| %s | %s | %.1f | %.1f |%n", c.getKey(), CpuByThread.describe(c.getKey()),
                                c.getValue()[0] / (double) steadyCount, c.getValue()[1] / (double) steadyCount);
                    }
                }
                System.out.printf("| all threads of the JVM | | %.1f | %.1f |%n%n", all[0] / (double) steadyCount,
                        all[1] / (double) steadyCount);
            }
            if (!coreWaits.isEmpty()) {
                System.out.printf("Waiting for a core per delivery during the same time, by thread (the kernel's "
                        + "run-queue time: ready to run while others ran; on PostgreSQL the backend that inserts the "
                        + "deliveries a 202 waits for apart from the others; groups of 0.01 ms or more):%n%n");
                System.out.println("| threads | what they are | ms waiting for a core per delivery |");
                System.out.println("| --- | --- | --- |");
                for (Map.Entry<String, Long> c : coreWaits.entrySet()) {
                    if (c.getValue() / 1e6 / steadyCount >= 0.01) {
                        System.out.printf("| %s | %s | %.2f |%n", c.getKey(), c.getKey().startsWith("PostgreSQL")
                                ? "the database's processes" : CpuByThread.describe(c.getKey()),
                                c.getValue() / 1e6 / steadyCount);
                    }
                }
                System.out.println();
            }
            if (steadyDbWork != null) {
                System.out.printf("Database work per delivery during the steady run and its drain (from "
                        + "pg_stat_statements and pg_stat_database; statements sent together in one round trip count "
                        + "one each): %.1f statements in %.2f transactions, %.1f plans made for them (a statement prepared "
                        + "on the server runs on its plan without one), %.2f ms planning and %.2f ms executing them, "
                        + "%.0f bytes of WAL written by them; the statements run at least once per 10 deliveries "
                        + "or executing for 0.01 ms per delivery or more:%n%n",
                        steadyDbWork.calls() / (double) steadyCount, steadyDbWork.transactions() / (double) steadyCount,
                        steadyDbWork.plans() / (double) steadyCount, steadyDbWork.planMillis() / steadyCount,
                        steadyDbWork.execMillis() / steadyCount, steadyDbWork.walBytes() / (double) steadyCount);
                System.out.println("| per delivery | plans | ms planning | ms executing | WAL bytes | statement |");
                System.out.println("| --- | --- | --- | --- | --- | --- |");
                for (DatabaseWork.Statement st : steadyDbWork.statements()) {
                    if (st.calls() * 10 >= steadyCount || st.execMillis() / steadyCount >= 0.01) {
                        String text = st.text().length() > 110 ? st.text().substring(0, 110) + " ..." : st.text();
                        System.out.printf("| %.2f | %.2f | %.3f | %.3f | %.0f | `%s` |%n",
                                st.calls() / (double) steadyCount, st.plans() / (double) steadyCount,
                                st.planMillis() / steadyCount, st.execMillis() / steadyCount, st.walBytes() / (double) steadyCount,
                                text.replace("|", "\\|"));
                    }
                }
                System.out.println();
            }
            java.util.Optional<DiskStats> disk0 = probes.disk();
            java.util.Optional<DiskStats> disk1 = measured.disk();
            if (disk0.isPresent() && disk1.isPresent()) {
                double perFlush = disk1.get().millisPerFlush(disk0.get());
                System.out.printf("Disk requests per delivery during the steady run and its drain (%s, the whole "
                        + "device's counters; counts, so they do not vary with the host's speed): %s; the device took "
                        + "%s per flush on average.%n%n", disk1.get().device(), disk1.get().perDelivery(disk0.get(),
                        steadyCount), perFlush < 0 ? "?" : String.format("%.2f ms", perFlush));
            }
            // from the 202s' headers, not a scrape of the metrics: a scrape reads every open
            // clarification's ledger (its gauges), and the warm-up left tens of thousands open, which
            // no delivery of the run reads; the headers cost the runs nothing and cover both replicas
            double[] queued = meanQueueing(appSteady);
            System.out.printf("Queueing a delivery durably before its 202 (%s, what `%s` observes, from "
                    + "each 202's Server-Timing header) during the steady run: %.2f ms on average over %.0f "
                    + "deliveries.%n%n", queueing, ServerMetrics.WEBHOOK_QUEUE, queued[0], queued[1]);
            System.out.println(serverTimes(appSteady));
            Map<String, Long> unanswered = github.unanswered();
            System.out.printf("Requests of the servers to the GitHub stub that it had no answer for (a 404 each): %s.%n%n",
                    unanswered.isEmpty() ? "none" : unanswered);
            if (replica != null) {
                System.out.printf("Deliveries of the steady run that found an earlier delivery of their issue held by "
                        + "the other replica and waited for its done mark (`%s`, both replicas): %.0f of %d.%n%n",
                        ServerMetrics.DELIVERY_WAITS, waited, steadyCount);
            }
        } finally {
            if (gc != null) {
                gc.close();
            }
            bare.stop();
            mode.close();
            if (replica != null) {
                replica.close();
            }
            rig.close();
            github.close();
            if (pg != null) {
                pg.close();
            }
        }
    }

    /**
     * {@code n} deliveries: clarifications from question to resolution, each on an issue of its own. The engineer asks the architect; {@link #LAG}
     * questions later the architect answers it, and {@link #LAG} answers after that the engineer
     * resolves it; the last ones are answered and resolved at the end. So the repository has at most
     * {@code 2 * LAG} clarifications open while the list is worked through and at most two after it, as a
     * repository with a steady flow of them would, and the monitor pass after each delivery reads
     * that many.
     */
    static List<Delivery> deliveries(GitHubRig rig, AtomicInteger issues, int n) {
        int questions = (n + 2) / 3;
        int first = issues.get() + 1;
        issues.addAndGet(questions);
        List<Delivery> out = new ArrayList<>(3 * questions);
        for (int i = 0; i < questions + 2 * LAG; i++) {
            if (i < questions) {
                out.add(delivery(rig, first + i, 'q', "eng", "/clarify @architect Question " + (first + i) + "?"));
            }
            int answered = i - LAG;
            if (answered >= 0 && answered < questions) {
                out.add(delivery(rig, first + answered, 'a', "arch", "/clarify answer CLR-" + (first + answered)
                        + "-001 Answer " + (first + answered) + "."));
            }
            int resolved = i - 2 * LAG;
            if (resolved >= 0 && resolved < questions) {
                out.add(delivery(rig, first + resolved, 'r', "eng", "/clarify resolve CLR-" + (first + resolved)
                        + "-001"));
            }
        }
        return new ArrayList<>(out.subList(0, n)); // up to two of the last resolutions left out
    }

    private static Delivery delivery(GitHubRig rig, int issue, char step, String login, String command) {
        byte[] body = rig.bytes(rig.comment(login, issue, command));
        return new Delivery("bench-" + issue + "-" + step, body, SignatureVerifier.sign(GitHubRig.SECRET, body));
    }

    /** {@code url}: one server's, or the replicas' separated by commas (each delivery goes to one, by its id). */
    private static URI target(String url, Delivery d) {
        String[] urls = url.split(",");
        return URI.create(urls[Math.floorMod(d.id().hashCode(), urls.length)]);
    }

    static byte[] request(URI uri, Delivery d) {
        Map<String, String> headers = new LinkedHashMap<>();
        headers.put("Content-Type", "application/json");
        headers.put("X-GitHub-Event", "issue_comment");
        headers.put("X-GitHub-Delivery", d.id());
        headers.put("X-Hub-Signature-256", d.signature());
        return SocketLoad.request(uri, headers, d.body());
    }

    private static boolean ok(int status) {
        return status == 200 || status == 202;
    }

    /** A steady rate; latency counts from the intended send time, so a stall is not hidden. */
    Run openLoop(String url, List<Delivery> ds, int rate, Map<String, Long> sentAt) {
        List<Long> lat = Collections.synchronizedList(new ArrayList<>());
        List<long[]> timed = Collections.synchronizedList(new ArrayList<>());
        Map<Integer, Integer> failures = new ConcurrentHashMap<>();
        java.util.concurrent.CountDownLatch done = new java.util.concurrent.CountDownLatch(ds.size());
        long start = System.nanoTime();
        long interval = 1_000_000_000L / rate;
        for (int i = 0; i < ds.size(); i++) {
            long due = start + i * interval;
            long wait;
            while ((wait = due - System.nanoTime()) > 0) {
                LockSupport.parkNanos(wait); // pacing the load generator
            }
            Delivery d = ds.get(i);
            if (sentAt != null) {
                sentAt.put(d.id(), due);
            }
            senders.execute(() -> {
                try {
                    URI uri = target(url, d);
                    SocketLoad.Response r = load.send(uri, request(uri, d));
                    if (!ok(r.status())) {
                        failures.merge(r.status(), 1, Integer::sum);
                    } else {
                        long took = System.nanoTime() - due;
                        lat.add(took);
                        timed.add(new long[] {due, took, serverNanos(r.serverTiming(), "queue"),
                                serverNanos(r.serverTiming(), "handler")});
                    }
                } catch (Exception e) {
                    failures.merge(0, 1, Integer::sum);
                } finally {
                    done.countDown();
                }
            });
        }
        try {
            done.await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
        double took = (System.nanoTime() - start) / 1e9;
        return new Run(lat, new java.util.TreeMap<>(failures), ds.size() / took, timed);
    }

    /** As fast as {@code clients} concurrent senders go. */
    private Run closedLoop(String url, List<Delivery> ds, int clients) {
        List<Long> lat = Collections.synchronizedList(new ArrayList<>());
        List<long[]> timed = Collections.synchronizedList(new ArrayList<>());
        Map<Integer, Integer> failures = new ConcurrentHashMap<>();
        AtomicInteger next = new AtomicInteger();
        if (clientPool == null) {
            clientPool = Executors.newFixedThreadPool(clients, named("bench-load-client"));
        }
        long start = System.nanoTime();
        List<CompletableFuture<Void>> workers = new ArrayList<>();
        for (int c = 0; c < clients; c++) {
            workers.add(CompletableFuture.runAsync(() -> {
                int i;
                while ((i = next.getAndIncrement()) < ds.size()) {
                    long t0 = System.nanoTime();
                    try {
                        URI uri = target(url, ds.get(i));
                        SocketLoad.Response r = load.send(uri, request(uri, ds.get(i)));
                        int status = r.status();
                        if (ok(status)) {
                            long took = System.nanoTime() - t0;
                            lat.add(took);
                            timed.add(new long[] {t0, took, serverNanos(r.serverTiming(), "queue"),
                                    serverNanos(r.serverTiming(), "handler")});
                        } else {
                            failures.merge(status, 1, Integer::sum);
                        }
                    } catch (Exception e) {
                        failures.merge(0, 1, Integer::sum);
                    }
                }
            }, clientPool));
        }
        CompletableFuture.allOf(workers.toArray(CompletableFuture[]::new)).join();
        double took = (System.nanoTime() - start) / 1e9;
        return new Run(lat, new java.util.TreeMap<>(failures), ds.size() / took, timed);
    }

    /**
     * What the bench reads of the machine, this JVM and the database around agentx's steady run: the threads' CPU,
     * the kernel's threads, the database's processes, the disk, context switches, waits for a core, the database's
     * statements and WAL, and the deliveries that waited for the other replica.
     */
    private record Probes(Path dataDir, double waitsBefore, Map<String, Long> cpu, java.util.Optional<Map<String, Long>> kernel,
                          java.util.Optional<Map<String, Long>> dbCpu, java.util.Optional<DiskStats> disk,
                          Map<String, long[]> switches, Path pgData, java.util.Set<Long> ackBackends,
                          Map<String, Long> coreWaits, DatabaseWork dbWork, WalActivity wal) {

        /** What changed between {@link #start} and {@link #finish}. */
        record Measured(Map<String, Long> cpu, Map<String, Long> kernel, java.util.Optional<Map<String, Long>> dbCpu,
                        java.util.Optional<DiskStats> disk, Map<String, long[]> switches, Map<String, Long> coreWaits,
                        DatabaseWork.Result dbWork, String wal, double waited) {
        }

        static Probes start(GitHubMode mode, Path work, io.zonky.test.db.postgres.embedded.EmbeddedPostgres pg)
                throws java.sql.SQLException {
            Path dataDir = work.resolve("data");
            Path pgData = pg == null ? null : work.resolve("pgdata");
            double waitsBefore = waits(mode);
            Map<String, Long> cpu = CpuByThread.snapshot();
            java.util.Optional<Map<String, Long>> kernel = KernelThreads.snapshot();
            java.util.Optional<Map<String, Long>> dbCpu = pg == null ? java.util.Optional.empty()
                    : DatabaseCpu.snapshot(pgData);
            java.util.Optional<DiskStats> disk = DiskStats.of(dataDir);
            Map<String, long[]> switches = ContextSwitches.snapshot();
            java.util.Set<Long> ackBackends = pg == null ? java.util.Set.of()
                    : CoreWaits.ackBackends(pg.getPostgresDatabase());
            Map<String, Long> coreWaits = CoreWaits.snapshot(pgData, ackBackends);
            DatabaseWork dbWork = pg == null ? null : DatabaseWork.start(pg.getPostgresDatabase());
            WalActivity wal = pg == null ? null : WalActivity.start(pg.getPostgresDatabase());
            return new Probes(dataDir, waitsBefore, cpu, kernel, dbCpu, disk, switches, pgData, ackBackends, coreWaits, dbWork, wal);
        }

        Measured finish(GitHubMode mode, int deliveries) throws java.sql.SQLException {
            Map<String, Long> cpuNow = CpuByThread.since(cpu);
            Map<String, Long> kernelNow = kernel.flatMap(before -> KernelThreads.snapshot()
                    .map(now -> KernelThreads.since(before, now))).orElse(Map.of());
            java.util.Optional<Map<String, Long>> dbCpuNow = dbCpu.flatMap(before ->
                    DatabaseCpu.snapshot(pgData).map(now -> DatabaseCpu.since(before, now)));
            java.util.Optional<DiskStats> diskNow = DiskStats.of(dataDir);
            Map<String, long[]> switchesNow = ContextSwitches.since(switches);
            Map<String, Long> coreWaitsNow = CoreWaits.since(coreWaits, CoreWaits.snapshot(pgData, ackBackends));
            DatabaseWork.Result dbWorkNow = dbWork == null ? null : dbWork.since();
            String walNow = wal == null ? null : wal.since(deliveries);
            return new Measured(cpuNow, kernelNow, dbCpuNow, diskNow, switchesNow, coreWaitsNow, dbWorkNow, walNow,
                    waits(mode) - waitsBefore);
        }
    }

    /** Waits until {@code mode} (and the second replica, if any) has processed and sent everything. */
    /** The waits for another replica's delivery counted so far, by both replicas ({@link ServerMetrics#DELIVERY_WAITS}). */
    private static double waits(GitHubMode mode) {
        return replica == null ? 0 : mode.metrics().counterValue(ServerMetrics.DELIVERY_WAITS)
                + replica.metrics().counterValue(ServerMetrics.DELIVERY_WAITS);
    }

    private static void drain(GitHubMode mode, Duration limit) {
        long deadline = System.nanoTime() + limit.toNanos();
        while (mode.pendingDeliveries() > 0 || mode.pendingEffects() > 0
                || (replica != null && (replica.pendingDeliveries() > 0 || replica.pendingEffects() > 0))) {
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("the worker did not catch up within " + limit + ": " + stuck(mode));
            }
            LockSupport.parkNanos(Duration.ofMillis(20).toNanos());
        }
    }

    /** The database of a run on PostgreSQL, for {@link #stuck}; null on files. */
    private static javax.sql.DataSource database;

    /**
     * What was left when a drain gave up: each server's pending deliveries and effects, the
     * queue's rows and the effects' unfinished claims on PostgreSQL, and the stacks of the
     * servers' worker and sender threads (a lane that waits for something shows where).
     */
    private static String stuck(GitHubMode mode) {
        StringBuilder b = new StringBuilder();
        b.append("server 1: ").append(mode.pendingDeliveries()).append(" deliveries, ").append(mode.pendingEffects())
                .append(" effects pending");
        if (replica != null) {
            b.append("; server 2: ").append(replica.pendingDeliveries()).append(" deliveries, ")
                    .append(replica.pendingEffects()).append(" effects pending");
        }
        if (database != null) {
            try (java.sql.Connection c = database.getConnection(); java.sql.Statement st = c.createStatement()) {
                for (String q : List.of("SELECT d.seq, d.replica, d.attempts, d.not_before, d.order_key, h.id "
                                + "FROM delivery_queue d JOIN deliveries h ON h.seq = d.seq ORDER BY d.seq LIMIT 20",
                        "SELECT hash, replica, claimed_at, after, done, effect IS NULL FROM effect_claims "
                                + "WHERE NOT done ORDER BY claimed_at LIMIT 20",
                        "SELECT replica, seen_at FROM replica_beats")) {
                    b.append("\n").append(q).append(':');
                    try (java.sql.ResultSet r = st.executeQuery(q)) {
                        int columns = r.getMetaData().getColumnCount();
                        while (r.next()) {
                            b.append("\n  ");
                            for (int i = 1; i <= columns; i++) {
                                b.append(i > 1 ? " | " : "").append(r.getString(i));
                            }
                        }
                    }
                }
            } catch (java.sql.SQLException e) {
                b.append("\n(the database could not be read: ").append(e.getMessage()).append(')');
            }
        }
        Thread.getAllStackTraces().forEach((t, stack) -> {
            if (t.getName().startsWith("agentx-")) {
                b.append("\n").append(t.getName()).append(' ').append(t.getState());
                for (int i = 0; i < Math.min(stack.length, 12); i++) {
                    b.append("\n    at ").append(stack[i]);
                }
            }
        });
        return b.toString();
    }

    static long firstDue(Run r) {
        long first = Long.MAX_VALUE;
        synchronized (r.timed()) {
            for (long[] t : r.timed()) {
                first = Math.min(first, t[0]);
            }
        }
        return first;
    }

    private static List<java.lang.management.MemoryPoolMXBean> codeHeaps() {
        return java.lang.management.ManagementFactory.getMemoryPoolMXBeans().stream()
                .filter(p -> p.getName().startsWith("CodeHeap") || p.getName().equals("Code Cache")).toList();
    }

    private static long codeCacheUsed() {
        return codeHeaps().stream().mapToLong(p -> p.getUsage().getUsed()).sum();
    }

    private static long codeCacheReserved() {
        return codeHeaps().stream().mapToLong(p -> p.getUsage().getMax()).sum();
    }

    private static String vmOption(String name) {
        try {
            return java.lang.management.ManagementFactory.getPlatformMXBean(com.sun.management.HotSpotDiagnosticMXBean.class)
                    .getVMOption(name).getValue();
        } catch (IllegalArgumentException e) {
            return "unknown";
        }
    }

    private static String collectors(List<GcPauses.Pause> pauses) {
        java.util.Set<String> names = new java.util.TreeSet<>();
        for (GcPauses.Pause p : pauses) {
            names.add(p.collector());
        }
        return names.isEmpty() ? "no collection" : String.join(", ", names);
    }

    /** The mean of the queueing in the Server-Timing headers of {@code r}'s 202s, in ms, and how many had one. */
    static double[] meanQueueing(Run r) {
        long sum = 0;
        int n = 0;
        synchronized (r.timed()) {
            for (long[] t : r.timed()) {
                if (t.length > 2 && t[2] >= 0) {
                    sum += t[2];
                    n++;
                }
            }
        }
        return new double[] {n == 0 ? 0 : sum / 1e6 / n, n};
    }

    /** The distribution of the 202s' Server-Timing durations in {@code r}, as a sentence. */
    static String serverTimes(Run r) {
        List<Long> queue = new ArrayList<>();
        List<Long> handler = new ArrayList<>();
        synchronized (r.timed()) {
            for (long[] t : r.timed()) {
                if (t.length > 3 && t[2] >= 0 && t[3] >= 0) {
                    queue.add(t[2]);
                    handler.add(t[3]);
                }
            }
        }
        if (queue.isEmpty()) {
            return "";
        }
        Stats q = Stats.ofNanos(queue);
        Stats h = Stats.ofNanos(handler);
        return String.format(java.util.Locale.ROOT, "Per 202, from its Server-Timing header (%d acknowledgements): %s "
                + "p50 %.2f, p99 %.2f, max %.2f ms; the whole handler p50 %.2f, p99 %.2f, max %.2f "
                + "ms.%n", queue.size(), queueing, q.p50(), q.p99(), q.max(), h.p50(), h.p99(), h.max());
    }

    /** The duration of metric {@code name} in a Server-Timing header, in nanoseconds; -1 if absent. */
    static long serverNanos(String header, String name) {
        for (String metric : header.split(",")) {
            String[] parts = metric.strip().split(";");
            if (parts[0].equals(name)) {
                for (String p : parts) {
                    if (p.startsWith("dur=")) {
                        return Math.round(Double.parseDouble(p.substring(4)) * 1e6);
                    }
                }
            }
        }
        return -1;
    }

    /**
     * Acknowledgements over the goal's 10 ms in an open-loop run, and how many overlapped a GC pause
     * or else another stall of the JVM (see {@link Stalls}); with the server's Server-Timing, how many
     * spent more than half of their time queueing the delivery durably (the inbox's append and
     * fdatasync, or on PostgreSQL the insert and commit of its row), and the share of their time the
     * handler itself took (the rest passed before or after it).
     */
    static String tail(Run r, List<GcPauses.Pause> pauses, List<Stalls.Stall> stalls) {
        long slow = 10_000_000L;
        long from = Long.MAX_VALUE;
        long to = Long.MIN_VALUE;
        List<long[]> acks;
        synchronized (r.timed()) {
            acks = new ArrayList<>(r.timed());
        }
        for (long[] a : acks) {
            from = Math.min(from, a[0]);
            to = Math.max(to, a[0] + a[1]);
        }
        acks.sort((x, y) -> Long.compare(y[1], x[1]));
        int over = 0;
        int inGc = 0;
        int inStall = 0;
        int timedSlow = 0;
        int disk = 0;
        long slowTotal = 0;
        long slowHandler = 0;
        StringBuilder slowest = new StringBuilder();
        for (long[] a : acks) {
            if (a[1] <= slow) {
                break;
            }
            over++;
            long end = a[0] + a[1];
            boolean gc = pauses.stream().anyMatch(p -> p.overlaps(a[0], end));
            boolean stall = !gc && stalls.stream().anyMatch(s -> s.overlaps(a[0], end));
            inGc += gc ? 1 : 0;
            inStall += stall ? 1 : 0;
            boolean timed = a.length > 3 && a[2] >= 0 && a[3] >= 0;
            if (timed) {
                timedSlow++;
                disk += a[2] * 2 > a[1] ? 1 : 0;
                slowTotal += a[1];
                slowHandler += a[3];
            }
            if (over <= 3) {
                slowest.append(String.format("%s%.1f ms at %.2f s (%s%s)", over > 1 ? ", " : "", a[1] / 1e6,
                        (a[0] - from) / 1e9, gc ? "GC" : stall ? "stall" : "neither",
                        timed ? String.format("; handler %.1f ms, of it queueing %.1f ms", a[3] / 1e6,
                                a[2] / 1e6) : ""));
            }
        }
        String server = timedSlow == 0 ? "" : String.format("; %d of them waited mostly for " + queueing
                + " (over half their time), and the handler took %.0f%% of their time in all (the rest "
                + "passed before or after it)", disk, 100.0 * slowHandler / slowTotal);
        return String.format("%s; %s; %d of %d acks over 10 ms, %d of them during a GC pause, %d during another stall%s%s",
                during("GC pauses during the run", pauses, from, to), during("stalls", stalls, from, to), over,
                acks.size(), inGc, inStall, server, over == 0 ? "" : "; slowest: " + slowest);
    }

    /** e.g. {@code 5 GC pauses during the run, 23 ms in all, longest 6.0 ms}: those of {@code all} within from..to. */
    private static String during(String what, List<? extends Interval> all, long from, long to) {
        int n = 0;
        double total = 0;
        double longest = 0;
        for (Interval i : all) {
            if (i.overlaps(from, to)) {
                n++;
                total += i.millis();
                longest = Math.max(longest, i.millis());
            }
        }
        return String.format("%d %s, %.0f ms in all, longest %.1f ms", n, what, total, longest);
    }

    /** Where the server's data dir is: path, file system type and device, e.g. {@code `/tmp/x/data` on ext4 (/dev/vda)}. */
    static String storage(Path data) {
        try {
            java.nio.file.FileStore store = java.nio.file.Files.getFileStore(data);
            return "`" + data.toAbsolutePath() + "` on " + store.type() + " (" + store.name() + ")";
        } catch (java.io.IOException e) {
            return "`" + data.toAbsolutePath() + "` (file system unknown: " + e.getMessage() + ")";
        }
    }

    private static String ratio(double a, double b) {
        return b == 0 ? "-" : String.format("%.1fx", a / b);
    }

    /** Where the repositories' state is, for the headings: empty for the files of the data dir. */
    private static String store = "";
    /** The second replica, with -Dagentx.bench.replicas=2. */
    private static GitHubMode replica;
    private static String storeNote = "";
    /** The goals of bench/README.md: ack p99 and end-to-end p99 at 200/s, in ms (files; PostgreSQL sets its own). */
    private static int ackGoal = 10;
    private static int endToEndGoal = 50;

    /**
     * The line {@code bench/run} gathers into its summary table: the steady run's ack p99 beside the
     * bare handler's of the same run, and the goal (files: at most 3x the bare handler; PostgreSQL:
     * under 15 ms).
     */
    private static void summary(int rate, double p99, double bareP99) {
        boolean postgres = Boolean.getBoolean("agentx.bench.postgres");
        String what = !postgres ? "files" : Integer.getInteger("agentx.bench.replicas", 1) == 2
                ? "PostgreSQL, two replicas" : "PostgreSQL";
        System.out.printf(java.util.Locale.ROOT, "SUMMARY|webhook ack p99 at %d/s, %s|%.2f ms|%.2f ms|%s%n%n", rate, what,
                p99, bareP99, postgres ? "<" + ackGoal + " ms" : "<=3x");
    }

    /**
     * The summary rows of the saturation and end-to-end figures, whose goal is to stay where the
     * build before the performance work had them on this machine (files 5,775 deliveries/s and
     * 12.4 ms at 200/s; PostgreSQL 2,792/s and 40 ms); two replicas keep the documented goals. And
     * the rate at which the saturation run's burst was acknowledged and worked off, without a goal:
     * the acknowledgements' rate leaves out the worker, which shares the cores and the disk with them.
     */
    private static void throughputSummary(int rate, double saturation, double endToEndP99, double burstPerSecond) {
        boolean postgres = Boolean.getBoolean("agentx.bench.postgres");
        boolean replicas = Integer.getInteger("agentx.bench.replicas", 1) == 2;
        String what = !postgres ? "files" : replicas ? "PostgreSQL, two replicas" : "PostgreSQL";
        String satGoal = !postgres ? ">=5775 deliveries/s" : replicas ? ">=1000 deliveries/s" : ">=2792 deliveries/s";
        String e2eGoal = !postgres ? "<=12.4 ms" : replicas ? "<100 ms" : "<=40 ms";
        System.out.printf(java.util.Locale.ROOT, "SUMMARY|webhook saturation, %s|%.0f deliveries/s|-|%s%n", what,
                saturation, satGoal);
        System.out.printf(java.util.Locale.ROOT, "SUMMARY|webhook end to end p99 at %d/s, %s|%.1f ms|-|%s%n", rate,
                what, endToEndP99, e2eGoal);
        System.out.printf(java.util.Locale.ROOT, "SUMMARY|webhook saturation's burst acknowledged and worked off, %s|%.0f "
                + "deliveries/s|-|-%n", what, burstPerSecond);
    }

    /** Whether this JVM may raise a thread's priority (CAP_SYS_NICE among its effective capabilities, Linux). */
    private static boolean mayRaisePriority() {
        try {
            for (String line : java.nio.file.Files.readAllLines(Path.of("/proc/self/status"))) {
                if (line.startsWith("CapEff:")) {
                    return (Long.parseUnsignedLong(line.substring(7).strip(), 16) & (1L << 23)) != 0; // CAP_SYS_NICE
                }
            }
        } catch (java.io.IOException | NumberFormatException e) {
            // not Linux: the policy's effect is the platform's
        }
        return false;
    }

    private static void report(Warmup warmup, long measuredJit, int rate, int seconds, int saturation, int clients, Run baseSteady, Run appSteady,
                               Run baseSat, Run appSat, EndToEnd e2e, int half, Run appHalf, EndToEnd halfE2e,
                               double drainSeconds, String storage) {
        Stats bs = Stats.ofNanos(baseSteady.ackNanos());
        Stats as = Stats.ofNanos(appSteady.ackNanos());
        Stats bq = Stats.ofNanos(baseSat.ackNanos());
        Stats aq = Stats.ofNanos(appSat.ackNanos());
        System.out.println("## Webhook acknowledgement: `agentx serve` vs a bare Javalin handler" + store);
        System.out.println();
        if (!storeNote.isEmpty()) {
            System.out.println(storeNote);
            System.out.println();
        }
        System.out.printf("Signed `issue_comment` deliveries: clarifications on issues of their own, each asked "
                + "(`/clarify @architect`), answered %d questions later and resolved %d answers after that, so at "
                + "most %d are open at a time; the monitor pass after every delivery, as `agentx serve` runs it. "
                + "GitHub API: a plain Javalin stub in the same JVM; load generator: HTTP/1.1 over plain kept-alive "
                + "sockets, in the same JVM. Steady: %d/s for %d s, latency from the intended send time. Saturation: %d "
                + "deliveries from %d concurrent clients. Goals: ack p99 < %d ms at 200/s; >= 1,000 deliveries/s.%n%n",
                LAG, LAG, 2 * LAG, rate, seconds, saturation, clients, ackGoal);
        List<String> flags = java.lang.management.ManagementFactory.getRuntimeMXBean().getInputArguments().stream()
                .filter(a -> a.startsWith("-XX:")).toList();
        String user = System.getProperty("user.name");
        System.out.printf("JVM flags: `%s`; user: %s%s.%n%n", String.join(" ", flags), user,
                !flags.contains("-XX:ThreadPriorityPolicy=1") ? ""
                        : mayRaisePriority()
                        ? " (with the power to raise priorities, CAP_SYS_NICE: the priority policy also raises the JVM's"
                                + " own threads, the JIT's compilers and the GC, to nice -4, above the webhook's threads,"
                                + " which no recipe of deploy/ allows)"
                        : " (without the power to raise priorities, as the recipes of deploy/ run it under a user of"
                                + " their own: only the worker's threads change, to nice 4; as root, bench/webhook-bench"
                                + " runs the JVM without CAP_SYS_NICE)");
        System.out.printf("Data dir: %s (`bench/run` makes its work dir under `$TMPDIR`: point that at the disk "
                + "`AGENTX_DATA_DIR` would use; the disk's sync latency weighs on every figure below).%n%n", storage);
        warmup.print(measuredJit);
        System.out.println("| run | server | deliveries | errors | deliveries/s | p50 | p90 | p99 | max |");
        System.out.println("| --- | --- | --- | --- | --- | --- | --- | --- | --- |");
        System.out.printf("| steady %d/s | bare Javalin | %d | %d | %.0f | %s |%n", rate, bs.n(), baseSteady.errors(),
                baseSteady.perSecond(), bs.row());
        System.out.printf("| steady %d/s | agentx serve | %d | %d | %.0f | %s |%n", rate, as.n(), appSteady.errors(),
                appSteady.perSecond(), as.row());
        System.out.printf("| saturation | bare Javalin | %d | %d | %.0f | %s |%n", bq.n(), baseSat.errors(),
                baseSat.perSecond(), bq.row());
        System.out.printf("| saturation | agentx serve | %d | %d | %.0f | %s |%n", aq.n(), appSat.errors(),
                appSat.perSecond(), aq.row());
        System.out.println();
        System.out.printf("Ratios agentx/bare: steady p50 %s, p99 %s; saturation throughput %s, p99 %s.%n%n",
                ratio(as.p50(), bs.p50()), ratio(as.p99(), bs.p99()), ratio(appSat.perSecond(), baseSat.perSecond()),
                ratio(aq.p99(), bq.p99()));
        String saturated = serverTimes(appSat);
        if (!saturated.isEmpty()) {
            System.out.printf("In agentx's saturation run (the rest of an acknowledgement's time passed outside the "
                    + "handler: in the load generator, the sockets and waiting for a core): %s%n",
                    Character.toLowerCase(saturated.charAt(0)) + saturated.substring(1));
        }
        summary(rate, as.p99(), bs.p99());
        System.out.println("## Webhook end to end: delivery sent to comment POSTed to the stub" + store);
        System.out.println();
        // the run's rate counts every delivery sent, its latencies only the acknowledged ones
        int burst = appSat.ackNanos().size();
        double burstSeconds = (burst + appSat.errors()) / appSat.perSecond() + drainSeconds;
        System.out.printf(java.util.Locale.ROOT, "During the steady run (%d/s), and a second run at half that rate. Goal: p99 < %d ms at "
                + "200/s. After the saturation run the worker needed %.1f s to work off its backlog (inbox and outbox "
                + "empty): the burst of %d deliveries was acknowledged and worked off in %.1f s (%.0f deliveries/s "
                + "through the whole pipeline, each comment posted).%n%n", rate, endToEndGoal, drainSeconds, burst,
                burstSeconds, burst / burstSeconds);
        Stats ah = Stats.ofNanos(appHalf.ackNanos());
        System.out.println("| rate | deliveries | comments missing | p50 | p90 | p99 | max |");
        System.out.println("| --- | --- | --- | --- | --- | --- | --- |");
        System.out.printf("| %d/s | %d | %d | %s |%n", rate, e2e.stats().n(), e2e.missing(), e2e.stats().row());
        throughputSummary(rate, appSat.perSecond(), e2e.stats().p99(), burst / burstSeconds);
        System.out.printf("| %d/s | %d | %d | %s |%n%n", half, halfE2e.stats().n(), halfE2e.missing(),
                halfE2e.stats().row());
        System.out.printf("At %d/s the acknowledgement took p50 %.2f ms, p99 %.2f ms (%d errors).%n%n", half, ah.p50(),
                ah.p99(), appHalf.errors());
        System.out.printf("Seconds of the %d/s run with deliveries over 50 ms end to end (by send time; the longest "
                + "a 202 sent in that second waited for " + queueing + "; the share of both cores busy in it, all "
                + "processes of the machine, and of it the share the hypervisor gave to other guests; the disk's "
                + "flushes and the device's average time for them; and the JIT's compile time): %s.%n%n", rate,
                e2e.timeline(appSteady, 50, steadyBusy));
    }
}
