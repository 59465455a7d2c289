package dev.agentx.clarify.app;

import dev.agentx.clarify.channel.AnswerChannel;
import dev.agentx.clarify.channel.ChannelRouter;
import dev.agentx.clarify.channel.FileChannelFailures;
import dev.agentx.clarify.channel.RequestContext;
import dev.agentx.clarify.config.AgentxConfig;
import dev.agentx.clarify.config.ConfigLoader;
import dev.agentx.clarify.events.EventBus;
import dev.agentx.clarify.events.EventLog;
import dev.agentx.clarify.ledger.ActiveLedgers;
import dev.agentx.clarify.ledger.LedgerStore;
import dev.agentx.clarify.lock.LockManager;
import dev.agentx.clarify.lock.Sleeper;
import dev.agentx.clarify.monitor.Cause;
import dev.agentx.clarify.monitor.ClarificationMonitor;
import dev.agentx.clarify.monitor.UpstreamOrder;
import dev.agentx.clarify.protocol.ClarificationRecord;
import dev.agentx.clarify.routing.ClarificationEngine;
import dev.agentx.clarify.status.AgentStatusStore;
import dev.agentx.clarify.store.RepositoryState;
import dev.agentx.clarify.store.files.FileRepositoryState;
import dev.agentx.clarify.workflow.WorkflowCatalog;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.util.LinkedHashSet;
import java.util.Map;
import java.util.Set;
import java.util.function.Supplier;

/**
 * The composition root of Local Mode: everything under {@code <root>/.agentx/}. GitHub Mode builds
 * the same parts per repository under {@code $AGENTX_DATA_DIR/repos/<owner>/<repo>/}, with the
 * repository's state (ledgers, statuses, events) in files there or in PostgreSQL.
 */
public final class LocalMode {
    private final Path root;
    private final Clock clock;
    private final AgentxConfig config;
    private final WorkflowCatalog workflows;
    private final RepositoryState state;
    private final EventBus events;
    private final AnswerChannel channel;
    private final ClarificationEngine engine;
    private final ClarificationMonitor monitor;
    private final LockManager locks;
    private UpstreamOrder upstreamOrder;

    /** Local Mode with one given channel for every role (tests). */
    public LocalMode(Path root, Clock clock, LockManager locks, AnswerChannel channel) {
        this(root, clock, locks, channel, loadConfig(root), Map.of());
    }

    /**
     * Local Mode with each role's channel from {@code [agents.<role>]} of the config; command
     * agents run in the root with {@code env} as their environment (and http agents read their
     * secrets from it). Channel failures are counted in {@code state/channel-failures.json}.
     */
    public LocalMode(Path root, Clock clock, LockManager locks, Map<String, String> env) {
        this(root, clock, locks, null, loadConfig(root), env);
    }

    /**
     * The same parts with a config given by the caller: GitHub Mode passes the server's
     * {@code $AGENTX_DATA_DIR/agentx.toml} to every repository root. A null {@code channel} means
     * each role's channel from that config, with {@code env} as the agents' environment.
     */
    public LocalMode(Path root, Clock clock, LockManager locks, AnswerChannel channel, AgentxConfig config,
                     Map<String, String> env) {
        this(root, clock, locks, new FileRepositoryState(root.resolve(".agentx").resolve("state"), locks), channel,
                config, env);
    }

    /**
     * The same parts over the given state (files, or a repository's rows in PostgreSQL). The root
     * still holds the workflows ({@code .agentx/workflows/}) and the channels' failure counts.
     */
    public LocalMode(Path root, Clock clock, LockManager locks, RepositoryState repositoryState, AnswerChannel channel,
                     AgentxConfig config, Map<String, String> env) {
        this.root = root;
        this.clock = clock;
        this.locks = locks;
        Path agentx = root.resolve(".agentx");
        Path state = agentx.resolve("state");
        this.config = config;
        this.workflows = new WorkflowCatalog(agentx.resolve("workflows"), config.workflows());
        this.state = repositoryState;
        this.events = new EventBus(repositoryState.events());
        // Anonymous classes rather than method references: every CLI start builds Local Mode, and a
        // method reference costs its bootstrap there.
        ChannelRouter.Escalator escalator = new ChannelRouter.Escalator() {
            @Override
            public void escalate(String id, int round, String reason) {
                escalateForChannel(id, round, reason);
            }
        };
        this.channel = channel != null ? channel : ChannelRouter.create(config, root, env, RequestContext.local(root),
                new FileChannelFailures(state, locks), escalator, clock, Sleeper.real());
        this.engine = new ClarificationEngine(clock, repositoryState.ledgers(), repositoryState.statuses(), events,
                workflows, config, this.channel);
        this.monitor = new ClarificationMonitor(clock, repositoryState.activeLedgers(), engine, this.channel, new Supplier<UpstreamOrder>() {
            @Override
            public UpstreamOrder get() {
                return upstreamOrder();
            }
        });
    }

    /**
     * Ends a command's use: the statuses it changed are written, and what the locks keep between
     * acquisitions is given up. A process that exits does both at its exit; the CLI's daemon runs
     * many commands in one process and calls this after each.
     */
    public void close() {
        statuses().flush();
        locks.close();
    }

    private static AgentxConfig loadConfig(Path root) {
        return ConfigLoader.load(root.resolve(".agentx").resolve("config.toml"));
    }

    /** Escalates a record whose channel keeps failing, if it still waits for that round's answer. */
    private void escalateForChannel(String id, int round, String reason) {
        engine.escalateByHub(id, Cause.CHANNEL.reason(reason),
                (ClarificationRecord r) -> r.status().awaitingAnswer() && r.round() == round);
    }

    public static LocalMode open(Path root, Clock clock) {
        return open(root, clock, System.getenv());
    }

    /** Local Mode as the CLI runs it: channels from the config, agents get {@code env}. */
    public static LocalMode open(Path root, Clock clock, Map<String, String> env) {
        return new LocalMode(root, clock, LockManager.standard(clock), env);
    }

    /** {@code --root DIR}, else the nearest directory upward holding {@code .agentx/}, else {@code cwd}. */
    public static Path findRoot(Path explicit, Path cwd) {
        if (explicit != null) {
            // against cwd, not this process's folder: the daemon runs commands given from elsewhere
            return cwd.resolve(explicit).toAbsolutePath().normalize();
        }
        Path start = cwd.toAbsolutePath().normalize();
        for (Path p = start; p != null; p = p.getParent()) {
            if (Files.isDirectory(p.resolve(".agentx"))) {
                return p;
            }
        }
        return start;
    }

    public Path root() {
        return root;
    }

    public Clock clock() {
        return clock;
    }

    public AgentxConfig config() {
        return config;
    }

    public WorkflowCatalog workflows() {
        return workflows;
    }

    public LedgerStore ledgers() {
        return state.ledgers();
    }

    public AgentStatusStore statuses() {
        return state.statuses();
    }

    /** Where the ledgers, statuses and events live. */
    public RepositoryState state() {
        return state;
    }

    /**
     * The state as files, for what works on the files themselves (watching the ledger folder);
     * Local Mode always has them, a repository the server keeps in PostgreSQL does not.
     */
    public FileRepositoryState files() {
        if (state instanceof FileRepositoryState f) {
            return f;
        }
        throw new IllegalStateException("the state of " + root + " is not in files but in " + state.describe());
    }

    public EventBus events() {
        return events;
    }

    /** The channel the engine asks (the monitor asks stale questions again through it). */
    public AnswerChannel channel() {
        return channel;
    }

    public ClarificationEngine engine() {
        return engine;
    }

    /** The event log, for reading it back (the digest's stale count). */
    public EventLog eventLog() {
        return state.events();
    }

    /** The active ledgers (in files, found through {@code state/monitor-index.json}). */
    public ActiveLedgers activeLedgers() {
        return state.activeLedgers();
    }

    public ClarificationMonitor monitor() {
        return monitor;
    }

    /** {@code .agentx/issues/}: issues listed for the ready queue (see {@link LocalIssues}). */
    public Path issuesDirectory() {
        return root.resolve(".agentx").resolve("issues");
    }

    /**
     * The agents this project knows: the built-in roles, those of the config ({@code [roles]},
     * {@code [agents.*]}) and those of every workflow (bundled and the project's). An agent that
     * acts (a hook, an MCP session) must be one of them, as the engine requires of a request's
     * agents in the issue's workflow.
     */
    public Set<String> knownAgents() {
        Set<String> known = new LinkedHashSet<>(config.knownRoles());
        known.addAll(upstreamOrder().agents());
        return known;
    }

    /** The deadlock-breaking order from the workflows, loaded on first use. */
    public synchronized UpstreamOrder upstreamOrder() {
        if (upstreamOrder == null) {
            upstreamOrder = UpstreamOrder.of(config.defaultWorkflow(), workflows);
        }
        return upstreamOrder;
    }
}
