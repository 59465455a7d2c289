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
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
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

    /**
     * A ledger with the bytes it was read from or written as, and the offset just past each of its
     * records in them: the base from which a later {@link #decode(byte[], Set, Encoded)} or
     * {@link #encode(Ledger, Encoded)} reuses what has not changed. Only a ledger decoded with no
     * field this version does not know (or encoded) may serve as a base: its records are taken as
     * they are.
     */
    record Encoded(Ledger ledger, byte[] bytes, int[] ends) {
    }

    public byte[] encode(Ledger ledger) {
        return encode(ledger, null).bytes();
    }

    /**
     * As {@link #encode(Ledger)}; with a {@code base} (the ledger as last read or written here, or
     * null), the records that {@code ledger} shares with the base at its start and at its end (the
     * very instances) are copied as the base's bytes, and only those in between are encoded. A
     * writer holding the lock so pays for the records it changed, not for the whole ledger.
     */
    Encoded encode(Ledger ledger, Encoded base) {
        if (base == null || base.ledger().issueNumber() != ledger.issueNumber()) {
            return encodeWhole(ledger).encoded(ledger);
        }
        List<ClarificationRecord> now = ledger.clarifications();
        List<ClarificationRecord> was = base.ledger().clarifications();
        int k = 0; // records shared at the start
        while (k < now.size() && k < was.size() && now.get(k) == was.get(k)) {
            k++;
        }
        if (k == 0) {
            return encodeWhole(ledger).encoded(ledger);
        }
        int s = 0; // records shared at the end, after the first k
        while (s < now.size() - k && s < was.size() - k && now.get(now.size() - 1 - s) == was.get(was.size() - 1 - s)) {
            s++;
        }
        int j = was.size() - s; // the base's first record of the shared end
        byte[] a = base.bytes();
        int[] ends = base.ends();
        int head = ends[k - 1]; // the base's bytes up to the end of the last record shared at the start
        int tail = ends[j - 1]; // and from the end of the record before the shared end: a separator, or ']'...
        Whole mid = k + s == now.size() ? null : encodeWhole(new Ledger(ledger.issueNumber(), now.subList(k, now.size() - s)));
        // in a whole encoding, the first record's lead after '[' is what a separator writes after ','
        int midLength = mid == null ? 0 : 1 + mid.ends()[mid.ends().length - 1] - mid.array();
        byte[] out = new byte[head + midLength + a.length - tail];
        System.arraycopy(a, 0, out, 0, head);
        if (mid != null) {
            out[head] = ',';
            System.arraycopy(mid.bytes(), mid.array(), out, head + 1, midLength - 1);
        }
        System.arraycopy(a, tail, out, head + midLength, a.length - tail);
        int[] outEnds = new int[now.size()];
        System.arraycopy(ends, 0, outEnds, 0, k);
        for (int i = 0; mid != null && i < mid.ends().length; i++) {
            outEnds[k + i] = head + 1 + mid.ends()[i] - mid.array();
        }
        int delta = out.length - a.length;
        for (int i = 0; i < s; i++) {
            outEnds[now.size() - s + i] = ends[j + i] + delta;
        }
        return new Encoded(ledger, out, outEnds);
    }

    /** A whole encoding: its bytes, the offset past each record and the offset just past the records' '['. */
    private record Whole(byte[] bytes, int[] ends, int array) {
        Encoded encoded(Ledger ledger) {
            return new Encoded(ledger, bytes, ends);
        }
    }

    private Whole encodeWhole(Ledger ledger) {
        ByteArrayOutputStream out = new ByteArrayOutputStream(1024);
        int[] ends = new int[ledger.clarifications().size()];
        int array;
        try (JsonGenerator g = factory.createGenerator(out, JsonEncoding.UTF8)) {
            g.setPrettyPrinter(new DefaultPrettyPrinter()
                    .withObjectIndenter(new DefaultIndenter("  ", "\n"))
                    .withArrayIndenter(new DefaultIndenter("  ", "\n")));
            g.writeStartObject();
            g.writeNumberField("issueNumber", ledger.issueNumber());
            g.writeArrayFieldStart("clarifications");
            array = out.size() + g.getOutputBuffered();
            int i = 0;
            for (ClarificationRecord r : ledger.clarifications()) {
                writeRecord(g, r);
                ends[i++] = out.size() + g.getOutputBuffered();
            }
            g.writeEndArray();
            g.writeEndObject();
            g.writeRaw('\n');
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return new Whole(out.toByteArray(), ends, array);
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
        return decode(bytes, unknown, null).ledger();
    }

    /**
     * As {@link #decode(byte[], Set)}, with the offsets of the records; with a {@code base} (this
     * ledger as last read or written here, or null), only the bytes that differ from the base's are
     * decoded: the records before the first difference and after the last are the base's. Reading
     * a ledger that changed in a few records since it was last read so costs a comparison of the
     * bytes and the decoding of those records: what a process pays that reads the ledgers other
     * processes write.
     */
    Encoded decode(byte[] bytes, Set<String> unknown, Encoded base) {
        if (base != null) {
            Encoded changed = decodeChanged(bytes, unknown, base);
            if (changed != null) {
                return changed;
            }
            if (unknown != null) {
                unknown.clear();
            }
        }
        try (JsonParser p = factory.createParser(bytes)) {
            Ends ends = new Ends();
            Ledger ledger = readLedger(p, unknown, ends);
            if (p.nextToken() != null) {
                throw JsonErrors.problem(p, "unexpected content after the ledger object");
            }
            check(ledger);
            return new Encoded(ledger, bytes, ends.toArray());
        } catch (JsonProcessingException e) {
            throw new IllegalArgumentException(JsonErrors.describe(e), e);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * {@code bytes} decoded from {@code base} and the records between the bytes' first and last
     * difference from it; null when that cannot be told (a difference before the first record's
     * end, anything but records between, any problem: the caller decodes the whole, which also
     * says where a problem is).
     */
    private Encoded decodeChanged(byte[] b, Set<String> unknown, Encoded base) {
        byte[] a = base.bytes();
        int[] ends = base.ends();
        int n = ends.length;
        int m = Arrays.mismatch(a, b);
        if (m < 0) {
            return base;
        }
        int k = 0; // the base's records wholly before the first difference: theirs are the same bytes
        for (int lo = 0, hi = n; lo < hi; ) {
            int mid = (lo + hi) >>> 1;
            if (ends[mid] <= m) {
                k = mid + 1;
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        if (k == 0) {
            return null;
        }
        int limit = Math.min(a.length, b.length) - m;
        int s = 0; // the bytes shared at the end, none of them before the first difference
        while (s < limit && a[a.length - 1 - s] == b[b.length - 1 - s]) {
            s++;
        }
        // the base's first record that starts in the shared end: from there on the bytes parse as they did
        int j = n;
        for (int lo = k, hi = n; lo < hi; ) {
            int mid = (lo + hi) >>> 1;
            int start = afterSeparator(a, ends[mid - 1]);
            if (start >= 0 && start >= a.length - s) {
                j = mid;
                hi = mid;
            } else {
                lo = mid + 1;
            }
        }
        int delta = b.length - a.length;
        int stop = j < n ? afterSeparator(a, ends[j - 1]) + delta : -1;
        List<ClarificationRecord> records = new ArrayList<>(n + 4);
        records.addAll(base.ledger().clarifications().subList(0, k));
        Ends outEnds = new Ends();
        for (int i = 0; i < k; i++) {
            outEnds.add(ends[i]);
        }
        int fresh = records.size();
        int pos = ends[k - 1];
        try {
            while (true) {
                pos = skipSpace(b, pos);
                if (pos < b.length && b[pos] == ',') {
                    pos = skipSpace(b, pos + 1);
                    if (pos == stop) {
                        break;
                    }
                    if (stop >= 0 && pos > stop) {
                        return null;
                    }
                    try (JsonParser p = factory.createParser(b, pos, b.length - pos)) {
                        p.nextToken();
                        records.add(readRecord(p, unknown));
                        pos += (int) p.currentLocation().getByteOffset();
                        outEnds.add(pos);
                    }
                } else if (stop < 0 && pos < b.length && b[pos] == ']') {
                    pos = skipSpace(b, pos + 1);
                    if (pos >= b.length || b[pos] != '}' || skipSpace(b, pos + 1) != b.length) {
                        return null;
                    }
                    break;
                } else {
                    return null;
                }
            }
        } catch (IOException | RuntimeException e) {
            return null;
        }
        int changed = records.size() - fresh;
        records.addAll(base.ledger().clarifications().subList(j, n));
        for (int i = j; i < n; i++) {
            outEnds.add(ends[i] + delta);
        }
        Ledger ledger = new Ledger(base.ledger().issueNumber(), records);
        try {
            Set<String> ids = new HashSet<>();
            for (ClarificationRecord r : ledger.clarifications()) {
                if (!ids.add(r.id())) {
                    return null;
                }
            }
            for (ClarificationRecord r : records.subList(fresh, fresh + changed)) {
                checkRecord(r, ledger.issueNumber());
            }
        } catch (IllegalArgumentException e) {
            return null;
        }
        return new Encoded(ledger, b, outEnds.toArray());
    }

    /** The offset of the value after the separator at or after {@code from}, or -1 if no ',' follows. */
    private static int afterSeparator(byte[] bytes, int from) {
        int pos = skipSpace(bytes, from);
        return pos < bytes.length && bytes[pos] == ',' ? skipSpace(bytes, pos + 1) : -1;
    }

    private static int skipSpace(byte[] bytes, int pos) {
        while (pos < bytes.length && (bytes[pos] == ' ' || bytes[pos] == '\n' || bytes[pos] == '\r' || bytes[pos] == '\t')) {
            pos++;
        }
        return pos;
    }

    /** The offsets past each record, as a decode meets them. */
    private static final class Ends {
        private int[] values = new int[32];
        private int size;

        void add(int end) {
            if (size == values.length) {
                values = Arrays.copyOf(values, size * 2);
            }
            values[size++] = end;
        }

        int[] toArray() {
            return Arrays.copyOf(values, size);
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

    private Ledger readLedger(JsonParser p, Set<String> unknown, Ends ends) throws IOException {
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
                        records.add(readRecord(p, unknown));
                        ends.add((int) p.currentLocation().getByteOffset());
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
            checkRecord(r, ledger.issueNumber());
            if (!ids.add(r.id())) {
                throw new IllegalArgumentException("record id " + r.id() + " appears twice");
            }
        }
    }

    private static void checkRecord(ClarificationRecord r, int issue) {
        ClarificationId id;
        try {
            id = ClarificationId.parse(r.id());
        } catch (RuntimeException e) {
            throw new IllegalArgumentException("record id '" + r.id() + "' is not of the form CLR-<issue>-<seq>");
        }
        if (id.issue() != issue) {
            throw new IllegalArgumentException("record " + r.id() + " belongs to issue " + id.issue() + ", not " + issue);
        }
        if (r.round() < 1 || r.maxRounds() < 1) {
            throw new IllegalArgumentException("record " + r.id() + " has round " + r.round()
                    + " and maxRounds " + r.maxRounds() + "; both must be at least 1");
        }
    }
}
