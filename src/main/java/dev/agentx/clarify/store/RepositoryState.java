package dev.agentx.clarify.store;

import dev.agentx.clarify.events.EventLog;
import dev.agentx.clarify.ledger.ActiveLedgers;
import dev.agentx.clarify.ledger.LedgerStore;
import dev.agentx.clarify.status.AgentStatusStore;

/**
 * Everything the engine remembers about one project (a Local Mode root, or one repository the
 * server serves): its ledgers, agent statuses and events, and the active ledgers the monitor
 * works on. Two implementations: files under {@code .agentx/state/}
 * ({@link dev.agentx.clarify.store.files.FileRepositoryState}) and rows in PostgreSQL
 * ({@link dev.agentx.clarify.store.postgres.PostgresRepositoryState}).
 */
public interface RepositoryState {
    LedgerStore ledgers();

    AgentStatusStore statuses();

    EventLog events();

    ActiveLedgers activeLedgers();

    /**
     * A value that changes whenever a ledger or the statuses change (cheap: pages that show the
     * state poll it to know when to look again).
     */
    String changeSignature();

    /** Where this state lives, for messages: a folder, or a database and repository. */
    String describe();
}
