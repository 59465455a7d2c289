package dev.agentx.clarify.protocol;

import com.fasterxml.jackson.annotation.JsonPropertyOrder;
import java.time.Instant;
import java.util.Objects;

/** One entry of a clarification thread: a question, an answer, a resolution or an escalation. */
@JsonPropertyOrder({"round", "from", "type", "body", "timestamp"})
public record ThreadEntry(int round, String from, EntryType type, String body, Instant timestamp) {
    public ThreadEntry {
        Objects.requireNonNull(from, "from");
        Objects.requireNonNull(type, "type");
        Objects.requireNonNull(body, "body");
        Objects.requireNonNull(timestamp, "timestamp");
    }
}
