package dev.agentx.clarify.cli;

import dev.agentx.clarify.channel.AnswerChannel;
import dev.agentx.clarify.channel.HumanChannel;
import dev.agentx.clarify.config.AgentxConfig;
import dev.agentx.clarify.config.ConfigLoader;
import dev.agentx.clarify.events.EventBus;
import dev.agentx.clarify.events.JsonlEventLog;
import dev.agentx.clarify.ledger.ActiveLedgerIndex;
import dev.agentx.clarify.ledger.FileLedgerStore;
import dev.agentx.clarify.lock.LockManager;
import dev.agentx.clarify.monitor.ClarificationMonitor;
import dev.agentx.clarify.monitor.UpstreamOrder;
import dev.agentx.clarify.routing.ClarificationEngine;
import dev.agentx.clarify.status.FileAgentStatusStore;
import dev.agentx.clarify.workflow.WorkflowCatalog;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;

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
    private final JsonlEventLog eventLog;
    private final ClarificationEngine engine;
    private final ActiveLedgerIndex activeLedgers;
    private final ClarificationMonitor monitor;
    private UpstreamOrder upstreamOrder;

    public LocalMode(Path root, Clock clock, LockManager locks, AnswerChannel channel) {
        this.root = root;
        this.clock = clock;
        Path agentx = root.resolve(".agentx");
        Path state = agentx.resolve("state");
        this.config = ConfigLoader.load(agentx.resolve("config.toml"));
        this.workflows = new WorkflowCatalog(agentx.resolve("workflows"));
        this.ledgers = new FileLedgerStore(state, locks);
        this.statuses = new FileAgentStatusStore(state, locks);
        this.eventLog = new JsonlEventLog(state.resolve("events.jsonl"));
        this.events = new EventBus(eventLog);
        this.engine = new ClarificationEngine(clock, ledgers, statuses, events, workflows, config, channel);
        this.activeLedgers = new ActiveLedgerIndex(ledgers, state.resolve("monitor-index.json"));
        this.monitor = new ClarificationMonitor(clock, activeLedgers, engine, channel, this::upstreamOrder);
    }

    public static LocalMode open(Path root, Clock clock) {
        return new LocalMode(root, clock, LockManager.standard(clock), new HumanChannel());
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
