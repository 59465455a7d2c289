package dev.agentx.clarify.lock;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Instant;

/**
 * Content of a {@code .lock} file: docs/protocol.md ({@code pid, timestamp, agent}) plus the
 * owner's unique token, host and process start time, so that only the owner releases it and a
 * dead owner on this host is recognised at once, even if its pid was reused. Encoded without data
 * binding: acquiring a lock in a cold process must not first spend its wait budget loading a JSON
 * mapper.
 */
public record LockInfo(long pid, Instant timestamp, String agent, String token, String host, Instant processStart) {
    private static final JsonFactory JSON = new JsonFactory();

    public byte[] toJson() {
        StringBuilder b = new StringBuilder(200).append("{\"pid\":").append(pid);
        field(b, "timestamp", timestamp == null ? null : timestamp.toString());
        field(b, "agent", agent);
        field(b, "token", token);
        field(b, "host", host);
        field(b, "processStart", processStart == null ? null : processStart.toString());
        return b.append('}').toString().getBytes(StandardCharsets.UTF_8);
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

    private static void field(StringBuilder b, String name, String value) {
        if (value == null) {
            return;
        }
        b.append(",\"").append(name).append("\":\"");
        for (int i = 0; i < value.length(); i++) {
            char c = value.charAt(i);
            if (c == '"' || c == '\\') {
                b.append('\\').append(c);
            } else if (c < 0x20) {
                b.append(String.format("\\u%04x", (int) c));
            } else {
                b.append(c);
            }
        }
        b.append('"');
    }

    /** Parses lock content; null if it is empty, torn or not ours to read (judged by age instead). */
    public static LockInfo parse(byte[] bytes) {
        if (bytes.length == 0) {
            return null;
        }
        long pid = -1;
        String timestamp = null;
        String agent = null;
        String token = null;
        String host = null;
        String start = null;
        try (JsonParser p = JSON.createParser(bytes)) {
            if (p.nextToken() != JsonToken.START_OBJECT) {
                return null;
            }
            while (p.nextToken() == JsonToken.FIELD_NAME) {
                String name = p.currentName();
                JsonToken t = p.nextToken();
                switch (name) {
                    case "pid" -> pid = t == JsonToken.VALUE_NUMBER_INT ? p.getLongValue() : -1;
                    case "timestamp" -> timestamp = p.getValueAsString();
                    case "agent" -> agent = p.getValueAsString();
                    case "token" -> token = p.getValueAsString();
                    case "host" -> host = p.getValueAsString();
                    case "processStart" -> start = p.getValueAsString();
                    default -> p.skipChildren();
                }
            }
            if (p.currentToken() != JsonToken.END_OBJECT) {
                return null;
            }
            return new LockInfo(pid, timestamp == null ? null : Instant.parse(timestamp), agent, token, host,
                    start == null ? null : Instant.parse(start));
        } catch (IOException | RuntimeException e) {
            return null;
        }
    }
}
