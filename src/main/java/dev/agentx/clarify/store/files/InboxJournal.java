package dev.agentx.clarify.store.files;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.databind.ObjectReader;
import com.fasterxml.jackson.databind.ObjectWriter;
import dev.agentx.clarify.files.Journal;
import dev.agentx.clarify.files.RecordReader;
import dev.agentx.clarify.files.RecordWriter;
import dev.agentx.clarify.files.StateJson;
import dev.agentx.clarify.store.DeliveryQueue.Progress;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.ReentrantReadWriteLock;
import java.util.function.BiConsumer;
import java.util.function.Consumer;

/**
 * The inbox's {@code journal}: the failed attempts of each queued delivery (the commands it carried
 * out are the worker's notes in the outbox journal, durable with their effects), the id of every
 * delivery done with (processed or failed) in the last {@link FileDeliveryQueue#KEEP_SEEN}, and the
 * highest delivery number handed out. It keeps in memory everything it must say, read back at start,
 * and a compaction rewrites it from that memory.
 */
final class InboxJournal {
    /** The journal is compacted when it holds more than this many records beyond twice what it must keep. */
    static final int COMPACT_SLACK = 20_000;

    private final Journal journal;
    private final Clock clock;
    private final DeliveryIds ids;
    /** The highest delivery number handed out. */
    private final AtomicLong seq = new AtomicLong();
    /** The failed attempts of queued deliveries, by number. */
    private final Map<Long, Progress> progress = new ConcurrentHashMap<>();
    private final Object compaction = new Object();
    /**
     * Held for reading by every change from writing its journal record until {@link #apply} has
     * shown it in memory; a compaction takes it for writing only to mark the journal's end, so its
     * snapshot of the memory covers every record before the mark.
     */
    final ReentrantReadWriteLock changing = new ReentrantReadWriteLock(); // package-private for a test

    /**
     * One journal record. {@code op}: {@code progress} (seq, progress), {@code done} (seq, id, at:
     * processed or failed; also what a compaction keeps of a seen id, with seq 0), {@code seq}
     * (the highest number handed out, kept by a compaction so numbers are never used twice).
     * Read and written by {@link StateJson}'s mapper: a field it does not declare, a value of
     * another type, null, a number out of range, an instant that is not ISO-8601 and anything
     * after the record's object are refused.
     */
    @JsonInclude(JsonInclude.Include.NON_NULL)
    record Rec(String op, long seq, String id, Progress progress, Instant at) {
    }

    /** Opens the journal at {@code file} and reads what it says into memory, the ids done with into {@code ids}. */
    InboxJournal(Path file, Clock clock, DeliveryIds ids) {
        this.clock = clock;
        this.ids = ids;
        this.journal = new Journal(file);
        try {
            readAll(journal.records(), this::apply);
        } catch (IOException | RuntimeException e) {
            throw new IllegalStateException("cannot read the inbox journal " + journal.file() + ": " + e.getMessage(),
                    e);
        }
    }

    /** The journal's {@code records}, each bound to {@link Rec}, handed to {@code each} in order. */
    static void readAll(List<byte[]> records, Consumer<Rec> each) throws IOException {
        RecordReader.forEach(Json.READER, records, (Rec r, byte[] record) -> each.accept(r));
    }

    /** One journal record, bound to {@link Rec} as {@link #readAll} binds each. */
    static Rec read(byte[] record) throws IOException {
        return RecordReader.one(Json.READER).readValue(record);
    }

    /** The number for a delivery received now: one past the highest handed out. */
    long nextSeq() {
        return seq.incrementAndGet();
    }

    long highestSeq() {
        return seq.get();
    }

    /** A delivery numbered {@code n} was found in the queue: numbers handed out from now on are past it. */
    void numberSeen(long n) {
        seq.accumulateAndGet(n, Math::max);
    }

    /** The failed attempts of a queued delivery and when to try again, as last recorded. */
    Progress progress(long n) {
        return progress.getOrDefault(n, Progress.NONE);
    }

    /** At start: forgets the progress of deliveries no longer queued. */
    void keepProgressOf(Set<Long> queued) {
        progress.keySet().retainAll(queued);
    }

    /** Records a queued delivery's failed attempts; {@code durable}: returns once on disk. */
    void progress(long n, Progress p, boolean durable) {
        record(new Rec("progress", n, null, p, null), durable);
    }

    /** Records a delivery as done with at {@code at} ({@code n} 0: one another store had done with); {@code durable}: returns once on disk. */
    void done(long n, String id, Instant at, boolean durable) {
        record(new Rec("done", n, id, null, at), durable);
    }

    /** Makes every record written so far durable (no fdatasync if they are). */
    void sync() {
        journal.sync();
    }

    /** The records written and known to be on disk since the journal was opened (for tests). */
    long[] writtenAndDurable() {
        return new long[] {journal.written(), journal.durable()};
    }

    void close() {
        journal.close();
    }

    /** Whether the journal holds more than twice what it must keep, plus {@link #COMPACT_SLACK}. */
    boolean outgrown() {
        return journal.size() > 2L * (ids.doneCount() + progress.size()) + COMPACT_SLACK;
    }

    private void apply(Rec r) {
        seq.accumulateAndGet(r.seq(), Math::max);
        if (!replay(r, progress, ids::done)) {
            throw new IllegalStateException("unknown inbox journal record '" + r.op() + "'");
        }
    }

    /**
     * What a record says of the deliveries: the progress of one queued, or one done with (its
     * progress then forgotten). False for a record this agentx does not know.
     */
    static boolean replay(Rec r, Map<Long, Progress> progress, BiConsumer<String, Instant> done) {
        switch (r.op() == null ? "" : r.op()) {
            case "seq" -> { }
            case "progress" -> progress.put(r.seq(), r.progress());
            case "done" -> {
                progress.remove(r.seq());
                done.accept(r.id(), r.at());
            }
            default -> {
                return false;
            }
        }
        return true;
    }

    /** Writes the record to the journal and shows it in memory; {@code durable}: returns once it is on disk (a shared fdatasync). */
    private void record(Rec r, boolean durable) {
        byte[] bytes;
        try {
            bytes = Json.WRITER.writeValueAsBytes(r);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        long n;
        changing.readLock().lock();
        try {
            n = journal.write(bytes);
            apply(r);
        } finally {
            changing.readLock().unlock();
        }
        if (durable) {
            journal.syncTo(n);
        }
    }

    /**
     * Forgets the ids done with longer ago than {@link FileDeliveryQueue#KEEP_SEEN} and rewrites the
     * journal from what it keeps in memory (those ids, the progress of deliveries still queued, the
     * last seq), followed by the records written meanwhile, without reading it back (as the outbox
     * does; each record sets what it changes, so those after the mark replay on top of a snapshot
     * that already has some).
     */
    void compact() {
        synchronized (compaction) {
            ids.forgetDoneBefore(clock.instant().minus(FileDeliveryQueue.KEEP_SEEN));
            Journal.Mark mark;
            changing.writeLock().lock();
            try {
                mark = journal.mark();
            } finally {
                changing.writeLock().unlock();
            }
            journal.compact(mark, out -> {
                try (RecordWriter records = new RecordWriter(Json.WRITER)) {
                    out.accept(records.write(new Rec("seq", seq.get(), null, null, null)));
                    for (Map.Entry<String, Instant> e : ids.done()) {
                        out.accept(records.write(new Rec("done", 0, e.getKey(), null, e.getValue())));
                    }
                    for (Map.Entry<Long, Progress> e : progress.entrySet()) { // any order: a record per delivery
                        out.accept(records.write(new Rec("progress", e.getKey(), null, e.getValue(), null)));
                    }
                }
            });
        }
    }

    /** The reader and writer of a record, made once (a start reads every record, a compaction writes them). */
    private static final class Json {
        static final ObjectReader READER = StateJson.mapper().readerFor(Rec.class);
        static final ObjectWriter WRITER = StateJson.mapper().writerFor(Rec.class);
    }
}
