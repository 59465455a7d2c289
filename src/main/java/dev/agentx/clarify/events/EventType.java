package dev.agentx.clarify.events;

/** The clarification events (docs/protocol.md), named as on the wire. */
public enum EventType {
    REQUESTED("clarification-requested"),
    ANSWERED("clarification-answered"),
    RESOLVED("clarification-resolved"),
    ESCALATED("clarification-escalated"),
    ABANDONED("clarification-abandoned"),
    STALE("clarification-stale");

    private final String wire;

    EventType(String wire) {
        this.wire = wire;
    }

    @com.fasterxml.jackson.annotation.JsonValue
    public String wire() {
        return wire;
    }

    @com.fasterxml.jackson.annotation.JsonCreator
    public static EventType fromWire(String s) {
        for (EventType t : values()) {
            if (t.wire.equals(s)) {
                return t;
            }
        }
        throw new IllegalArgumentException("unknown event '" + s + "'");
    }
}
