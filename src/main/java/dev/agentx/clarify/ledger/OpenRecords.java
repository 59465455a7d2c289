package dev.agentx.clarify.ledger;

import dev.agentx.clarify.protocol.Ledger;
import java.util.List;

/** The ledgers holding records open for one agent, for the agent statuses (StatusRules.Elsewhere). */
@FunctionalInterface
public interface OpenRecords {
    /**
     * At least every ledger with a record that holds {@code agent} open
     * ({@link dev.agentx.clarify.protocol.ClarificationRecord#holdsOpen}); it may give a few more.
     */
    List<Ledger> openFor(String agent);
}
