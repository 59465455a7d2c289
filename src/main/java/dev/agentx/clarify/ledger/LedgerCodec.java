package dev.agentx.clarify.ledger;

import com.fasterxml.jackson.core.JsonEncoding;
import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.core.StreamReadFeature;
import com.fasterxml.jackson.core.util.DefaultIndenter;
import com.fasterxml.jackson.core.util.DefaultPrettyPrinter;
import dev.agentx.clarify.files.IsoInstant;
import dev.agentx.clarify.files.JsonErrors;
import dev.agentx.clarify.files.JsonNumbers;
import dev.agentx.clarify.protocol.Autonomy;
import dev.agentx.clarify.protocol.ClarificationId;
import dev.agentx.clarify.protocol.ClarificationRecord;
import dev.agentx.clarify.protocol.EntryType;
import dev.agentx.clarify.protocol.Ledger;
import dev.agentx.clarify.protocol.Status;
import dev.agentx.clarify.protocol.ThreadEntry;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Ledger JSON (docs/protocol.md), pretty-printed with fields in schema order. Written with the
 * streaming API of jackson-core: every command reads ledgers, and the streaming codec keeps the
 * CLI's start-up light. Reading is strict: an unknown field is refused rather than silently dropped
 * on the next write, and every problem names its line and column.
 */
public final class LedgerCodec {
    private static final Set<String> RECORD_FIELDS = Set.of("id", "from", "to", "topic", "blocking", "status",
            "round", "maxRounds", "created", "staleAfter", "reaskedAt", "resolvedAt", "options", "autonomy", "thread");
    private static final List<String> REQUIRED_RECORD_FIELDS = List.of("id", "from", "to", "topic", "blocking",
            "status", "round", "maxRounds", "created", "staleAfter", "thread");
    private static final Set<String> ENTRY_FIELDS = Set.of("round", "from", "type", "body", "timestamp", "choice",
            "proposed", "acceptedBy", "openQuestionId", "request");

    private final JsonFactory factory = JsonFactory.builder()
            .enable(StreamReadFeature.STRICT_DUPLICATE_DETECTION).build();

    public byte[] encode(Ledger ledger) {
        return encode(ledger, Map.of());
    }

    /**
     * As {@link #encode(Ledger)}; a record found in {@code texts} (by identity: the very instance a
     * {@link #decode(byte[], Set, Map)} returned) is written as the text it was read from, which this
     * codec wrote in the first place. A change of one record in a long ledger so costs the encoding
     * of that record, not of the whole ledger, which is what a writer does while it holds the lock.
     */
    public byte[] encode(Ledger ledger, Map<ClarificationRecord, String> texts) {
        ByteArrayOutputStream out = new ByteArrayOutputStream(1024);
        try (JsonGenerator g = factory.createGenerator(out, JsonEncoding.UTF8)) {
            g.setPrettyPrinter(new DefaultPrettyPrinter()
                    .withObjectIndenter(new DefaultIndenter("  ", "\n"))
                    .withArrayIndenter(new DefaultIndenter("  ", "\n")));
            g.writeStartObject();
            g.writeNumberField("issueNumber", ledger.issueNumber());
            g.writeArrayFieldStart("clarifications");
            for (ClarificationRecord r : ledger.clarifications()) {
                String text = texts.get(r);
                if (text != null) {
                    g.writeRawValue(text);
                } else {
                    writeRecord(g, r);
                }
            }
            g.writeEndArray();
            g.writeEndObject();
            g.writeRaw('\n');
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return out.toByteArray();
    }

    private static void writeRecord(JsonGenerator g, ClarificationRecord r) throws IOException {
        g.writeStartObject();
        g.writeStringField("id", r.id());
        g.writeStringField("from", r.from());
        g.writeStringField("to", r.to());
        g.writeStringField("topic", r.topic());
        g.writeBooleanField("blocking", r.blocking());
        g.writeStringField("status", r.status().wire());
        g.writeNumberField("round", r.round());
        g.writeNumberField("maxRounds", r.maxRounds());
        g.writeStringField("created", r.created().toString());
        g.writeStringField("staleAfter", r.staleAfter().toString());
        if (r.reaskedAt() != null) {
            g.writeStringField("reaskedAt", r.reaskedAt().toString());
        }
        if (r.resolvedAt() == null) {
            g.writeNullField("resolvedAt");
        } else {
            g.writeStringField("resolvedAt", r.resolvedAt().toString());
        }
        if (!r.options().isEmpty()) {
            g.writeArrayFieldStart("options");
            for (String o : r.options()) {
                g.writeString(o);
            }
            g.writeEndArray();
        }
        if (r.autonomy() != null) {
            g.writeStringField("autonomy", r.autonomy().wire());
        }
        g.writeArrayFieldStart("thread");
        for (ThreadEntry e : r.thread()) {
            g.writeStartObject();
            g.writeNumberField("round", e.round());
            g.writeStringField("from", e.from());
            g.writeStringField("type", e.type().wire());
            g.writeStringField("body", e.body());
            g.writeStringField("timestamp", e.timestamp().toString());
            if (e.choice() != null) {
                g.writeNumberField("choice", e.choice());
            }
            if (e.proposed() != null) {
                g.writeBooleanField("proposed", e.proposed());
            }
            if (e.acceptedBy() != null) {
                g.writeStringField("acceptedBy", e.acceptedBy());
            }
            if (e.openQuestionId() != null) {
                g.writeStringField("openQuestionId", e.openQuestionId());
            }
            if (e.request() != null) {
                g.writeStringField("request", e.request());
            }
            g.writeEndObject();
        }
        g.writeEndArray();
        g.writeEndObject();
    }

    /** Decodes and checks a ledger; throws {@link IllegalArgumentException} saying what is wrong and where. */
    public Ledger decode(byte[] bytes) {
        return decode(bytes, null);
    }

    /**
     * As {@link #decode(byte[])}; with {@code unknown} not null, a field this version does not know
     * (a newer version's ledger) is skipped and named in {@code unknown} instead of refused: such a
     * ledger can be read, but writing it back would lose the field, so only a strict decode may lead
     * to a write.
     */
    public Ledger decode(byte[] bytes, Set<String> unknown) {
        return decode(bytes, unknown, null);
    }

    /**
     * As {@link #decode(byte[], Set)}; with {@code texts} not null, each record's text as read is put
     * there, keyed by the record (an {@link java.util.IdentityHashMap}), for {@link #encode(Ledger, Map)}.
     */
    public Ledger decode(byte[] bytes, Set<String> unknown, Map<ClarificationRecord, String> texts) {
        return decode(bytes, unknown, texts, Map.of());
    }

    /**
     * As {@link #decode(byte[], Set, Map)} ({@code texts} not null); a record whose text is a key of
     * {@code decoded} (records this codec decoded before, by their text, none with a field it does
     * not know) is that record, not decoded again. Reading a ledger that changed in a few records
     * since it was last read so costs a scan of the text and the decoding of those records: what
     * a process pays that reads the ledgers other processes write.
     */
    public Ledger decode(byte[] bytes, Set<String> unknown, Map<ClarificationRecord, String> texts,
                         Map<String, ClarificationRecord> decoded) {
        if (!decoded.isEmpty()) {
            try (JsonParser p = factory.createParser(bytes)) {
                Ledger ledger = readLedger(p, unknown, bytes, texts, decoded);
                if (p.nextToken() == null) {
                    check(ledger);
                    return ledger;
                }
            } catch (IOException | RuntimeException e) {
                // a damaged ledger: decoded again from the start below, for the message that says where
            }
            if (unknown != null) {
                unknown.clear();
            }
            texts.clear();
        }
        try (JsonParser p = factory.createParser(bytes)) {
            Ledger ledger = readLedger(p, unknown, bytes, texts, Map.of());
            if (p.nextToken() != null) {
                throw JsonErrors.problem(p, "unexpected content after the ledger object");
            }
            check(ledger);
            return ledger;
        } catch (JsonProcessingException e) {
            throw new IllegalArgumentException(JsonErrors.describe(e), e);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Skips the value of an unknown field when reading leniently; false when reading strictly. */
    private static boolean skipped(JsonParser p, Set<String> unknown, String where) throws IOException {
        if (unknown == null) {
            return false;
        }
        unknown.add(where);
        p.skipChildren();
        return true;
    }

    private Ledger readLedger(JsonParser p, Set<String> unknown, byte[] bytes,
                              Map<ClarificationRecord, String> texts, Map<String, ClarificationRecord> decoded)
            throws IOException {
        if (p.nextToken() != JsonToken.START_OBJECT) {
            throw JsonErrors.problem(p, "the file must hold one JSON object {\"issueNumber\": N, \"clarifications\": [...]}");
        }
        Integer issue = null;
        List<ClarificationRecord> records = null;
        while (p.nextToken() == JsonToken.FIELD_NAME) {
            String field = p.currentName();
            p.nextToken();
            switch (field) {
                case "issueNumber" -> issue = integer(p, field);
                case "clarifications" -> {
                    expect(p, JsonToken.START_ARRAY, field, "an array");
                    records = new ArrayList<>();
                    while (p.nextToken() != JsonToken.END_ARRAY) {
                        if (!decoded.isEmpty() && p.currentToken() == JsonToken.START_OBJECT) {
                            records.add(known(p, unknown, bytes, texts, decoded));
                            continue;
                        }
                        long start = texts == null ? -1 : p.currentTokenLocation().getByteOffset();
                        ClarificationRecord r = readRecord(p, unknown);
                        records.add(r);
                        long end = texts == null ? -1 : p.currentLocation().getByteOffset();
                        if (texts != null && start >= 0 && end > start) {
                            texts.put(r, new String(bytes, (int) start, (int) (end - start), StandardCharsets.UTF_8));
                        }
                    }
                }
                default -> {
                    if (!skipped(p, unknown, field)) {
                        throw JsonErrors.problem(p, "unknown field '" + field + "'");
                    }
                }
            }
        }
        if (issue == null || records == null) {
            throw JsonErrors.problem(p, "fields 'issueNumber' and 'clarifications' are required");
        }
        if (issue < 1) {
            throw JsonErrors.problem(p, "issueNumber must be positive, got " + issue);
        }
        return new Ledger(issue, records);
    }

    /** The record that starts at the parser: the one decoded before if its text is the same, else decoded. */
    private ClarificationRecord known(JsonParser p, Set<String> unknown, byte[] bytes,
                                      Map<ClarificationRecord, String> texts, Map<String, ClarificationRecord> decoded)
            throws IOException {
        int start = (int) p.currentTokenLocation().getByteOffset();
        p.skipChildren();
        int end = (int) p.currentLocation().getByteOffset();
        String text = new String(bytes, start, end - start, StandardCharsets.UTF_8);
        ClarificationRecord r = decoded.get(text);
        if (r == null) {
            try (JsonParser one = factory.createParser(bytes, start, end - start)) {
                one.nextToken();
                r = readRecord(one, unknown);
            }
        }
        texts.put(r, text);
        return r;
    }

    private static ClarificationRecord readRecord(JsonParser p, Set<String> unknown) throws IOException {
        expect(p, JsonToken.START_OBJECT, "clarifications[]", "an object");
        Set<String> seen = new HashSet<>();
        String id = null;
        String from = null;
        String to = null;
        String topic = null;
        boolean blocking = false;
        Status status = null;
        int round = 0;
        int maxRounds = 0;
        Instant created = null;
        Instant staleAfter = null;
        Instant resolvedAt = null;
        Instant reaskedAt = null;
        List<String> options = List.of();
        Autonomy autonomy = null;
        List<ThreadEntry> thread = null;
        while (p.nextToken() == JsonToken.FIELD_NAME) {
            String field = p.currentName();
            if (!RECORD_FIELDS.contains(field)) {
                p.nextToken();
                if (skipped(p, unknown, "clarifications[]." + field)) {
                    continue;
                }
                throw JsonErrors.problem(p, "unknown field '" + field + "' in a clarification record");
            }
            seen.add(field);
            p.nextToken();
            switch (field) {
                case "id" -> id = string(p, field);
                case "from" -> from = string(p, field);
                case "to" -> to = string(p, field);
                case "topic" -> topic = string(p, field);
                case "blocking" -> blocking = bool(p, field);
                case "status" -> status = status(p);
                case "round" -> round = integer(p, field);
                case "maxRounds" -> maxRounds = integer(p, field);
                case "created" -> created = instant(p, field);
                case "staleAfter" -> staleAfter = instant(p, field);
                case "reaskedAt" -> reaskedAt = instant(p, field);
                case "resolvedAt" -> resolvedAt = p.currentToken() == JsonToken.VALUE_NULL ? null : instant(p, field);
                case "options" -> options = strings(p, field);
                case "autonomy" -> autonomy = autonomy(p);
                case "thread" -> thread = readThread(p, unknown);
                default -> throw new IllegalStateException(field);
            }
        }
        for (String required : REQUIRED_RECORD_FIELDS) {
            if (!seen.contains(required)) {
                throw JsonErrors.problem(p, "record " + (id == null ? "" : id + " ") + "lacks field '" + required + "'");
            }
        }
        return new ClarificationRecord(id, from, to, topic, blocking, status, round, maxRounds, created, staleAfter,
                resolvedAt, options, thread, autonomy, reaskedAt);
    }

    private static List<ThreadEntry> readThread(JsonParser p, Set<String> unknown) throws IOException {
        expect(p, JsonToken.START_ARRAY, "thread", "an array");
        List<ThreadEntry> out = new ArrayList<>();
        while (p.nextToken() != JsonToken.END_ARRAY) {
            expect(p, JsonToken.START_OBJECT, "thread[]", "an object");
            Integer round = null;
            String from = null;
            EntryType type = null;
            String body = null;
            Instant at = null;
            Integer choice = null;
            Boolean proposed = null;
            String acceptedBy = null;
            String openQuestionId = null;
            String request = null;
            while (p.nextToken() == JsonToken.FIELD_NAME) {
                String field = p.currentName();
                if (!ENTRY_FIELDS.contains(field)) {
                    p.nextToken();
                    if (skipped(p, unknown, "thread[]." + field)) {
                        continue;
                    }
                    throw JsonErrors.problem(p, "unknown field '" + field + "' in a thread entry");
                }
                p.nextToken();
                switch (field) {
                    case "round" -> round = integer(p, field);
                    case "from" -> from = string(p, field);
                    case "type" -> type = entryType(p);
                    case "body" -> body = string(p, field);
                    case "timestamp" -> at = instant(p, field);
                    case "choice" -> choice = integer(p, field);
                    case "proposed" -> proposed = bool(p, field);
                    case "acceptedBy" -> acceptedBy = string(p, field);
                    case "openQuestionId" -> openQuestionId = string(p, field);
                    case "request" -> request = string(p, field);
                    default -> throw new IllegalStateException(field);
                }
            }
            if (round == null || from == null || type == null || body == null || at == null) {
                throw JsonErrors.problem(p, "a thread entry needs round, from, type, body and timestamp");
            }
            if (choice != null && choice < 0) {
                throw JsonErrors.problem(p, "field 'choice' must be a 0-based option index, got " + choice);
            }
            out.add(new ThreadEntry(round, from, type, body, at, choice, proposed, acceptedBy, openQuestionId,
                    request));
        }
        return out;
    }

    private static void expect(JsonParser p, JsonToken token, String field, String what) throws IOException {
        if (p.currentToken() != token) {
            throw JsonErrors.problem(p, "field '" + field + "' must be " + what);
        }
    }

    private static String string(JsonParser p, String field) throws IOException {
        if (p.currentToken() != JsonToken.VALUE_STRING) {
            throw JsonErrors.problem(p, "field '" + field + "' must be a string");
        }
        return p.getText();
    }

    private static int integer(JsonParser p, String field) throws IOException {
        if (p.currentToken() != JsonToken.VALUE_NUMBER_INT) {
            throw JsonErrors.problem(p, "field '" + field + "' must be an integer");
        }
        return JsonNumbers.intValue(p);
    }

    private static boolean bool(JsonParser p, String field) throws IOException {
        if (!p.currentToken().isBoolean()) {
            throw JsonErrors.problem(p, "field '" + field + "' must be true or false");
        }
        return p.getBooleanValue();
    }

    private static Instant instant(JsonParser p, String field) throws IOException {
        String s = string(p, field);
        try {
            return IsoInstant.parse(s);
        } catch (DateTimeParseException e) {
            throw JsonErrors.problem(p, "field '" + field + "' must be an ISO-8601 instant like 2026-02-26T10:00:00Z, got '" + s + "'");
        }
    }

    private static List<String> strings(JsonParser p, String field) throws IOException {
        expect(p, JsonToken.START_ARRAY, field, "an array of strings");
        List<String> out = new ArrayList<>();
        while (p.nextToken() != JsonToken.END_ARRAY) {
            out.add(string(p, field));
        }
        return out;
    }

    private static Status status(JsonParser p) throws IOException {
        String s = string(p, "status");
        try {
            return Status.fromWire(s);
        } catch (IllegalArgumentException e) {
            throw JsonErrors.problem(p, e.getMessage());
        }
    }

    private static Autonomy autonomy(JsonParser p) throws IOException {
        String s = string(p, "autonomy");
        try {
            return Autonomy.fromWire(s);
        } catch (IllegalArgumentException e) {
            throw JsonErrors.problem(p, e.getMessage());
        }
    }

    private static EntryType entryType(JsonParser p) throws IOException {
        String s = string(p, "type");
        try {
            return EntryType.fromWire(s);
        } catch (IllegalArgumentException e) {
            throw JsonErrors.problem(p, e.getMessage());
        }
    }

    private static void check(Ledger ledger) {
        Set<String> ids = new HashSet<>();
        for (ClarificationRecord r : ledger.clarifications()) {
            ClarificationId id;
            try {
                id = ClarificationId.parse(r.id());
            } catch (RuntimeException e) {
                throw new IllegalArgumentException("record id '" + r.id() + "' is not of the form CLR-<issue>-<seq>");
            }
            if (id.issue() != ledger.issueNumber()) {
                throw new IllegalArgumentException("record " + r.id() + " belongs to issue " + id.issue()
                        + ", not " + ledger.issueNumber());
            }
            if (!ids.add(r.id())) {
                throw new IllegalArgumentException("record id " + r.id() + " appears twice");
            }
            if (r.round() < 1 || r.maxRounds() < 1) {
                throw new IllegalArgumentException("record " + r.id() + " has round " + r.round()
                        + " and maxRounds " + r.maxRounds() + "; both must be at least 1");
            }
        }
    }
}
