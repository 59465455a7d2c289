package dev.agentx.clarify.status;

import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.annotation.JsonValue;

/** Agent statuses of docs/protocol.md (docs/protocol.md). */
public enum AgentState {
    IDLE("idle"), WORKING("working"), CLARIFYING("clarifying"), BLOCKED_CLARIFICATION("blocked-clarification"),
    DONE("done"), STUCK("stuck");

    private final String wire;

    AgentState(String wire) {
        this.wire = wire;
    }

    @JsonValue
    public String wire() {
        return wire;
    }

    @JsonCreator
    public static AgentState fromWire(String s) {
        for (AgentState a : values()) {
            if (a.wire.equals(s)) {
                return a;
            }
        }
        throw new IllegalArgumentException("unknown agent status '" + s + "'");
    }
}
