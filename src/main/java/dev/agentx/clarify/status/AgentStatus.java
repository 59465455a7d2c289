package dev.agentx.clarify.status;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyOrder;
import java.time.Instant;

/** One agent's entry in {@code agent-status.json} (docs/protocol.md). */
@JsonPropertyOrder({"status", "issue", "lastActivity", "clarificationId", "waitingOn", "respondingTo"})
@JsonInclude(JsonInclude.Include.ALWAYS)
public record AgentStatus(AgentState status, Integer issue, Instant lastActivity, String clarificationId,
                          String waitingOn, String respondingTo) {

    public static AgentStatus working(Integer issue, Instant at) {
        return new AgentStatus(AgentState.WORKING, issue, at, null, null, null);
    }

    /** Set by {@code agentx hook finish}: the agent finished its work on the issue. */
    public static AgentStatus done(Integer issue, Instant at) {
        return new AgentStatus(AgentState.DONE, issue, at, null, null, null);
    }

    public static AgentStatus blocked(int issue, Instant at, String id, String waitingOn) {
        return new AgentStatus(AgentState.BLOCKED_CLARIFICATION, issue, at, id, null == waitingOn ? null : waitingOn,
                null);
    }

    public static AgentStatus clarifying(int issue, Instant at, String id, String respondingTo) {
        return new AgentStatus(AgentState.CLARIFYING, issue, at, id, null, respondingTo);
    }
}
