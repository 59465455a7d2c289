package dev.agentx.clarify.status;

import java.util.Map;
import java.util.Set;
import java.util.function.UnaryOperator;

/** Where agent statuses live; updates are atomic under the store's own lock. */
public interface AgentStatusStore {
    /** The statuses, with every change this process made before the call. */
    Map<String, AgentStatus> read();

    /** Changes the statuses (the hooks, a store copy) and returns once the change is stored. */
    void update(String actor, UnaryOperator<Map<String, AgentStatus>> change);

    /**
     * After a write of {@code issue}'s ledger: brings the statuses of {@code agents} in line with
     * the ledger ({@link StatusRules#reconcile}), reading the ledger as it is when the store gets to
     * it. After {@link #writeBehind} the file store does this after the call returns
     * (docs/protocol.md); it still shows the change to this process's {@link #read} and stores it
     * before the process exits.
     */
    void mirror(String actor, int issue, Set<String> agents);

    /**
     * Lets {@link #mirror} return before the statuses are stored, for a long-lived process whose
     * callers should not wait on the status writes ({@code agentx mcp}). A store whose statuses
     * commit with the ledger (PostgreSQL) ignores it.
     */
    default void writeBehind() {
    }

    /**
     * Stores what {@link #mirror} has left to store, or (the file store) leaves it to the process
     * that holds the statuses' lock now, which stores it before or just after it lets go.
     */
    default void flush() {
    }
}
