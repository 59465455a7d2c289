package dev.agentx.clarify.routing;

import com.fasterxml.jackson.core.JsonEncoding;
import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import dev.agentx.clarify.events.ClarificationEvent;
import dev.agentx.clarify.events.EventType;
import dev.agentx.clarify.ledger.LedgerCodec;
import dev.agentx.clarify.ledger.SharedChange;
import dev.agentx.clarify.protocol.Autonomy;
import dev.agentx.clarify.protocol.ClarificationRecord;
import dev.agentx.clarify.protocol.Ledger;
import dev.agentx.clarify.protocol.Status;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * {@link LedgerChange}s and their {@link Outcome}s as text, for the process that carries out
 * another's change (see {@link dev.agentx.clarify.ledger.LedgerStore#submit}). A change is one
 * flat JSON object named by its {@code kind}; an outcome is a line of JSON (issue, notes, events,
 * replayed) followed by its record as a one-record ledger in the ledger file's own format. Written
 * with Jackson's streaming API: a CLI command loads no data binding for it.
 */
public final class LedgerChangeCodec implements SharedChange.Codec<Outcome> {
    private final JsonFactory json = new JsonFactory();
    private final LedgerCodec ledgers = new LedgerCodec();
    private final java.util.function.BiConsumer<Integer, List<Outcome>> carriedOut;

    /** @param carriedOut what the engine does for the outcomes of other processes' changes it carried out */
    public LedgerChangeCodec(java.util.function.BiConsumer<Integer, List<Outcome>> carriedOut) {
        this.carriedOut = carriedOut;
    }

    @Override
    public void carriedOut(int issue, List<Outcome> forOthers) {
        carriedOut.accept(issue, forOthers);
    }

    // ---- changes -----------------------------------------------------------------------------

    @Override
    public byte[] writeChange(SharedChange<Outcome> change) {
        Map<String, Object> f = new LinkedHashMap<>();
        if (change instanceof LedgerChange.Ask a) {
            f.put("kind", "ask");
            f.put("issue", a.issue());
            f.put("from", a.from());
            f.put("to", a.to());
            f.put("topic", a.topic());
            f.put("blocking", a.blocking());
            f.put("maxRounds", a.maxRounds());
            f.put("at", a.at());
            f.put("staleAfter", a.staleAfter());
            f.put("options", a.options());
            f.put("question", a.question());
            f.put("openQuestionId", a.openQuestionId());
            f.put("autonomy", a.autonomy() == null ? null : a.autonomy().wire());
            f.put("notes", a.notes());
        } else if (change instanceof LedgerChange.Answer a) {
            f.put("kind", "answer");
            f.put("id", a.id());
            f.put("by", a.by());
            f.put("text", a.text());
            f.put("choice", a.choice());
            f.put("at", a.at());
        } else if (change instanceof LedgerChange.FollowUp c) {
            f.put("kind", "followup");
            f.put("id", c.id());
            f.put("by", c.by());
            f.put("text", c.question());
            f.put("at", c.at());
        } else if (change instanceof LedgerChange.Resolve c) {
            f.put("kind", "resolve");
            f.put("id", c.id());
            f.put("by", c.by());
            f.put("text", c.note());
            f.put("at", c.at());
            f.put("asRequester", c.asRequester());
        } else if (change instanceof LedgerChange.Escalate c) {
            f.put("kind", "escalate");
            f.put("id", c.id());
            f.put("by", c.by());
            f.put("text", c.reason());
            f.put("at", c.at());
        } else if (change instanceof LedgerChange.Abandon c) {
            f.put("kind", "abandon");
            f.put("id", c.id());
            f.put("by", c.by());
            f.put("text", c.reason());
            f.put("at", c.at());
        } else if (change instanceof LedgerChange.Accept c) {
            f.put("kind", "accept");
            f.put("id", c.id());
            f.put("by", c.by());
            f.put("at", c.at());
        } else if (change instanceof LedgerChange.Propose c) {
            f.put("kind", "propose");
            f.put("id", c.id());
            f.put("round", c.round());
            f.put("text", c.text());
            f.put("choice", c.choice());
            f.put("channel", c.channel());
            f.put("at", c.at());
        } else {
            throw new IllegalArgumentException("not a change of this codec: " + change);
        }
        f.put("request", ((LedgerChange) change).request());
        return write(f);
    }

    /** The change another process wrote, to be carried out for it: its key is written (see {@link LedgerChange}). */
    @Override
    public SharedChange<Outcome> readChange(byte[] text) {
        return change(text).forAnother();
    }

    /** The change {@link #writeChange} wrote, as it was. */
    LedgerChange change(byte[] text) {
        Fields f = new Fields(read(text));
        String kind = f.string("kind");
        if (kind == null) {
            throw new IllegalArgumentException("a change without a kind");
        }
        return switch (kind) {
            case "ask" -> new LedgerChange.Ask(f.integer("issue"), f.string("from"), f.string("to"), f.string("topic"),
                    f.bool("blocking"), f.integer("maxRounds"), f.instant("at"), f.instant("staleAfter"),
                    f.strings("options"), f.string("question"), f.string("openQuestionId"),
                    f.string("autonomy") == null ? null : Autonomy.fromWire(f.string("autonomy")), f.strings("notes"),
                    f.string("request"));
            case "answer" -> new LedgerChange.Answer(f.string("id"), f.string("by"), f.string("text"),
                    f.optionalInteger("choice"), f.instant("at"), f.string("request"));
            case "followup" -> new LedgerChange.FollowUp(f.string("id"), f.string("by"), f.string("text"),
                    f.instant("at"), f.string("request"));
            case "resolve" -> new LedgerChange.Resolve(f.string("id"), f.string("by"), f.string("text"),
                    f.instant("at"), f.string("request"), f.bool("asRequester"));
            case "escalate" -> new LedgerChange.Escalate(f.string("id"), f.string("by"), f.string("text"),
                    f.instant("at"), f.string("request"));
            case "abandon" -> new LedgerChange.Abandon(f.string("id"), f.string("by"), f.string("text"),
                    f.instant("at"), f.string("request"));
            case "accept" -> new LedgerChange.Accept(f.string("id"), f.string("by"), f.instant("at"),
                    f.string("request"));
            case "propose" -> new LedgerChange.Propose(f.string("id"), f.integer("round"), f.string("text"),
                    f.optionalInteger("choice"), f.string("channel"), f.instant("at"), f.string("request"));
            default -> throw new IllegalArgumentException("a change of kind '" + kind + "', which this version "
                    + "does not know");
        };
    }

    // ---- outcomes ----------------------------------------------------------------------------

    @Override
    public byte[] writeResult(Outcome o) {
        if (o == null) {
            return "null\n".getBytes(StandardCharsets.UTF_8);
        }
        Map<String, Object> head = new LinkedHashMap<>();
        head.put("issue", o.issue());
        head.put("replayed", o.replayed());
        head.put("notes", o.notes());
        List<String> events = new ArrayList<>();
        for (ClarificationEvent e : o.events()) {
            // every event of a change's outcome is of its record: the type, time, round and status
            // rebuild it (a recovered outcome's record may have moved on since its event)
            if (!e.equals(ClarificationEvent.of(e.event(), o.issue(), o.record(), e.round(), e.status(), e.timestamp()))) {
                throw new IllegalArgumentException("an event of another record than the outcome's: " + e);
            }
            events.add(e.event().wire() + " " + e.timestamp() + " " + e.round() + " " + e.status().wire());
        }
        head.put("events", events);
        byte[] first = write(head);
        byte[] record = ledgers.encode(new Ledger(o.issue(), List.of(o.record())));
        byte[] out = Arrays.copyOf(first, first.length + 1 + record.length);
        out[first.length] = '\n';
        System.arraycopy(record, 0, out, first.length + 1, record.length);
        return out;
    }

    @Override
    public Outcome readResult(byte[] text) {
        int eol = 0;
        while (eol < text.length && text[eol] != '\n') {
            eol++;
        }
        if (new String(text, 0, eol, StandardCharsets.UTF_8).equals("null")) {
            return null;
        }
        Fields f = new Fields(read(Arrays.copyOf(text, eol)));
        Ledger one = ledgers.decode(Arrays.copyOfRange(text, Math.min(eol + 1, text.length), text.length));
        if (one.clarifications().size() != 1) {
            throw new IllegalArgumentException("an outcome without its record");
        }
        int issue = f.integer("issue");
        ClarificationRecord record = one.clarifications().get(0);
        List<ClarificationEvent> events = new ArrayList<>();
        for (String e : f.strings("events")) {
            String[] parts = e.split(" ");
            if (parts.length != 4) {
                throw new IllegalArgumentException("an event this version does not know: " + e);
            }
            events.add(ClarificationEvent.of(EventType.fromWire(parts[0]), issue, record, Integer.parseInt(parts[2]),
                    Status.fromWire(parts[3]), parseInstant(parts[1])));
        }
        // a result read here was carried out by another process, which mirrored its statuses (carriedOut)
        return new Outcome(issue, record, events, f.strings("notes"), f.bool("replayed"), true);
    }

    // ---- flat JSON ---------------------------------------------------------------------------

    private byte[] write(Map<String, Object> fields) {
        ByteArrayOutputStream out = new ByteArrayOutputStream(256);
        try (JsonGenerator g = json.createGenerator(out, JsonEncoding.UTF8)) {
            g.writeStartObject();
            for (Map.Entry<String, Object> e : fields.entrySet()) {
                Object v = e.getValue();
                if (v == null) {
                    continue;
                }
                g.writeFieldName(e.getKey());
                if (v instanceof String s) {
                    g.writeString(s);
                } else if (v instanceof Integer i) {
                    g.writeNumber(i);
                } else if (v instanceof Boolean b) {
                    g.writeBoolean(b);
                } else if (v instanceof Instant t) {
                    g.writeString(t.toString());
                } else if (v instanceof List<?> list) {
                    g.writeStartArray();
                    for (Object s : list) {
                        g.writeString((String) s);
                    }
                    g.writeEndArray();
                } else {
                    throw new IllegalArgumentException("cannot write " + v.getClass());
                }
            }
            g.writeEndObject();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return out.toByteArray();
    }

    private Map<String, Object> read(byte[] text) {
        Map<String, Object> out = new LinkedHashMap<>();
        try (JsonParser p = json.createParser(text)) {
            if (p.nextToken() != JsonToken.START_OBJECT) {
                throw new IllegalArgumentException("not a JSON object");
            }
            while (p.nextToken() == JsonToken.FIELD_NAME) {
                String name = p.currentName();
                JsonToken t = p.nextToken();
                switch (t) {
                    case VALUE_STRING -> out.put(name, p.getText());
                    case VALUE_NUMBER_INT -> out.put(name, p.getIntValue());
                    case VALUE_TRUE, VALUE_FALSE -> out.put(name, p.getBooleanValue());
                    case VALUE_NULL -> out.put(name, null);
                    case START_ARRAY -> {
                        List<String> list = new ArrayList<>();
                        while (p.nextToken() == JsonToken.VALUE_STRING) {
                            list.add(p.getText());
                        }
                        if (p.currentToken() != JsonToken.END_ARRAY) {
                            throw new IllegalArgumentException("field " + name + ": an array of strings expected");
                        }
                        out.put(name, list);
                    }
                    default -> throw new IllegalArgumentException("field " + name + ": unexpected " + t);
                }
            }
        } catch (IOException e) {
            throw new IllegalArgumentException("unreadable JSON: " + e.getMessage(), e);
        }
        return out;
    }

    private static Instant parseInstant(String s) {
        try {
            return Instant.parse(s);
        } catch (DateTimeParseException e) {
            throw new IllegalArgumentException("not a time: " + s, e);
        }
    }

    /** Typed access to the fields read, with a clear error for a missing or mistyped one. */
    private record Fields(Map<String, Object> map) {
        String string(String name) {
            Object v = map.get(name);
            if (v != null && !(v instanceof String)) {
                throw new IllegalArgumentException("field " + name + ": a string expected");
            }
            return (String) v;
        }

        Integer optionalInteger(String name) {
            Object v = map.get(name);
            if (v != null && !(v instanceof Integer)) {
                throw new IllegalArgumentException("field " + name + ": a number expected");
            }
            return (Integer) v;
        }

        int integer(String name) {
            Integer v = optionalInteger(name);
            if (v == null) {
                throw new IllegalArgumentException("field " + name + " is missing");
            }
            return v;
        }

        boolean bool(String name) {
            Object v = map.get(name);
            if (!(v instanceof Boolean b)) {
                throw new IllegalArgumentException("field " + name + ": true or false expected");
            }
            return b;
        }

        Instant instant(String name) {
            String s = string(name);
            return s == null ? null : parseInstant(s);
        }

        @SuppressWarnings("unchecked")
        List<String> strings(String name) {
            Object v = map.get(name);
            if (v == null) {
                return List.of();
            }
            if (!(v instanceof List<?>)) {
                throw new IllegalArgumentException("field " + name + ": an array expected");
            }
            return (List<String>) v;
        }
    }
}
