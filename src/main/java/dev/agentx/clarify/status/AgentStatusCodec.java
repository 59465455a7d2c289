package dev.agentx.clarify.status;

import com.fasterxml.jackson.core.JsonEncoding;
import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.core.util.DefaultIndenter;
import com.fasterxml.jackson.core.util.DefaultPrettyPrinter;
import dev.agentx.clarify.files.IsoInstant;
import dev.agentx.clarify.files.JsonErrors;
import dev.agentx.clarify.files.JsonNumbers;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Instant;
import java.util.Map;
import java.util.TreeMap;

/**
 * {@code agent-status.json} (docs/protocol.md) with jackson-core's streaming API: the file is
 * rewritten under its lock by every operation, so its codec must be cheap even in a cold process.
 */
public final class AgentStatusCodec {
    private final JsonFactory factory = new JsonFactory();

    public byte[] encode(Map<String, AgentStatus> statuses) {
        ByteArrayOutputStream out = new ByteArrayOutputStream(512);
        try (JsonGenerator g = factory.createGenerator(out, JsonEncoding.UTF8)) {
            g.setPrettyPrinter(new DefaultPrettyPrinter().withObjectIndenter(new DefaultIndenter("  ", "\n")));
            g.writeStartObject();
            for (Map.Entry<String, AgentStatus> e : new TreeMap<>(statuses).entrySet()) {
                AgentStatus s = e.getValue();
                g.writeObjectFieldStart(e.getKey());
                g.writeStringField("status", s.status().wire());
                if (s.issue() == null) {
                    g.writeNullField("issue");
                } else {
                    g.writeNumberField("issue", s.issue());
                }
                g.writeStringField("lastActivity", s.lastActivity() == null ? null : s.lastActivity().toString());
                g.writeStringField("clarificationId", s.clarificationId());
                g.writeStringField("waitingOn", s.waitingOn());
                g.writeStringField("respondingTo", s.respondingTo());
                g.writeEndObject();
            }
            g.writeEndObject();
            g.writeRaw('\n');
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return out.toByteArray();
    }

    /** Parses the file; throws {@link JsonProcessingException} naming the problem and its place. */
    public Map<String, AgentStatus> decode(byte[] bytes) throws JsonProcessingException {
        Map<String, AgentStatus> out = new TreeMap<>();
        if (bytes.length == 0) {
            return out;
        }
        try (JsonParser p = factory.createParser(bytes)) {
            if (p.nextToken() != JsonToken.START_OBJECT) {
                throw JsonErrors.problem(p, "agent-status.json must hold one JSON object");
            }
            while (p.nextToken() == JsonToken.FIELD_NAME) {
                String agent = p.currentName();
                if (p.nextToken() != JsonToken.START_OBJECT) {
                    throw JsonErrors.problem(p, "the status of '" + agent + "' must be an object");
                }
                AgentState state = null;
                Integer issue = null;
                Instant last = null;
                String id = null;
                String waiting = null;
                String responding = null;
                while (p.nextToken() == JsonToken.FIELD_NAME) {
                    String field = p.currentName();
                    JsonToken t = p.nextToken();
                    String text = t == JsonToken.VALUE_NULL ? null : p.getValueAsString();
                    try {
                        switch (field) {
                            case "status" -> state = AgentState.fromWire(text);
                            case "issue" -> issue = t == JsonToken.VALUE_NULL ? null : JsonNumbers.intValue(p);
                            case "lastActivity" -> last = text == null ? null : IsoInstant.parse(text);
                            case "clarificationId" -> id = text;
                            case "waitingOn" -> waiting = text;
                            case "respondingTo" -> responding = text;
                            default -> throw JsonErrors.problem(p, "unknown field '" + field + "' in the status of '" + agent + "'");
                        }
                    } catch (RuntimeException e) {
                        throw JsonErrors.problem(p, "field '" + field + "' of '" + agent + "': " + e.getMessage());
                    }
                }
                if (state == null) {
                    throw JsonErrors.problem(p, "the status of '" + agent + "' lacks field 'status'");
                }
                out.put(agent, new AgentStatus(state, issue, last, id, waiting, responding));
            }
        } catch (JsonProcessingException e) {
            throw e;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return out;
    }

}
