package dev.agentx.clarify.app;

import dev.agentx.clarify.channel.AnswerChannel;
import dev.agentx.clarify.channel.ChannelRouter;
import dev.agentx.clarify.channel.FileChannelFailures;
import dev.agentx.clarify.channel.RequestContext;
import dev.agentx.clarify.config.AgentxConfig;
import dev.agentx.clarify.config.ConfigLoader;
import dev.agentx.clarify.events.EventBus;
import dev.agentx.clarify.events.JsonlEventLog;
import dev.agentx.clarify.ledger.ActiveLedgerIndex;
import dev.agentx.clarify.ledger.FileLedgerStore;
import dev.agentx.clarify.lock.LockManager;
import dev.agentx.clarify.lock.Sleeper;
import dev.agentx.clarify.monitor.ClarificationMonitor;
import dev.agentx.clarify.monitor.UpstreamOrder;
import dev.agentx.clarify.protocol.ClarificationRecord;
import dev.agentx.clarify.routing.ClarificationEngine;
import dev.agentx.clarify.status.FileAgentStatusStore;
import dev.agentx.clarify.workflow.WorkflowCatalog;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.util.Map;
import java.util.function.Supplier;

/**
 * The composition root of Local Mode: everything under {@code <root>/.agentx/}. GitHub Mode builds
 * the same parts per repository under {@code $AGENTX_DATA_DIR/repos/<owner>/<repo>/}.
 */
public final class LocalMode {
    private final Path root;
    private final Clock clock;
    private final AgentxConfig config;
    private final WorkflowCatalog workflows;
    private final FileLedgerStore ledgers;
    private final FileAgentStatusStore statuses;
    private final EventBus events;
    private final AnswerChannel channel;
    private final JsonlEventLog eventLog;
    private final ClarificationEngine engine;
    private final ActiveLedgerIndex activeLedgers;
    private final ClarificationMonitor monitor;
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
        this.root = root;
        this.clock = clock;
        Path agentx = root.resolve(".agentx");
        Path state = agentx.resolve("state");
        this.config = config;
        this.workflows = new WorkflowCatalog(agentx.resolve("workflows"), config.workflows());
        this.ledgers = new FileLedgerStore(state, locks);
        this.statuses = new FileAgentStatusStore(state, locks);
        this.eventLog = new JsonlEventLog(state.resolve("events.jsonl"));
        this.events = new EventBus(eventLog);
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
        this.engine = new ClarificationEngine(clock, ledgers, statuses, events, workflows, config, this.channel);
        this.activeLedgers = new ActiveLedgerIndex(ledgers, state.resolve("monitor-index.json"));
        this.monitor = new ClarificationMonitor(clock, activeLedgers, engine, this.channel, new Supplier<UpstreamOrder>() {
            @Override
            public UpstreamOrder get() {
                return upstreamOrder();
            }
        });
    }

    private static AgentxConfig loadConfig(Path root) {
        return ConfigLoader.load(root.resolve(".agentx").resolve("config.toml"));
    }

    /** Escalates a record whose channel keeps failing, if it still waits for that round's answer. */
    private void escalateForChannel(String id, int round, String reason) {
        engine.escalateByHub(id, reason, (ClarificationRecord r) -> r.status().awaitingAnswer() && r.round() == round);
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
            return explicit.toAbsolutePath().normalize();
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

    public FileLedgerStore ledgers() {
        return ledgers;
    }

    public FileAgentStatusStore statuses() {
        return statuses;
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

    /** {@code events.jsonl}, for reading it back (the digest's stale count). */
    public JsonlEventLog eventLog() {
        return eventLog;
    }

    /** The active ledgers, found through {@code state/monitor-index.json}. */
    public ActiveLedgerIndex activeLedgers() {
        return activeLedgers;
    }

    public ClarificationMonitor monitor() {
        return monitor;
    }

    /** {@code .agentx/issues/}: issues listed for the ready queue (see {@link LocalIssues}). */
    public Path issuesDirectory() {
        return root.resolve(".agentx").resolve("issues");
    }

    /** The deadlock-breaking order from the workflows, loaded on first use. */
    public synchronized UpstreamOrder upstreamOrder() {
        if (upstreamOrder == null) {
            upstreamOrder = UpstreamOrder.of(config.defaultWorkflow(), workflows);
        }
        return upstreamOrder;
    }
}
