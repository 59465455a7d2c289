package dev.agentx.clarify.protocol;

import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.annotation.JsonValue;
import java.util.Arrays;
import java.util.Locale;

/** Status of a clarification record (docs/protocol.md). */
public enum Status {
    PENDING, ANSWERED, RESOLVED, STALE, ESCALATED, ABANDONED;

    /** The lower-case name used on disk, in events and in output. */
    @JsonValue
    public String wire() {
        return name().toLowerCase(Locale.ROOT);
    }

    @JsonCreator
    public static Status fromWire(String value) {
        for (Status s : values()) {
            if (s.wire().equals(value)) {
                return s;
            }
        }
        throw new IllegalArgumentException("unknown status '" + value + "'; expected one of "
                + Arrays.stream(values()).map(Status::wire).toList());
    }

    /** Resolved and abandoned records never change again. */
    public boolean terminal() {
        return this == RESOLVED || this == ABANDONED;
    }

    /** Open: not terminal (escalated stays open until a human closes it). */
    public boolean active() {
        return !terminal();
    }

    /** A question is waiting for the target's answer. */
    public boolean awaitingAnswer() {
        return this == PENDING || this == STALE;
    }
}
