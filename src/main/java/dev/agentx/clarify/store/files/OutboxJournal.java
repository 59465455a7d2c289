package dev.agentx.clarify.store.files;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.DeserializationContext;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectReader;
import com.fasterxml.jackson.databind.ObjectWriter;
import com.fasterxml.jackson.databind.annotation.JsonDeserialize;
import com.fasterxml.jackson.databind.deser.std.StdDeserializer;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.util.RawValue;
import dev.agentx.clarify.files.Journal;
import dev.agentx.clarify.files.RecordReader;
import dev.agentx.clarify.files.RecordWriter;
import dev.agentx.clarify.files.StateJson;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The file format of the outbox ({@code outbox/journal} in the data dir): an append-only
 * {@link Journal} with group commit, one JSON record per change. The outbox keeps its queue in
 * memory and writes a record for each change; this class writes and reads those records, and
 * holds nothing else. An effect's entry (what the outbox keeps of it) and a note's value are JSON
 * the outbox makes and reads: they are copied into a record as they are (no tree is built on the
 * path of every effect queued), and handed back as trees.
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
    private final Journal journal;

    /**
     * One record, read and written by {@link StateJson}'s mapper: a field it does not declare, a
     * value of another type, null (but for an entry or a note), a number out of range, an instant
     * that is not ISO-8601 and anything after the record's object are refused. {@code entry} and
     * {@code note} as read are trees (null when absent); as written, raw values: the JSON the
     * outbox gave, copied as it is.
     */
    @JsonInclude(JsonInclude.Include.NON_NULL)
    public record Rec(String op, long seq, String hash, JsonNode entry, Instant at, String name, JsonNode note) {
    }

    /**
     * A record as a start reads it first, its entry and note skipped unread (never built into a
     * tree): most effects are done and most notes replaced later in the journal.
     */
    private record Skimmed(String op, long seq, String hash, @JsonDeserialize(using = Unread.class) Object entry,
                           Instant at, String name, @JsonDeserialize(using = Unread.class) Object note) {
    }

    /** A value skipped unread, whatever it holds. */
    static final class Unread extends StdDeserializer<Object> {
        private static final long serialVersionUID = 1L;

        Unread() {
            super(Object.class);
        }

        @Override
        public Object deserialize(JsonParser p, DeserializationContext ctxt) throws IOException {
            p.skipChildren();
            return null;
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
            return fold(journal.records());
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
        try {
            return fold(Journal.readOnly(file));
        } catch (IOException | RuntimeException e) {
            throw new IllegalStateException("cannot read the outbox journal " + file + ": " + e.getMessage(), e);
        }
    }

    private static Contents fold(List<byte[]> records) throws IOException {
        record Raw(String hash, byte[] record) {
        }
        TreeMap<Long, Raw> pending = new TreeMap<>();
        Map<String, Instant> done = new LinkedHashMap<>();
        Map<String, byte[]> notes = new LinkedHashMap<>();
        long[] maxSeq = {0};
        RecordReader.forEach(Json.SKIMMED, records, (Skimmed r, byte[] raw) -> {
            maxSeq[0] = Math.max(maxSeq[0], r.seq());
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
        });
        Map<String, JsonNode> noteValues = new LinkedHashMap<>();
        for (Map.Entry<String, byte[]> n : notes.entrySet()) {
            JsonNode value = read(n.getValue()).note();
            if (value == null || value.isNull()) {
                throw new IllegalStateException("the note " + n.getKey() + " has no value");
            }
            noteValues.put(n.getKey(), value);
        }
        List<Pending> queued = new ArrayList<>();
        for (Map.Entry<Long, Raw> p : pending.entrySet()) {
            JsonNode entry = read(p.getValue().record()).entry();
            if (entry == null || entry.isNull()) {
                throw new IllegalStateException("the queued effect " + p.getKey() + " has no entry");
            }
            queued.add(new Pending(p.getKey(), p.getValue().hash(), entry));
        }
        return new Contents(maxSeq[0], done, noteValues, queued);
    }

    /** One record, bound to {@link Rec} in full, as a start reads those still live at the end. */
    static Rec read(byte[] record) throws IOException {
        return Json.ONE.readValue(record);
    }

    /** An effect queued: {@code entry} is its JSON. Returns the record's journal number. */
    public long queued(long seq, String hash, byte[] entry) {
        return journal.write(bytes(new Rec("queue", seq, hash, raw(entry), null, null, null)));
    }

    /** A queued effect's entry after a failed attempt. */
    public long retried(long seq, byte[] entry) {
        return journal.write(bytes(new Rec("retry", seq, null, raw(entry), null, null, null)));
    }

    /** A queued effect was sent: its key is done. */
    public long done(long seq, String hash, Instant at) {
        return journal.write(bytes(new Rec("done", seq, hash, null, at, null, null)));
    }

    /** A queued effect failed for good: its key is remembered as done's is. */
    public long failed(long seq, String hash, Instant at) {
        return journal.write(bytes(new Rec("failed", seq, hash, null, at, null, null)));
    }

    /** The note {@code name} is now {@code value} (JSON). */
    public long note(String name, byte[] value) {
        return journal.write(bytes(new Rec("note", 0, null, null, null, name, raw(value))));
    }

    /** The note {@code name} is gone. */
    public long forget(String name) {
        return journal.write(bytes(new Rec("forget", 0, null, null, null, name, null)));
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
        journal.compact(since, out -> {
            try (RecordWriter records = new RecordWriter(Json.WRITER)) {
                head.writeTo(new Head() {
                    @Override
                    public void lastSeq(long seq) {
                        out.accept(records.write(new Rec("seq", seq, null, null, null, null, null)));
                    }

                    @Override
                    public void doneKey(String hash, Instant at) {
                        out.accept(records.write(new Rec("key", 0, hash, null, at, null, null)));
                    }

                    @Override
                    public void queued(long seq, String hash, byte[] entry) {
                        out.accept(records.write(new Rec("queue", seq, hash, raw(entry), null, null, null)));
                    }

                    @Override
                    public void note(String name, byte[] value) {
                        out.accept(records.write(new Rec("note", 0, null, null, null, name, raw(value))));
                    }
                });
            }
        });
    }

    @Override
    public void close() {
        journal.close();
    }

    /** JSON as it is, to be written into a record unchanged. */
    private static JsonNode raw(byte[] json) {
        return JsonNodeFactory.instance.rawValueNode(new RawValue(new String(json, StandardCharsets.UTF_8)));
    }

    private static byte[] bytes(Rec r) {
        try {
            return Json.WRITER.writeValueAsBytes(r);
        } catch (JsonProcessingException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * The readers and the writer of a record, made once (a start reads every record, a compaction
     * writes them). A start reads the whole journal with one parser ({@link #SKIMMED}), then each
     * record still live alone ({@link #ONE}). The notes are keyed by ids (an issue's note by
     * record ids), so the record read alone keeps no table of the names it meets
     * ({@link StateJson#idKeyed}): a new parser per record would copy a table filled with every
     * id read before it. The one parser of the whole journal fills one table of its own.
     */
    private static final class Json {
        static final ObjectReader SKIMMED = StateJson.mapper().readerFor(Skimmed.class);
        static final ObjectReader ONE = RecordReader.one(StateJson.idKeyed().readerFor(Rec.class));
        static final ObjectWriter WRITER = StateJson.mapper().writerFor(Rec.class);
    }
}
