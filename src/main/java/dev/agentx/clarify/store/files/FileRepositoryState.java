package dev.agentx.clarify.store.files;

import dev.agentx.clarify.events.JsonlEventLog;
import dev.agentx.clarify.ledger.ActiveLedgerIndex;
import dev.agentx.clarify.ledger.FileLedgerStore;
import dev.agentx.clarify.lock.LockManager;
import dev.agentx.clarify.status.FileAgentStatusStore;
import dev.agentx.clarify.store.RepositoryState;
import java.nio.file.Path;

/**
 * A project's state as files under its {@code .agentx/state/} folder (PRODUCT.md section 2):
 * {@code clarifications/issue-N.json}, {@code agent-status.json}, {@code events.jsonl} and the
 * monitor's {@code monitor-index.json}, each written under the lock-file protocol.
 */
public final class FileRepositoryState implements RepositoryState {
    private final Path state;
    private final FileLedgerStore ledgers;
    private final FileAgentStatusStore statuses;
    private final JsonlEventLog events;
    private final ActiveLedgerIndex activeLedgers;

    /** @param stateDir the {@code .agentx/state} folder */
    public FileRepositoryState(Path stateDir, LockManager locks) {
        this.state = stateDir;
        this.ledgers = new FileLedgerStore(stateDir, locks);
        this.activeLedgers = new ActiveLedgerIndex(ledgers, stateDir.resolve("monitor-index.json"));
        this.statuses = new FileAgentStatusStore(stateDir, locks, ledgers, ledgers);
        this.events = new JsonlEventLog(stateDir.resolve("events.jsonl"));
    }

    /** The {@code .agentx/state} folder. */
    public Path directory() {
        return state;
    }

    @Override
    public FileLedgerStore ledgers() {
        return ledgers;
    }

    @Override
    public FileAgentStatusStore statuses() {
        return statuses;
    }

    @Override
    public JsonlEventLog events() {
        return events;
    }

    @Override
    public ActiveLedgerIndex activeLedgers() {
        return activeLedgers;
    }

    /** The modification times of the ledger folder (a rename into it changes it) and of the statuses. */
    @Override
    public String changeSignature() {
        StringBuilder b = new StringBuilder();
        for (Path p : new Path[] {ledgers.directory(), state.resolve("agent-status.json")}) {
            try {
                b.append(java.nio.file.Files.getLastModifiedTime(p).toMillis()).append(';');
            } catch (java.io.IOException e) {
                b.append("-;");
            }
        }
        return b.toString();
    }

    @Override
    public String describe() {
        return state.toString();
    }
}
