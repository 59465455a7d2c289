package dev.agentx.clarify.ledger;

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
import dev.agentx.clarify.protocol.ClarificationId;
import dev.agentx.clarify.protocol.ClarificationRecord;
import dev.agentx.clarify.protocol.Ledger;
import dev.agentx.clarify.protocol.ThreadEntry;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * Ledger JSON (docs/protocol.md): the {@link Ledger} record and its records bound by Jackson
 * through {@link StateJson}, pretty-printed with fields in the order the records declare. Reading
 * is strict: an unknown field is refused rather than silently dropped on the next write, and
 * every problem names its line and column. From the bytes a ledger was last read from or written
 * as, only the records that changed are decoded or encoded again.
 */
public final class LedgerCodec {
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
        StateJson.Offsets records = new StateJson.Offsets(out);
        try (JsonGenerator g = StateJson.mapper().createGenerator(out, JsonEncoding.UTF8)) {
            Writing.LEDGER.withAttribute(ClarificationRecord.class, records).writeValue(g, ledger);
            g.writeRaw('\n');
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return new Whole(out.toByteArray(), records.ends(), records.firstStart());
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
            Encoded changed = decodeChanged(bytes, base);
            if (changed != null) {
                return changed;
            }
        }
        try {
            return decodeWhole(bytes, Reading.LEDGER, null);
        } catch (IgnoredPropertyException e) {
            if (unknown == null) {
                throw new IllegalArgumentException(reason(e), e);
            }
        }
        // a field this version does not know: read again, skipping and naming such fields
        try {
            return decodeWhole(bytes, StateJson.lenient(Reading.LEDGER), unknown);
        } catch (IgnoredPropertyException e) {
            throw new IllegalStateException("a lenient read refused a field", e);
        }
    }

    /** The whole of {@code bytes}; {@code unknown}: the reader is lenient, and the fields it skips are named there. */
    private static Encoded decodeWhole(byte[] bytes, ObjectReader reader, Set<String> unknown)
            throws IgnoredPropertyException {
        try (JsonParser p = unknown == null ? reader.createParser(bytes)
                : StateJson.recording(reader.createParser(bytes), unknown)) {
            if (p.nextToken() != JsonToken.START_OBJECT) {
                throw JsonErrors.problem(p,
                        "the file must hold one JSON object {\"issueNumber\": N, \"clarifications\": [...]}");
            }
            StateJson.Offsets records = new StateJson.Offsets(null);
            Ledger ledger = reader.withAttribute(ClarificationRecord.class, records).readValue(p);
            if (p.nextToken() != null) {
                throw JsonErrors.problem(p, "unexpected content after the ledger object");
            }
            check(ledger);
            return new Encoded(ledger, bytes, records.ends());
        } catch (IgnoredPropertyException e) {
            throw e;
        } catch (JsonProcessingException e) {
            throw new IllegalArgumentException(reason(e), e);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** A problem in the words of the ledger's own fields. */
    private static String reason(JsonProcessingException e) {
        if (e instanceof IgnoredPropertyException u) {
            Class<?> in = u.getReferringClass();
            return JsonErrors.describe("unknown field '" + u.getPropertyName() + "'" + (in == ClarificationRecord.class
                    ? " in a clarification record" : in == ThreadEntry.class ? " in a thread entry" : ""), u.getLocation());
        }
        if (e instanceof StateJson.FieldProblem f && f.missing()) {
            String id = f.assigned().get("id");
            String why = f.type() == ThreadEntry.class ? "a thread entry needs round, from, type, body and timestamp"
                    : f.type() == ClarificationRecord.class ? "record " + (id == null ? "" : id + " ") + "lacks field '"
                    + f.field() + "'" : "fields 'issueNumber' and 'clarifications' are required";
            return JsonErrors.describe(why, f.getLocation());
        }
        return JsonErrors.describe(e);
    }

    /**
     * {@code bytes} decoded from {@code base} and the records between the bytes' first and last
     * difference from it; null when that cannot be told (a difference before the first record's
     * end, anything but records between, any problem, a field this version does not know: the
     * caller decodes the whole, which also says where a problem is).
     */
    private Encoded decodeChanged(byte[] b, Encoded base) {
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
        int[] outEnds = new int[n + 4];
        System.arraycopy(ends, 0, outEnds, 0, k);
        int size = k;
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
                    try (JsonParser p = Reading.RECORD.createParser(b, pos, b.length - pos)) {
                        p.nextToken();
                        records.add(Reading.RECORD.readValue(p));
                        pos += (int) p.currentLocation().getByteOffset();
                        if (size == outEnds.length) {
                            outEnds = Arrays.copyOf(outEnds, size * 2);
                        }
                        outEnds[size++] = pos;
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
        outEnds = Arrays.copyOf(outEnds, size + n - j);
        for (int i = j; i < n; i++) {
            outEnds[size++] = ends[i] + delta;
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
        return new Encoded(ledger, b, outEnds);
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

    /**
     * Builds the readers and ({@code writer}) then the writer now, if they are not built yet:
     * Jackson's first use in a new process (its classes, the records' introspection) costs tens of
     * milliseconds, which a command can spend on a thread of its own while it starts.
     */
    public static void prepare(boolean writer) {
        Reading.RECORD.getClass();
        if (writer) {
            Writing.LEDGER.getClass();
        }
    }

    /** Reads the annotations of the ledger's records ({@link StateJson#readAnnotations}). */
    public static void readAnnotations() {
        StateJson.readAnnotations(Ledger.class, ClarificationRecord.class, ThreadEntry.class,
                dev.agentx.clarify.protocol.Status.class, dev.agentx.clarify.protocol.EntryType.class,
                dev.agentx.clarify.protocol.Autonomy.class, dev.agentx.clarify.protocol.CodeLine.class);
    }

    /** The readers, made on first use. */
    private static final class Reading {
        static final ObjectReader LEDGER = StateJson.mapper().readerFor(Ledger.class)
                .with(JsonParser.Feature.STRICT_DUPLICATE_DETECTION);
        static final ObjectReader RECORD = LEDGER.forType(ClarificationRecord.class);
    }

    /** The writer, made on first use: a command that only reads never builds it. */
    private static final class Writing {
        static final ObjectWriter LEDGER = StateJson.mapper().writerFor(Ledger.class).with(new DefaultPrettyPrinter()
                .withObjectIndenter(new DefaultIndenter("  ", "\n"))
                .withArrayIndenter(new DefaultIndenter("  ", "\n")));
    }
}
