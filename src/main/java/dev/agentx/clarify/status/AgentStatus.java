package dev.agentx.clarify.status;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonProperty;
import com.fasterxml.jackson.annotation.JsonPropertyOrder;
import com.fasterxml.jackson.annotation.JsonSetter;
import com.fasterxml.jackson.annotation.Nulls;
import java.time.Instant;

/** One agent's entry in {@code agent-status.json} (docs/protocol.md): every field but the status may be null. */
@JsonPropertyOrder({"status", "issue", "lastActivity", "clarificationId", "waitingOn", "respondingTo"})
@JsonInclude(JsonInclude.Include.ALWAYS)
public record AgentStatus(@JsonProperty(required = true) AgentState status,
                          @JsonSetter(nulls = Nulls.SKIP) Integer issue,
                          @JsonSetter(nulls = Nulls.SKIP) Instant lastActivity,
                          @JsonSetter(nulls = Nulls.SKIP) String clarificationId,
                          @JsonSetter(nulls = Nulls.SKIP) String waitingOn,
                          @JsonSetter(nulls = Nulls.SKIP) String respondingTo) {

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
