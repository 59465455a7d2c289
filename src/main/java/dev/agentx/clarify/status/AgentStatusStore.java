package dev.agentx.clarify.status;

import java.util.Map;
import java.util.function.UnaryOperator;

/** Where agent statuses live; updates are atomic under the store's own lock. */
public interface AgentStatusStore {
    Map<String, AgentStatus> read();

    void update(String actor, UnaryOperator<Map<String, AgentStatus>> change);
}
