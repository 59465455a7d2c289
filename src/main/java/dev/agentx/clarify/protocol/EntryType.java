package dev.agentx.clarify.protocol;

import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.annotation.JsonValue;
import java.util.Locale;

/** Kind of a thread entry (docs/protocol.md). Abandonment is written as a resolution entry. */
public enum EntryType {
    QUESTION, ANSWER, RESOLUTION, ESCALATION;

    @JsonValue
    public String wire() {
        return name().toLowerCase(Locale.ROOT);
    }

    @JsonCreator
    public static EntryType fromWire(String value) {
        for (EntryType t : values()) {
            if (t.wire().equals(value)) {
                return t;
            }
        }
        throw new IllegalArgumentException("unknown thread entry type '" + value
                + "'; expected question, answer, resolution or escalation");
    }
}
