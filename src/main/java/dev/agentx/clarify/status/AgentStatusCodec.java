package dev.agentx.clarify.status;

import com.fasterxml.jackson.core.JsonEncoding;
import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.core.util.DefaultIndenter;
import com.fasterxml.jackson.core.util.DefaultPrettyPrinter;
import com.fasterxml.jackson.databind.ObjectReader;
import com.fasterxml.jackson.databind.ObjectWriter;
import com.fasterxml.jackson.databind.exc.IgnoredPropertyException;
import dev.agentx.clarify.files.JsonErrors;
import dev.agentx.clarify.files.StateJson;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.Map;
import java.util.TreeMap;

/**
 * {@code agent-status.json} (docs/protocol.md): an object of {@link AgentStatus} records by
 * agent, bound by Jackson through {@link StateJson}, pretty-printed with the agents in name order
 * and each status's fields in the order the record declares.
 */
public final class AgentStatusCodec {
    public byte[] encode(Map<String, AgentStatus> statuses) {
        ByteArrayOutputStream out = new ByteArrayOutputStream(512);
        try (JsonGenerator g = StateJson.mapper().createGenerator(out, JsonEncoding.UTF8)) {
            Writing.STATUSES.writeValue(g, new TreeMap<>(statuses));
            g.writeRaw('\n');
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return out.toByteArray();
    }

    /**
     * Parses the file; throws {@link JsonProcessingException} naming the problem, the agent and the
     * place. An empty file holds no statuses; of an agent named twice, the last status counts.
     */
    public Map<String, AgentStatus> decode(byte[] bytes) throws JsonProcessingException {
        Map<String, AgentStatus> out = new TreeMap<>();
        if (bytes.length == 0) {
            return out;
        }
        try (JsonParser p = Reading.STATUS.createParser(bytes)) {
            if (p.nextToken() != JsonToken.START_OBJECT) {
                throw JsonErrors.problem(p, "agent-status.json must hold one JSON object");
            }
            while (p.nextToken() == JsonToken.FIELD_NAME) {
                String agent = p.currentName();
                if (p.nextToken() != JsonToken.START_OBJECT) {
                    throw JsonErrors.problem(p, "the status of '" + agent + "' must be an object");
                }
                out.put(agent, read(p, agent));
            }
        } catch (JsonProcessingException e) {
            throw e;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return out;
    }

    /** One agent's status, its problems in the words of the file. */
    private static AgentStatus read(JsonParser p, String agent) throws IOException {
        try {
            return Reading.STATUS.readValue(p);
        } catch (IgnoredPropertyException e) {
            p.finishToken(); // the field's value read, as far as a scalar goes
            throw JsonErrors.problem(p, "unknown field '" + e.getPropertyName() + "' in the status of '" + agent + "'");
        } catch (StateJson.FieldProblem e) {
            throw JsonErrors.problem(e.missing() ? "the status of '" + agent + "' lacks field '" + e.field() + "'"
                    : e.expected() != null ? "field '" + e.field() + "' of '" + agent + "' must be " + e.expected()
                    : "field '" + e.field() + "' of '" + agent + "': " + e.refusal(), e.getLocation());
        }
    }

    /** Reads the annotations of the status records ({@link StateJson#readAnnotations}). */
    public static void readAnnotations() {
        StateJson.readAnnotations(AgentStatus.class, AgentState.class);
    }

    /** Builds the reader and then the writer now, if they are not built yet (see {@code LedgerCodec.prepare}). */
    public static void prepare() {
        Reading.STATUS.getClass();
        Writing.STATUSES.getClass();
    }

    private static final class Reading {
        static final ObjectReader STATUS = StateJson.mapper().readerFor(AgentStatus.class);
    }

    private static final class Writing {
        static final ObjectWriter STATUSES = StateJson.mapper()
                .writerFor(StateJson.mapper().getTypeFactory()
                        .constructMapType(TreeMap.class, String.class, AgentStatus.class))
                .with(new DefaultPrettyPrinter().withObjectIndenter(new DefaultIndenter("  ", "\n")));
    }
}
