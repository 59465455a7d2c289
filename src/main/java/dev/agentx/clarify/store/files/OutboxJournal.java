package dev.agentx.clarify.store.files;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.agentx.clarify.files.IsoInstant;
import dev.agentx.clarify.files.Journal;
import dev.agentx.clarify.files.JsonSupport;
import dev.agentx.clarify.files.RecordFields;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.Consumer;

/**
 * The file format of the outbox ({@code outbox/journal} in the data dir): an append-only
 * {@link Journal} with group commit, one JSON record per change. The outbox keeps its queue in
 * memory and writes a record for each change; this class writes and reads those records, and
 * holds nothing else. An effect's entry (what the outbox keeps of it) and a note's value are JSON
 * the outbox makes and reads: they are copied into a record as they are, and handed back as trees.
 *
 * <p>Records ({@link Rec}): {@code queue} (seq, key hash, entry), {@code retry} (seq, entry),
 * {@code done} (seq, key hash, when), {@code failed} (seq, key hash, when), {@code key} (a done
 * key a compaction keeps: hash, when), {@code seq} (the highest seq handed out, kept by a
 * compaction), {@code note} (name, value: the latest replaces earlier ones), {@code forget}
 * (name: the note is gone). Each sets what it changes, so records appended while a compaction
 * runs replay on top of its snapshot to the same state.
 *
 * <p>Each write returns its journal number; it is on disk once {@link #syncTo} of that number (or
 * {@link #sync}) returned, an fsync shared with the other threads' records written meanwhile.
 */
public final class OutboxJournal implements AutoCloseable {
    private final ObjectMapper json = JsonSupport.mapper();
    private final Journal journal;

    /** One record as read; {@code entry} and {@code note} are trees (null when skipped or absent). */
    @JsonInclude(JsonInclude.Include.NON_NULL)
    public record Rec(String op, long seq, String hash, JsonNode entry, Instant at, String name, JsonNode note) {
        public Rec(String op, long seq, String hash, JsonNode entry, Instant at) {
            this(op, seq, hash, entry, at, null, null);
        }
    }

    /** An effect still queued at the end of the journal: its place in line, key hash and entry. */
    public record Pending(long seq, String hash, JsonNode entry) {
    }

    /**
     * What the records add up to: the highest seq handed out, the done (or failed) keys and when,
     * the notes by name and the effects still queued, in order of seq.
     */
    public record Contents(long lastSeq, Map<String, Instant> done, Map<String, JsonNode> notes, List<Pending> pending) {
    }

    /** What a compaction writes, through {@link #compact}: the records that rebuild the outbox's memory. */
    public interface Snapshot {
        void writeTo(Head head);
    }

    /** Where a {@link Snapshot} writes its records, in any order. */
    public interface Head {
        void lastSeq(long seq);

        void doneKey(String hash, Instant at);

        void queued(long seq, String hash, byte[] entry);

        void note(String name, byte[] value);
    }

    public OutboxJournal(Path file) {
        this.journal = new Journal(file);
    }

    public Path file() {
        return journal.file();
    }

    /**
     * Reads every record and adds them up, as a start does. A queued effect and a note are kept as
     * the raw record that last set them and read in full only if they are still there at the end:
     * most were done or replaced later in the journal, and a start may read a million records.
     */
    public Contents read() {
        try {
            return fold(json, journal.records());
        } catch (IOException | RuntimeException e) {
            throw new IllegalStateException("cannot read the outbox journal " + journal.file() + ": " + e.getMessage(),
                    e);
        }
    }

    /**
     * What the journal at {@code file} adds up to, read without changing the file (a server may
     * be appending to it; a half-written last record is left out). Empty without a journal.
     */
    public static Contents readOnly(Path file) {
        ObjectMapper json = JsonSupport.mapper();
        try {
            return fold(json, Journal.readOnly(file));
        } catch (IOException | RuntimeException e) {
            throw new IllegalStateException("cannot read the outbox journal " + file + ": " + e.getMessage(), e);
        }
    }

    private static Contents fold(ObjectMapper json, List<byte[]> records) throws IOException {
        record Raw(String hash, byte[] record) {
        }
        TreeMap<Long, Raw> pending = new TreeMap<>();
        Map<String, Instant> done = new LinkedHashMap<>();
        Map<String, byte[]> notes = new LinkedHashMap<>();
        long maxSeq = 0;
        for (byte[] raw : records) {
            Rec r = readRec(json, raw, false);
            maxSeq = Math.max(maxSeq, r.seq());
            switch (r.op() == null ? "" : r.op()) {
                case "queue" -> pending.put(r.seq(), new Raw(r.hash(), raw));
                case "retry" -> pending.computeIfPresent(r.seq(), (k, v) -> new Raw(v.hash(), raw));
                case "done", "failed" -> {
                    // a failed effect's key is remembered as a done one's: it is not queued again
                    pending.remove(r.seq());
                    done.put(r.hash(), r.at());
                }
                case "key" -> done.put(r.hash(), r.at());
                case "seq" -> { }
                case "note" -> {
                    if (r.name() == null) {
                        throw new IllegalStateException("an outbox journal note without a name");
                    }
                    notes.put(r.name(), raw);
                }
                case "forget" -> notes.remove(r.name());
                default -> throw new IllegalStateException("unknown outbox journal record '" + r.op() + "'");
            }
        }
        Map<String, JsonNode> noteValues = new LinkedHashMap<>();
        for (Map.Entry<String, byte[]> n : notes.entrySet()) {
            JsonNode value = readRec(json, n.getValue(), true).note();
            if (value == null || value.isNull()) {
                throw new IllegalStateException("the note " + n.getKey() + " has no value");
            }
            noteValues.put(n.getKey(), value);
        }
        List<Pending> queued = new ArrayList<>();
        for (Map.Entry<Long, Raw> p : pending.entrySet()) {
            JsonNode entry = readRec(json, p.getValue().record(), true).entry();
            if (entry == null || entry.isNull()) {
                throw new IllegalStateException("the queued effect " + p.getKey() + " has no entry");
            }
            queued.add(new Pending(p.getKey(), p.getValue().hash(), entry));
        }
        return new Contents(maxSeq, done, noteValues, queued);
    }

    /**
     * Reads one record as binding it to {@link Rec} would (unknown fields and wrong types refused),
     * in half the time. Instants go through {@link IsoInstant}; an entry and a note through the
     * mapper.
     */
    public Rec readRec(byte[] record) throws IOException {
        return readRec(json, record, true);
    }

    /** As {@link #readRec(byte[])}; without {@code values}, an entry and a note are skipped (left null). */
    private static Rec readRec(ObjectMapper json, byte[] record, boolean values) throws IOException {
        try (JsonParser p = json.getFactory().createParser(record)) {
            RecordFields.start(p, "an outbox journal record");
            String op = null;
            long seq = 0;
            String hash = null;
            JsonNode entry = null;
            Instant at = null;
            String name = null;
            JsonNode note = null;
            for (JsonToken t = p.nextToken(); t != JsonToken.END_OBJECT; t = p.nextToken()) {
                String field = p.currentName();
                JsonToken v = p.nextToken();
                switch (field) {
                    case "op" -> op = RecordFields.string(p, v);
                    case "seq" -> seq = RecordFields.integer(p, v);
                    case "hash" -> hash = RecordFields.string(p, v);
                    case "entry" -> entry = RecordFields.value(p, v, JsonNode.class, values);
                    case "at" -> at = RecordFields.instant(p, v);
                    case "name" -> name = RecordFields.string(p, v);
                    case "note" -> note = RecordFields.value(p, v, JsonNode.class, values);
                    default -> throw RecordFields.unknown(p, field);
                }
            }
            RecordFields.end(p);
            return new Rec(op, seq, hash, entry, at, name, note);
        }
    }

    /** An effect queued: {@code entry} is its JSON. Returns the record's journal number. */
    public long queued(long seq, String hash, byte[] entry) {
        return journal.write(withEntry("queue", seq, hash, entry));
    }

    /** A queued effect's entry after a failed attempt. */
    public long retried(long seq, byte[] entry) {
        return journal.write(withEntry("retry", seq, null, entry));
    }

    /** A queued effect was sent: its key is done. */
    public long done(long seq, String hash, Instant at) {
        return journal.write(keyRecord("done", seq, hash, at));
    }

    /** A queued effect failed for good: its key is remembered as done's is. */
    public long failed(long seq, String hash, Instant at) {
        return journal.write(keyRecord("failed", seq, hash, at));
    }

    /** The note {@code name} is now {@code value} (JSON). */
    public long note(String name, byte[] value) {
        return journal.write(noteRecord(name, value));
    }

    /** The note {@code name} is gone. */
    public long forget(String name) {
        StringBuilder r = new StringBuilder(64).append("{\"op\":\"forget\",\"seq\":0,\"name\":");
        appendString(r, name);
        return journal.write(r.append('}').toString().getBytes(StandardCharsets.UTF_8));
    }

    /** Waits until every record written so far is on disk. */
    public void sync() {
        journal.sync();
    }

    /** Waits until the record with journal number {@code number} and all before it are on disk. */
    public void syncTo(long number) {
        journal.syncTo(number);
    }

    /** Records in the journal file. */
    public long size() {
        return journal.size();
    }

    /** The fdatasyncs so far (for tests). */
    public long syncs() {
        return journal.syncs();
    }

    /** Records written since the journal was opened that are known to be on disk (for tests). */
    public long durable() {
        return journal.durable();
    }

    /** Where the journal ends now: records written after this follow a compaction's snapshot. */
    public Journal.Mark mark() {
        return journal.mark();
    }

    /**
     * Rewrites the journal, durably, as the records {@code head} writes followed by those written
     * since {@code since} ({@link Journal#compact(Journal.Mark, Journal.Snapshot)}).
     */
    public void compact(Journal.Mark since, Snapshot head) {
        journal.compact(since, out -> head.writeTo(new Head() {
            @Override
            public void lastSeq(long seq) {
                out.accept(("{\"op\":\"seq\",\"seq\":" + seq + "}").getBytes(StandardCharsets.US_ASCII));
            }

            @Override
            public void doneKey(String hash, Instant at) {
                out.accept(keyRecord("key", 0, hash, at));
            }

            @Override
            public void queued(long seq, String hash, byte[] entry) {
                out.accept(withEntry("queue", seq, hash, entry));
            }

            @Override
            public void note(String name, byte[] value) {
                out.accept(noteRecord(name, value));
            }
        }));
    }

    @Override
    public void close() {
        journal.close();
    }

    /*
     * The records are written by hand, field for field as Jackson writes a Rec (a test holds them
     * to it), around the entry's and the note's JSON as they are: no tree is built and no JSON
     * copied through a parser, on the path of every effect queued.
     */

    private static byte[] keyRecord(String op, long seq, String hash, Instant at) {
        StringBuilder r = new StringBuilder(96).append("{\"op\":\"").append(op).append("\",\"seq\":").append(seq);
        if (hash != null) {
            r.append(",\"hash\":");
            appendString(r, hash);
        }
        if (at != null) {
            IsoInstant.append(r.append(",\"at\":\""), at).append('"');
        }
        return r.append('}').toString().getBytes(StandardCharsets.UTF_8);
    }

    private static byte[] withEntry(String op, long seq, String hash, byte[] entry) {
        StringBuilder r = new StringBuilder(96).append("{\"op\":\"").append(op).append("\",\"seq\":").append(seq);
        if (hash != null) {
            r.append(",\"hash\":");
            appendString(r, hash);
        }
        return wrap(r.append(",\"entry\":"), entry);
    }

    private static byte[] noteRecord(String name, byte[] value) {
        StringBuilder r = new StringBuilder(64).append("{\"op\":\"note\",\"seq\":0,\"name\":");
        appendString(r, name);
        return wrap(r.append(",\"note\":"), value);
    }

    /** {@code head}, then {@code value} as it is, then the record's closing brace. */
    private static byte[] wrap(StringBuilder head, byte[] value) {
        byte[] h = head.toString().getBytes(StandardCharsets.UTF_8);
        byte[] record = Arrays.copyOf(h, h.length + value.length + 1);
        System.arraycopy(value, 0, record, h.length, value.length);
        record[record.length - 1] = '}';
        return record;
    }

    private static void appendString(StringBuilder out, String s) {
        if (s.chars().allMatch(c -> c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c == '-')) {
            out.append('"').append(s).append('"'); // a key hash: nothing to escape
            return;
        }
        try {
            out.append(JsonSupport.shared().writeValueAsString(s));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
