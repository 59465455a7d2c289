package dev.agentx.clarify.lock;

import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonProperty;
import com.fasterxml.jackson.annotation.JsonPropertyOrder;
import com.fasterxml.jackson.annotation.JsonSetter;
import com.fasterxml.jackson.annotation.Nulls;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectReader;
import com.fasterxml.jackson.databind.ObjectWriter;
import dev.agentx.clarify.files.StateJson;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Instant;

/**
 * Content of a {@code .lock} file: docs/protocol.md ({@code pid, timestamp, agent}) plus the
 * owner's unique token, host and process start time, so that only the owner releases it and a
 * dead owner on this host is recognised at once, even if its pid was reused. Bound by Jackson
 * through {@link StateJson}; a field left out or null is not written, and reading takes a lock
 * file of another tool as it comes: fields it does not know are skipped, those it lacks are null
 * (the pid -1).
 */
@JsonPropertyOrder({"pid", "timestamp", "agent", "token", "host", "processStart"})
@JsonInclude(JsonInclude.Include.NON_NULL)
public record LockInfo(long pid, Instant timestamp, String agent, String token, String host, Instant processStart) {

    /** The lock content as read: a pid left out is -1. */
    @JsonCreator
    public static LockInfo read(@JsonProperty("pid") @JsonSetter(nulls = Nulls.SKIP) Long pid,
                         @JsonProperty("timestamp") @JsonSetter(nulls = Nulls.SKIP) Instant timestamp,
                         @JsonProperty("agent") @JsonSetter(nulls = Nulls.SKIP) String agent,
                         @JsonProperty("token") @JsonSetter(nulls = Nulls.SKIP) String token,
                         @JsonProperty("host") @JsonSetter(nulls = Nulls.SKIP) String host,
                         @JsonProperty("processStart") @JsonSetter(nulls = Nulls.SKIP) Instant processStart) {
        return new LockInfo(pid == null ? -1 : pid, timestamp, agent, token, host, processStart);
    }

    public byte[] toJson() {
        try {
            return Json.WRITER.writeValueAsBytes(this);
        } catch (JsonProcessingException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * Who holds the lock, for messages: the agent, pid, host and since when, leaving out what the
     * file does not say (a lock written by another tool may hold only {@code pid, timestamp, agent}).
     */
    public String holder() {
        StringBuilder b = new StringBuilder();
        b.append(agent == null ? "an unnamed holder" : "'" + agent + "'");
        StringBuilder detail = new StringBuilder();
        if (pid >= 0) {
            detail.append("pid ").append(pid);
        }
        if (host != null) {
            detail.append(detail.isEmpty() ? "" : " ").append("on ").append(host);
        }
        if (timestamp != null) {
            detail.append(detail.isEmpty() ? "" : ", ").append("since ").append(timestamp);
        }
        return detail.isEmpty() ? b.toString() : b.append(" (").append(detail).append(')').toString();
    }

    /** Parses lock content; null if it is empty, torn or not ours to read (judged by age instead). */
    public static LockInfo parse(byte[] bytes) {
        if (bytes.length == 0) {
            return null;
        }
        try {
            return Json.READER.readValue(bytes);
        } catch (IOException | RuntimeException e) {
            return null;
        }
    }

    /** The reader and writer, made on first use. */
    private static final class Json {
        static final ObjectReader READER = StateJson.lenient(StateJson.mapper().readerFor(LockInfo.class));
        static final ObjectWriter WRITER = StateJson.mapper().writerFor(LockInfo.class);
    }
}
