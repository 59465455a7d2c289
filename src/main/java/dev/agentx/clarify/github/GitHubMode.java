package dev.agentx.clarify.github;

import dev.agentx.clarify.app.LocalMode;
import dev.agentx.clarify.channel.AnswerChannel;
import dev.agentx.clarify.config.AgentxConfig;
import dev.agentx.clarify.config.ConfigLoader;
import dev.agentx.clarify.dashboard.Dashboard;
import dev.agentx.clarify.github.api.GitHubGateway;
import dev.agentx.clarify.github.api.Hub4jGateway;
import dev.agentx.clarify.github.auth.AppJwt;
import dev.agentx.clarify.github.dashboard.ServerDashboard;
import dev.agentx.clarify.github.handlers.Actors;
import dev.agentx.clarify.github.handlers.DeliveryHandler;
import dev.agentx.clarify.github.gate.PullRequestGate;
import dev.agentx.clarify.github.handlers.IssueMirror;
import dev.agentx.clarify.github.inbox.DeliveryProcessor;
import dev.agentx.clarify.github.inbox.Worker;
import dev.agentx.clarify.github.notify.Notifier;
import dev.agentx.clarify.github.mcp.McpSettings;
import dev.agentx.clarify.github.mcp.RemoteMcp;
import dev.agentx.clarify.github.ops.ManagementServer;
import dev.agentx.clarify.github.ops.Readiness;
import dev.agentx.clarify.github.outbox.Outbox;
import dev.agentx.clarify.github.recovery.DeliveryRecovery;
import dev.agentx.clarify.github.repoconfig.RepoConfigs;
import dev.agentx.clarify.github.webhook.SignatureVerifier;
import dev.agentx.clarify.github.webhook.WebhookServer;
import dev.agentx.clarify.lock.LockManager;
import dev.agentx.clarify.lock.LockSettings;
import dev.agentx.clarify.lock.ProcessIdentity;
import dev.agentx.clarify.lock.Sleeper;
import dev.agentx.clarify.metrics.ServerMetrics;
import dev.agentx.clarify.protocol.ClarificationRecord;
import dev.agentx.clarify.protocol.Ledger;
import dev.agentx.clarify.protocol.Status;
import dev.agentx.clarify.store.CommentLinks;
import dev.agentx.clarify.store.DashboardSessions;
import dev.agentx.clarify.store.DeliveryQueue;
import dev.agentx.clarify.store.Notes;
import dev.agentx.clarify.store.RecoveryPosition;
import dev.agentx.clarify.store.Replicas;
import dev.agentx.clarify.store.RepositoryState;
import dev.agentx.clarify.store.UnitOfWork;
import dev.agentx.clarify.store.copy.HandedOverNotes;
import dev.agentx.clarify.store.files.DataDirectory;
import dev.agentx.clarify.store.files.FileCommentLinks;
import dev.agentx.clarify.store.files.FileDeliveryQueue;
import dev.agentx.clarify.store.postgres.PostgresDatabase;
import dev.agentx.clarify.workflow.WorkflowCatalog;
import dev.agentx.clarify.protocol.ClarifyException;
import dev.agentx.clarify.protocol.ErrorCode;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.EnumMap;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The composition root of GitHub Mode ({@code agentx serve}): the webhook server, the
 * management server ({@code /metrics}, {@code /readyz}, {@code /healthz} on a port of its own), the durable
 * inbox and outbox under {@code $AGENTX_DATA_DIR}, the worker, and one Local Mode composition per
 * repository under {@code $AGENTX_DATA_DIR/repos/<id>/} (GitHub's id of it) sharing the server's config
 * ({@code $AGENTX_DATA_DIR/agentx.toml}), lock manager and clock. Each repository's ledgers,
 * statuses and events live in files there, or with {@code AGENTX_DATABASE_URL} in PostgreSQL.
 */
public final class GitHubMode implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(GitHubMode.class);
    /** The ports {@link #start} bound, -1 before. */
    private volatile int boundPort = -1;
    private volatile int boundManagementPort = -1;
    /** How often a repository's {@code .github/agentx.toml} is looked up (its sha; parsed when it changed). */
    public static final Duration REPO_CONFIG_CHECK = Duration.ofMinutes(1);

    /**
     * How to run. {@code synchronous}: each delivery is processed (and the outbox flushed) before
     * the webhook is answered, for tests; the server's mode is asynchronous. {@code channel}: one
     * channel for every role (tests), or null for each role's configured
     * channel. {@code environment}: the server's environment, handed to the answer channels (a
     * command agent's process, an http channel's {@code secret_env}) without the App's own
     * secrets ({@link GitHubSettings#forAgents}).
     */
    public record Options(boolean synchronous, RepositoryMonitor monitor, AnswerChannel channel, String host,
                          Map<String, String> environment) {
        public Options {
            environment = Map.copyOf(environment);
        }

        public Options(boolean synchronous, RepositoryMonitor monitor, AnswerChannel channel, String host) {
            this(synchronous, monitor, channel, host, System.getenv());
        }
    }

    private final GitHubSettings settings;
    private final Clock clock;
    private final AgentxConfig config;
    private final LockManager locks;
    private final AnswerChannel channel;
    /** What the answer channels get of the server's environment: all but the App's secrets. */
    private final Map<String, String> agentEnvironment;
    /** Each repository's composition, by GitHub's id of it: a rename keeps it, a reused name gets another. */
    private final Map<Long, LocalMode> repositories = new ConcurrentHashMap<>();
    /** The repositories by id: the name each was last seen with, and where the server may post. */
    private final RepositoryNames names;
    private final RepoConfigs repoConfigs;
    private final DeliveryQueue inbox;
    private final Outbox outbox;
    private final IssueMirror mirror;
    private final DeliveryHandler handler;
    /** Monitor passes left for when a repository's pace allows ({@link MonitorPacing}); null when synchronous. */
    private final ScheduledExecutorService pacedPasses;
    private final Worker worker;
    private final WebhookServer server;
    private final Readiness readiness;
    private final ManagementServer management;
    private final String host;
    private final ServerMetrics metrics;
    private final DeliveryRecovery recovery;
    /** /mcp: the tools for remote agents. */
    private final RemoteMcp remoteMcp;
    /** The signed-in dashboard at /dashboard; null when the App's OAuth credentials are not set. */
    private final ServerDashboard dashboard;
    private ScheduledExecutorService recoveryTicks;
    /** With a database: what was wrong with it at the last check (every second while serving, and at each readiness probe). */
    private volatile java.util.Optional<String> databaseProblem = java.util.Optional.empty();
    private ScheduledExecutorService databaseChecks;
    /** The repositories' state with AGENTX_DATABASE_URL; null: files under the data dir. */
    private final PostgresDatabase database;
    /** The other servers on the same database, if any: who processes a delivery, who sends an effect. */
    private final Replicas replicas;
    private final DataDirectory files;
    /** This server's name among replicas (kept in the data dir). */
    private final String replica;

    public GitHubMode(GitHubSettings settings, Clock clock, LockManager locks, GitHubGateway github, Options options) {
        this(settings, clock, locks, github, options, ServerMetrics.create());
    }

    /**
     * On files, the notes {@code agentx store copy} handed over beside a repository's ledgers (the
     * merge gate's record of pull requests, {@link HandedOverNotes}) go into the outbox's journal,
     * where the gate keeps them, before any delivery is worked on.
     */
    private void takeInHandedOverNotes() {
        for (String key : files.repositories()) {
            Path file = HandedOverNotes.fileIn(files.stateDirOf(key));
            int taken = HandedOverNotes.takeIn(file, outbox::note, outbox::sync);
            if (taken > 0) {
                LOG.info("took {} notes of the merge gate that agentx store copy handed over in {} into the outbox",
                        taken, file);
            }
        }
    }

    /**
     * {@code metrics}: the registry served at {@code /metrics}, shared with the lock manager and
     * gateway; the JVM's and the process's series are added to it here.
     */
    public GitHubMode(GitHubSettings settings, Clock clock, LockManager locks, GitHubGateway github, Options options,
                      ServerMetrics metrics) {
        this.metrics = metrics.withJvm();
        this.settings = settings;
        this.clock = clock;
        this.locks = locks;
        this.channel = options.channel();
        this.agentEnvironment = GitHubSettings.forAgents(options.environment());
        this.host = options.host();
        Path data = settings.dataDir();
        try {
            Files.createDirectories(data);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot create AGENTX_DATA_DIR " + data + ": " + e.getMessage(), e);
        }
        this.config = ConfigLoader.load(data.resolve("agentx.toml"));
        requireDefaultWorkflow(data, config.defaultWorkflow());
        this.files = new DataDirectory(data, locks);
        // worker lanes, outbox senders, the monitor, the dashboard and readiness each use a connection at a time
        this.database = settings.database() == null ? null : PostgresDatabase.open(settings.database(), 12,
                Duration.ofSeconds(10), PostgresDatabase.Schema.MIGRATE);
        String replica = files.replicaName();
        this.replica = replica;
        this.replicas = database == null ? Replicas.alone(replica) : database.replicas(replica, clock);
        // on PostgreSQL the acknowledgement is a row every replica sees, not a file on this one's disk
        // on PostgreSQL a delivery's changes are one transaction; the file store writes each on its own
        UnitOfWork unit = database == null ? UnitOfWork.NONE : database;
        this.inbox = database == null ? new FileDeliveryQueue(data.resolve("inbox"), clock)
                : database.deliveries(replica, clock);
        this.outbox = new Outbox(data.resolve("outbox"), github, clock, metrics, replicas, unit);
        if (database == null) {
            takeInHandedOverNotes();
        }
        // each effect goes to its repository's current name and installation, or waits while it may not be posted
        this.names = new RepositoryNames(database == null ? files.records() : database.records(), clock,
                database != null);
        outbox.follow(names);
        Actors actors = new Actors(config, github, clock);
        this.repoConfigs = new RepoConfigs(config,
                ref -> new WorkflowCatalog(ref.rootIn(data).resolve(".agentx").resolve("workflows")), github, clock,
                REPO_CONFIG_CHECK);
        Notes shared = database == null ? null : database.notes(clock);
        // each change's notifications ([[notify]]) are queued with its comment, linking to GitHub's web pages
        Notifier notifier = new Notifier(Notifier.webOf(settings.apiUrl()));
        this.mirror = database == null ? new IssueMirror(outbox, actors, clock, null, UnitOfWork.NONE, notifier)
                : new IssueMirror(outbox, actors, clock, shared, database, notifier);
        // received by this server (on PostgreSQL: by any replica on the same database)
        // where the passes stopped: on PostgreSQL shared, so the replica holding the lease goes on from any's pass
        this.recovery = new DeliveryRecovery(github, inbox::received,
                RecoveryPosition.ofServer(files.recoveryFile(), shared), clock, metrics,
                DeliveryRecovery.standardBackoff());
        RepositoryMonitor monitor = options.monitor();
        RepositoryMonitor timed = new CoalescingMonitor(repo -> {
            long start = System.nanoTime();
            try {
                return monitor.run(repo);
            } finally {
                metrics.monitorPass(start);
            }
        });
        MonitorPacing pacing;
        if (options.synchronous()) {
            pacing = MonitorPacing.inline();
            this.pacedPasses = null;
        } else {
            // at the worker lanes' priority: acknowledgements first
            this.pacedPasses = daemonScheduler("agentx-monitor", Thread.MIN_PRIORITY);
            pacing = new MonitorPacing(clock, MonitorPacing.PACE,
                    (delay, pass) -> pacedPasses.schedule(pass, delay.toMillis(), TimeUnit.MILLISECONDS));
        }
        this.handler = new DeliveryHandler(settings.appIdNumber(), repoConfigs,
                names, this::repository, actors,
                mirror, outbox, timed, pacing, metrics, unit);
        // the merge gate: its record of pull requests beside the issues' (notes), its check runs in the outbox
        PullRequestGate gate = new PullRequestGate(outbox, shared);
        mirror.gate(gate);
        handler.gate(gate);
        this.worker = new Worker(inbox, handler, outbox, clock, options.synchronous(), metrics, replicas, unit);
        this.server = new WebhookServer(settings.webhookPath(), settings.maxBodyBytes(),
                new SignatureVerifier(settings.webhookSecrets()), inbox, outbox, worker, metrics);
        if (settings.clientId() != null) {
            // on PostgreSQL every replica's dashboard links the comments any replica posted
            CommentLinks links = database == null ? new FileCommentLinks(files) : database.commentLinks();
            this.dashboard = new ServerDashboard(settings.apiUrl(), settings.clientId(), settings.clientSecret(), clock,
                    this::servedNames, name -> stateOf(names.current(RepoRef.parse(name)).stateKey())
                    .changeSignature(), ref -> {
                        LocalMode repo = repository(ref);
                        return Dashboard.of(ref.fullName(), clock, repo.ledgers(), repo.activeLedgers(),
                                repo.statuses(), repo.eventLog(), repo::upstreamOrder);
                    }, links, database == null ? DashboardSessions.inMemory() : database.dashboardSessions());
            outbox.onCommentPosted((c, id) -> links.record(c.repo().stateKey(), c.issue(), c.key(), id));
            dashboard.refuseWhile(() -> databaseProblem);
            server.withRoutes(dashboard::routes);
        } else {
            this.dashboard = null;
        }
        // /mcp: the tools for remote agents, on the webhook port (docs/mcp.md, Remote)
        this.remoteMcp = remoteMcp(settings, options, github, clock, metrics, actors, unit);
        server.withRoutes(remoteMcp::routes);
        // a replica that cannot reach the database acknowledges nothing (a proxy passes the delivery on)
        server.refuseWhile(() -> databaseProblem, this::checkDatabase);
        this.readiness = new Readiness(data, worker, clock, server::listening, this::checkDatabase);
        this.management = new ManagementServer(metrics, readiness, server::healthBody);
        metrics.gauge(ServerMetrics.OUTBOX_DEPTH, "Effects queued in the outbox, not yet confirmed by GitHub.",
                g -> g.call(outbox.size()));
        metrics.gauge(ServerMetrics.INBOX_DEPTH, "Deliveries accepted and not yet processed.",
                g -> g.call(inbox.size()));
        metrics.gauge(ServerMetrics.WEBHOOK_IN_FLIGHT, "Signed webhook deliveries being checked and queued.",
                g -> g.call(worker.priority().requestsInFlight()));
        metrics.gauge(ServerMetrics.WORKER_LANES_ALLOWED, "Worker lanes that may apply deliveries' changes now: "
                + "all of them, or one while signed deliveries queue up.", g -> g.call(worker.priority().allowedLanes()));
        metrics.gauge(ServerMetrics.CLARIFICATIONS, "Active clarifications by status, over every repository served.",
                g -> clarificationCounts().forEach((status, n) -> g.call(n, status.wire())), "status");
        if (github instanceof Hub4jGateway hub4j) {
            metrics.gauge(ServerMetrics.RATE_LIMIT_REMAINING, "GitHub core rate limit left, per installation, as "
                    + "last reported by GitHub.", g -> hub4j.rateLimitRemaining().forEach((installation, left) ->
                    g.call(left, String.valueOf(installation))), "installation");
        }
    }

    /**
     * The tools at {@code /mcp}: a remote call's command runs as a comment's, what it queued is
     * handed to the senders and the repository's monitor pass follows at its pace. Its waits hear
     * of ledger changes from the ledger folders' watchers, or on PostgreSQL from every replica's
     * commits (listened for from the first wait on).
     */
    private RemoteMcp remoteMcp(GitHubSettings settings, Options options, GitHubGateway github, Clock clock,
                                ServerMetrics metrics, Actors actors, UnitOfWork unit) {
        java.util.function.Function<String, Path> folders = database != null ? null
                : repo -> files.repository(repo).ledgers().directory();
        Runnable listen = database == null ? () -> { } : () -> database.onLedgerChange(
                (repo, issue) -> remoteMcp.changed(repo, issue), () -> remoteMcp.missed());
        String version = java.util.Objects.requireNonNullElse(GitHubMode.class.getPackage().getImplementationVersion(),
                "dev");
        return new RemoteMcp(McpSettings.fromEnv(options.environment()), github, clock, metrics, version,
                names, github::repositoryOf, this::repository, actors, mirror, outbox, unit, ctx -> {
                    worker.sendQueued();
                    handler.afterRemoteCommand(ctx);
                }, folders, listen);
    }

    /** Counted from each repository's active-ledger index (only ledgers that changed are read again). */
    private Map<Status, Integer> clarificationCounts() {
        Map<Status, Integer> counts = new EnumMap<>(Status.class);
        for (Status s : Status.values()) {
            if (!s.terminal()) {
                counts.put(s, 0);
            }
        }
        for (LocalMode repo : repositories.values()) {
            for (Ledger ledger : repo.activeLedgers().scan().active()) {
                for (ClarificationRecord r : ledger.active()) {
                    counts.merge(r.status(), 1, Integer::sum);
                }
            }
        }
        return counts;
    }

    /** What the worker runs for each delivery; tests drive it directly to cut an attempt short. */
    public DeliveryProcessor deliveryProcessor() {
        return handler;
    }

    public ServerMetrics metrics() {
        return metrics;
    }

    /** The production wiring: hub4j against {@code GITHUB_API_URL}, authenticated as the app. */
    public static GitHubMode create(GitHubSettings settings, Clock clock, Options options) {
        AppJwt jwt = new AppJwt(settings.appId(), settings.privateKey(), clock);
        ServerMetrics metrics = ServerMetrics.create();
        LockManager locks = new LockManager(clock, LockSettings.defaults(), Sleeper.real(), ProcessIdentity.current(),
                metrics.lockObserver());
        return new GitHubMode(settings, clock, locks, new Hub4jGateway(settings.apiUrl(), jwt, clock, metrics), options,
                metrics);
    }

    /**
     * The repository's composition root with its config in force (its {@code .github/agentx.toml}
     * merged over the server's, see {@link RepoConfigs}), created on first use and again when
     * that config changes.
     */
    public LocalMode repository(RepoRef ref) {
        RepoRef repo = names.current(ref); // a name alone: the repository that has it now
        AgentxConfig wanted = repoConfigs.current(repo);
        // channel null: each role's channel from agentx.toml [agents.<role>], as in Local Mode
        return repositories.compute(Long.parseLong(repo.stateKey()), (id, known) -> known != null
                && known.config() == wanted ? known : new LocalMode(repo.rootIn(settings.dataDir()), clock, locks,
                stateOf(repo.stateKey()), channel, wanted, agentEnvironment));
    }

    /** The repositories served, by id: the name each was last seen with, and where the server may post. */
    public RepositoryNames names() {
        return names;
    }

    /** Where a repository's ledgers, statuses and events live: its rows in PostgreSQL, or its state folder. */
    private RepositoryState stateOf(String repo) {
        return database != null ? database.repository(repo) : files.repository(repo);
    }

    /** The keys (GitHub's ids) of every repository with state. */
    private java.util.List<String> servedRepositories() {
        return database != null ? database.repositories() : files.repositories();
    }

    /** Every repository with state, by the name each was last seen with, sorted by it. */
    private java.util.List<RepoRef> servedNames() {
        java.util.Set<String> keys = new java.util.HashSet<>(servedRepositories());
        return names.all().stream().filter(r -> keys.contains(r.stateKey()))
                .map(r -> new RepoRef(r.owner(), r.name(), r.id())).toList();
    }

    /** A scheduler of one daemon thread named {@code name}, at {@code priority}. */
    private static ScheduledExecutorService daemonScheduler(String name, int priority) {
        return Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, name);
            t.setDaemon(true);
            t.setPriority(priority);
            return t;
        });
    }

    /**
     * Catches up after a restart (issues whose ledger has entries not yet queued, deliveries left
     * in the inbox), then starts the worker and the server.
     */
    public GitHubMode start() {
        if (database != null) {
            checkDatabase();
            database.foldStatuses();
            databaseChecks = daemonScheduler("agentx-database-check", Thread.NORM_PRIORITY);
            databaseChecks.scheduleWithFixedDelay(this::checkDatabase, 1, 1, TimeUnit.SECONDS);
        }
        catchUp();
        worker.start();
        worker.wake();
        management.start(host, settings.managementPort());
        Duration every = settings.redeliveryInterval();
        if (!every.isZero()) {
            // first at start (what failed while the server was down), then on the interval; off the start's path
            recoveryTicks = daemonScheduler("agentx-recovery", Thread.NORM_PRIORITY);
            recoveryTicks.scheduleWithFixedDelay(this::recoverQuietly, 0, every.toMillis(), TimeUnit.MILLISECONDS);
        }
        server.start(host, settings.port());
        boundPort = server.port();
        boundManagementPort = management.port();
        LOG.info("agentx serve: listening on port {} at {}, management on port {} (GitHub API {}, data {})", port(),
                settings.webhookPath(), managementPort(), settings.apiUrl(), settings.dataDir());
        return this;
    }

    /**
     * Checks that the database answers (within about two seconds) and remembers the verdict, which
     * the webhook reads for every delivery; empty without a database. Logs each change.
     */
    public java.util.Optional<String> checkDatabase() {
        if (database == null) {
            return java.util.Optional.empty();
        }
        java.util.Optional<String> now = database.beat(replica) ? java.util.Optional.empty()
                : java.util.Optional.of("the database " + database.describe() + " cannot be reached");
        if (now.isPresent() && databaseProblem.isEmpty()) {
            LOG.warn("{}: webhooks are answered 503 until it is back", now.get());
        } else if (now.isEmpty() && databaseProblem.isPresent()) {
            LOG.info("the database {} is back: webhooks are acknowledged again", database.describe());
        }
        databaseProblem = now;
        return now;
    }

    private void catchUp() {
        for (String repo : servedRepositories()) {
            catchUp(repo);
        }
    }

    private void catchUp(String key) {
        Optional<dev.agentx.clarify.store.RepositoryRecords.Repository> known = names.record(Long.parseLong(key));
        if (known.isEmpty()) {
            LOG.warn("skipping the state of repository id {}: no record says which repository it is", key);
            return;
        }
        RepoRef ref = new RepoRef(known.get().owner(), known.get().name(), known.get().id());
        LocalMode repo = repository(ref);
        for (int issue : repo.ledgers().issues()) {
            Optional<Long> installation = mirror.installationOf(repo, ref, issue);
            try {
                installation.ifPresent(inst -> mirror.sync(repo, ref, issue, inst));
            } catch (RuntimeException e) {
                LOG.warn("catch-up of {}#{} failed: {}", ref, issue, e.toString());
            }
        }
    }

    /**
     * Refuses to start when the server's {@code default_workflow} names no workflow: not a bundled
     * one, nor one of a repository's {@code .agentx/workflows/} under the data dir. Every command of
     * a repository without a workflow label would be refused.
     */
    static void requireDefaultWorkflow(Path data, String name) {
        if (dev.agentx.clarify.workflow.WorkflowCatalog.BUNDLED.contains(name)) {
            return;
        }
        try (java.util.stream.Stream<Path> dirs = Files.exists(data.resolve("repos"))
                ? Files.find(data.resolve("repos"), 5, (p, a) -> p.getFileName().toString().equals(name + ".toml")
                && p.getParent() != null && p.getParent().getFileName().toString().equals("workflows"))
                : java.util.stream.Stream.empty()) {
            if (dirs.findAny().isPresent()) {
                return;
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot look for workflow " + name + " under " + data + ": " + e.getMessage(), e);
        }
        throw new ClarifyException(ErrorCode.VALIDATION, data.resolve("agentx.toml") + ": default_workflow '" + name
                + "' names no workflow; known: " + String.join(", ", new java.util.TreeSet<>(
                dev.agentx.clarify.workflow.WorkflowCatalog.BUNDLED)) + ", or one of a repository's "
                + "$AGENTX_DATA_DIR/repos/<owner>/<repo>/.agentx/workflows/<name>.toml.");
    }

    /**
     * What to tell the operator at start when the server's {@code agentx.toml} maps nobody to a role:
     * then every command is refused (a repository's {@code .github/agentx.toml} may still map some).
     */
    public Optional<String> rolesWarning() {
        if (!config.roles().isEmpty()) {
            return Optional.empty();
        }
        Path file = settings.dataDir().resolve("agentx.toml");
        return Optional.of((Files.exists(file) ? file + " maps nobody to a role" : "there is no " + file)
                + ": every /clarify command will be refused until people are mapped to roles (a repository's "
                + ".github/agentx.toml may map its own). Add, for example,\n  [roles]\n  engineer = [\"your-login\"]\n"
                + "  architect = [\"@your-org/architects\"]\nto " + file + " and restart (docs/github-app.md, step 4).");
    }

    /**
     * The webhook port as bound at {@link #start} (port 0 picks one), also once a stop began: a
     * closed connector's own port reads -2.
     */
    public int port() {
        return boundPort;
    }

    /** The port of /metrics, /readyz and /healthz, as bound at {@link #start}. */
    public int managementPort() {
        return boundManagementPort;
    }

    /** Processes waiting deliveries and sends due effects now (what the worker does on its tick). */
    public void drain() {
        worker.drain();
    }

    public int pendingDeliveries() {
        return inbox.size();
    }

    public int pendingEffects() {
        return outbox.size();
    }

    /** The outbox journal's fdatasyncs since the start (for tests). */
    public long outboxSyncs() {
        return outbox.journalSyncs();
    }

    /** One recovery pass now: deliveries GitHub lists that this server never received are asked for again. */
    public DeliveryRecovery.Report recoverDeliveries() {
        return recovery.pass();
    }

    private void recoverQuietly() {
        try {
            // one replica at a time asks GitHub: the lease outlives two intervals, so its holder keeps it
            Duration every = settings.redeliveryInterval();
            if (!replicas.lease("recovery", clock.instant(), every.multipliedBy(2).plusMinutes(1))) {
                LOG.debug("recovery: another replica holds the lease; not asking GitHub from here");
                return;
            }
            recovery.pass();
        } catch (RuntimeException e) {
            LOG.error("recovery: the pass failed: {}", e.toString(), e);
        }
    }

    /**
     * Graceful stop (SIGTERM): webhooks get 503 and readiness fails; the worker finishes the drain
     * under way (deliveries not reached stay in the inbox on disk for the next start) and the
     * outbox is flushed once; then both ports are closed.
     */
    @Override
    public void close() {
        if (recoveryTicks != null) {
            recoveryTicks.shutdownNow();
        }
        if (databaseChecks != null) {
            databaseChecks.shutdownNow();
        }
        server.stopTaking();
        readiness.stopping();
        worker.close();
        if (pacedPasses != null) {
            // the passes due within the pace still run (what they queue is sent at the next start);
            // one asked for after this runs after the next start's first event of its repository
            pacedPasses.shutdown();
            try {
                if (!pacedPasses.awaitTermination(5, TimeUnit.SECONDS)) {
                    pacedPasses.shutdownNow();
                }
            } catch (InterruptedException e) {
                pacedPasses.shutdownNow();
                Thread.currentThread().interrupt();
            }
        }
        remoteMcp.close(); // waiting calls answer what there is before the port closes
        server.close();
        management.close();
        outbox.close(); // the notifiers: what they had not sent is sent at the next start
        if (dashboard != null) {
            dashboard.close();
        }
        if (database != null) {
            try {
                database.leave(replica); // what the worker could not finish is taken over at once
            } catch (RuntimeException e) {
                LOG.warn("cannot remove this replica's heartbeat; others take over what it left in {} s: {}",
                        dev.agentx.clarify.store.postgres.PgDeliveryQueue.GONE_AFTER.toSeconds(), e.toString());
            }
            database.close();
        }
    }
}
