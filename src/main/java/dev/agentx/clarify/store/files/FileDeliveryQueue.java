package dev.agentx.clarify.store.files;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.agentx.clarify.files.AtomicFiles;
import dev.agentx.clarify.files.IsoInstant;
import dev.agentx.clarify.files.Journal;
import dev.agentx.clarify.files.JsonSupport;
import dev.agentx.clarify.files.RecordFields;
import dev.agentx.clarify.store.Acknowledged;
import dev.agentx.clarify.store.DeliveryQueue;
import dev.agentx.clarify.store.InboundDelivery;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.ReentrantReadWriteLock;
import java.util.function.Consumer;
import java.util.stream.Stream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The durable inbox of verified deliveries under {@code $AGENTX_DATA_DIR/inbox/}.
 * {@code queue/<n>.log}: segments of a {@link Journal} that every accepted delivery is appended to
 * ({@link DeliveryFile}: a header, then the body as received), made durable by one
 * {@code fdatasync} shared by the requests that arrive together, so the 202 costs an append, not
 * a file of its own (create, fsync, rename, directory fsync). A segment is closed for appends at
 * {@link #SEGMENT_BYTES} and deleted once all its deliveries are done with.
 * {@code journal} records the failed attempts of each delivery (the commands it carried out
 * are the worker's notes in the outbox journal, durable with their effects) and the id of
 * every delivery processed in the last {@link #KEEP_SEEN}, which covers GitHub's manual
 * redelivery window (deliveries of the past 3 days) with room to spare. {@code failed/} keeps
 * deliveries that could not be processed, a file each, with the reason in the log.
 *
 * <p>Accepting is built for many concurrent webhook requests: no lock is shared with the worker
 * beyond the moment of an append. Duplicates are told from the ids in memory: those seen and
 * those pending, loaded at start. A delivery is recorded as done in the journal before its
 * segment may go, so at every moment one of the two is on disk; a queued delivery whose id the
 * journal has as done (a crash undid a segment's deletion) is skipped at start.
 */
public final class FileDeliveryQueue implements DeliveryQueue {
    private static final Logger LOG = LoggerFactory.getLogger(FileDeliveryQueue.class);
    public static final Duration KEEP_SEEN = Duration.ofDays(8);
    /** The journal is compacted when it holds more than this many records beyond twice what it must keep. */
    static final int COMPACT_SLACK = 20_000;
    /** A queue segment takes no more appends once it holds this many bytes (a few thousand deliveries). */
    static final long SEGMENT_BYTES = 64L << 20;
    private static final String SEGMENT_SUFFIX = ".log";

    private final Path queueDir;
    private final Path failed;
    private final Clock clock;
    private final ObjectMapper json = JsonSupport.mapper();
    private final long segmentBytes;
    private final Journal journal;
    private final AtomicLong seq = new AtomicLong();
    /** Ids of deliveries pending or seen: a second delivery with one of them is a duplicate. */
    private final Set<String> known = ConcurrentHashMap.newKeySet();
    /** Ids of deliveries done with (processed or failed), and when. */
    private final Map<String, Instant> seen = new ConcurrentHashMap<>();
    private final Map<Long, Progress> progress = new ConcurrentHashMap<>();
    private final ConcurrentSkipListMap<Long, Queued> queued = new ConcurrentSkipListMap<>();
    /** Where each queued delivery is kept, by number. */
    private final Map<Long, Location> locations = new ConcurrentHashMap<>();
    private final Object compaction = new Object();
    /**
     * Held for reading by every change from writing its journal record until {@link #apply} has
     * shown it in memory; a compaction takes it for writing only to mark the journal's end, so its
     * snapshot of the memory covers every record before the mark.
     */
    final ReentrantReadWriteLock changing = new ReentrantReadWriteLock(); // package-private for a test
    /** Guards {@link #segments}, {@link #current} and each segment's count of live deliveries. */
    private final Object segmentLock = new Object();
    private final TreeMap<Long, Segment> segments = new TreeMap<>();
    private Segment current;
    private volatile Consumer<Queued> listener = q -> { };

    /** Where a queued delivery is kept: its queue segment (by number) and the record's offset in it. */
    record Location(long segment, long offset) {
    }

    /**
     * One journal record. {@code op}: {@code progress} (seq, progress), {@code done} (seq, id, at:
     * processed or failed; also what a compaction keeps of a seen id, with seq 0), {@code seq}
     * (the highest number handed out, kept by a compaction so numbers are never used twice).
     */
    @JsonInclude(JsonInclude.Include.NON_NULL)
    record Rec(String op, long seq, String id, Progress progress, Instant at) {
    }

    /** A queue segment: its file and how many of its deliveries are not done with yet. */
    private static final class Segment {
        final long number;
        final Journal journal;
        int live;
        /** No longer appended to: deleted once {@link #live} is 0. */
        boolean sealed;

        Segment(long number, Journal journal) {
            this.number = number;
            this.journal = journal;
        }
    }

    public FileDeliveryQueue(Path dir, Clock clock) {
        this(dir, clock, SEGMENT_BYTES);
    }

    /** With a smaller segment size, for tests of the segments' lifecycle (also in child processes). */
    public FileDeliveryQueue(Path dir, Clock clock, long segmentBytes) {
        this.queueDir = dir.resolve("queue");
        this.failed = dir.resolve("failed");
        this.clock = clock;
        this.segmentBytes = segmentBytes;
        try {
            Files.createDirectories(queueDir);
            Files.createDirectories(failed);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot open the inbox in " + dir + ": " + e.getMessage(), e);
        }
        this.journal = new Journal(dir.resolve("journal"));
        try {
            for (byte[] record : journal.records()) {
                apply(readRec(record));
            }
        } catch (IOException | RuntimeException e) {
            throw new IllegalStateException("cannot read the inbox journal " + journal.file() + ": " + e.getMessage(),
                    e);
        }
        try {
            openSegments();
            progress.keySet().retainAll(queued.keySet());
            List<Segment> done = new ArrayList<>();
            synchronized (segmentLock) {
                Segment last = segments.isEmpty() ? null : segments.lastEntry().getValue();
                for (Segment seg : new ArrayList<>(segments.values())) {
                    if (seg != last || seg.journal.bytes() >= segmentBytes) {
                        seg.sealed = true;
                        Segment gone = takeIfDone(seg);
                        if (gone != null) {
                            done.add(gone);
                        }
                    }
                }
                current = last != null && !last.sealed ? last : newSegment();
            }
            done.forEach(this::delete);
        } catch (IOException | NumberFormatException e) {
            throw new UncheckedIOException("cannot open the inbox in " + dir + ": " + e.getMessage(),
                    e instanceof IOException io ? io : new IOException(e));
        }
        known.addAll(seen.keySet());
        // not compacted here: the worker's first tick prunes (compacts) it, off the start's path
    }

    /** Reads every queue segment: the deliveries not done with are queued again. */
    private void openSegments() throws IOException {
        List<Path> files;
        try (Stream<Path> s = Files.list(queueDir)) {
            files = s.filter(p -> p.getFileName().toString().endsWith(SEGMENT_SUFFIX)).sorted().toList();
        }
        for (Path f : files) {
            String name = f.getFileName().toString();
            long number = Long.parseLong(name.substring(0, name.length() - SEGMENT_SUFFIX.length()));
            Journal j = new Journal(f);
            Segment seg = new Segment(number, j);
            List<Journal.Located> records;
            try {
                records = j.located();
            } catch (RuntimeException e) {
                j.close();
                throw new IllegalStateException("cannot read the inbox queue segment " + f + ": " + e.getMessage(), e);
            }
            for (Journal.Located r : records) {
                DeliveryFile.Header h = DeliveryFile.decodeHeader(json, r.payload());
                seq.accumulateAndGet(h.seq(), Math::max);
                if (seen.containsKey(h.id()) || !known.add(h.id())) {
                    continue; // done before a crash undid the segment's deletion, or queued twice
                }
                locations.put(h.seq(), new Location(number, r.offset()));
                queued.put(h.seq(), new Queued(h.seq(), h.id(), h.event(), h.receivedAt(),
                        h.key() == null ? "" : h.key()));
                seg.live++;
            }
            segments.put(number, seg);
        }
    }

    /** A new segment to append to, numbered after every earlier one; the caller holds {@link #segmentLock}. */
    private Segment newSegment() {
        long number = Math.max(seq.get() + 1, segments.isEmpty() ? 1 : segments.lastKey() + 1);
        Path file = queueDir.resolve(String.format("%020d%s", number, SEGMENT_SUFFIX));
        Journal j = new Journal(file);
        j.records(); // positions it at the end (a new file: empty)
        Segment seg = new Segment(number, j);
        segments.put(number, seg);
        return seg;
    }

    /**
     * Takes a sealed segment none of whose deliveries is left out of {@link #segments}, for
     * {@link #delete}; null if it stays. The caller holds {@link #segmentLock}.
     */
    private Segment takeIfDone(Segment seg) {
        if (!seg.sealed || seg.live > 0) {
            return null;
        }
        segments.remove(seg.number);
        return seg;
    }

    /** Deletes a segment {@link #takeIfDone} took out; outside {@link #segmentLock}, so acknowledgements go on meanwhile. */
    private void delete(Segment seg) {
        // its deliveries' done records first (written without waiting): once it is gone, they alone say so
        journal.sync();
        seg.journal.close();
        try {
            Files.deleteIfExists(seg.journal.file()); // no fsync: should a crash undo it, the start drops it again
        } catch (IOException e) {
            LOG.warn("inbox: cannot delete the processed queue segment {}: {}", seg.journal.file(), e.toString());
        }
    }

    /** Reads one journal record as binding it to {@link Rec} would, in half the time (a start reads them all). */
    Rec readRec(byte[] record) throws IOException {
        return readRec(json, record);
    }

    private static Rec readRec(ObjectMapper json, byte[] record) throws IOException {
        try (JsonParser p = json.getFactory().createParser(record)) {
            RecordFields.start(p, "an inbox journal record");
            String op = null;
            long seq = 0;
            String id = null;
            Progress progress = null;
            Instant at = null;
            for (JsonToken t = p.nextToken(); t != JsonToken.END_OBJECT; t = p.nextToken()) {
                String field = p.currentName();
                JsonToken v = p.nextToken();
                switch (field) {
                    case "op" -> op = RecordFields.string(p, v);
                    case "seq" -> seq = RecordFields.integer(p, v);
                    case "id" -> id = RecordFields.string(p, v);
                    case "progress" -> progress = RecordFields.value(p, v, Progress.class, true);
                    case "at" -> at = RecordFields.instant(p, v);
                    default -> throw RecordFields.unknown(p, field);
                }
            }
            RecordFields.end(p);
            return new Rec(op, seq, id, progress, at);
        }
    }

    private void apply(Rec r) {
        seq.accumulateAndGet(r.seq(), Math::max);
        switch (r.op()) {
            case "seq" -> { }
            case "progress" -> progress.put(r.seq(), r.progress());
            case "done" -> {
                progress.remove(r.seq());
                seen.put(r.id(), r.at());
            }
            default -> throw new IllegalStateException("unknown inbox journal record '" + r.op() + "'");
        }
    }

    /** Appends the record durably and applies it. */
    private void record(Rec r) {
        record(r, true);
    }

    /** Writes the record to the journal; {@code durable}: returns once it is on disk (a shared fdatasync). */
    private void record(Rec r, boolean durable) {
        byte[] bytes;
        try {
            bytes = json.writeValueAsBytes(r);
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

    /** Who is told of each delivery once it is queued durably (the worker); deliveries queued before are in {@link #queued()}. */
    @Override
    public void onQueued(Consumer<Queued> listener) {
        this.listener = listener;
    }

    /**
     * Queues a delivery durably unless its id was seen before; when this returns QUEUED the
     * delivery survives a crash. Safe to call from many threads at once: their appends share
     * one {@code fdatasync}.
     */
    @Override
    public Accepted accept(String id, String event, byte[] body, String key) {
        if (!InboundDelivery.validId(id)) {
            throw new IllegalArgumentException("invalid delivery id '" + id + "'");
        }
        if (!known.add(id)) {
            return Accepted.DUPLICATE;
        }
        queue(id, event, clock.instant(), body, key);
        return Accepted.QUEUED;
    }

    /**
     * Appends a delivery whose id was just added to {@link #known}, received at {@code now}, waits
     * for it to be durable, and queues it.
     */
    private Queued queue(String id, String event, Instant now, byte[] body, String key) {
        long n = seq.incrementAndGet();
        Segment seg;
        Journal.Written w;
        try {
            byte[] record = DeliveryFile.encode(json, new InboundDelivery(id, event, now, body), n, key);
            synchronized (segmentLock) {
                seg = current;
                w = seg.journal.writeLocated(record);
                seg.live++;
                if (seg.journal.bytes() >= segmentBytes) {
                    seg.sealed = true; // the next delivery starts a new segment
                    current = newSegment();
                }
            }
        } catch (IOException | RuntimeException e) {
            known.remove(id);
            throw e instanceof IOException io ? new UncheckedIOException(io) : (RuntimeException) e;
        }
        try {
            seg.journal.syncTo(w.number());
        } catch (RuntimeException e) {
            // not acknowledged, so GitHub shows it failed; should the record survive after all, the
            // start queues it and a redelivery of the same id is then a duplicate
            release(seg);
            known.remove(id);
            throw e;
        }
        Queued q = new Queued(n, id, event, now, key);
        locations.put(n, new Location(seg.number, w.offset()));
        queued.put(n, q);
        listener.accept(q);
        return q;
    }

    /**
     * Adds what another store acknowledged ({@code agentx store copy}): each waiting delivery queued
     * as that store received it (its time, order key, failed attempts and next try), in the order
     * given, and each id done with there kept as done with at its time. An id this inbox knows
     * already is left as it is. All of it is on disk when this returns.
     */
    public void carry(Acknowledged from) {
        for (Acknowledged.Waiting w : from.waiting()) {
            if (!InboundDelivery.validId(w.id())) {
                throw new IllegalArgumentException("invalid delivery id '" + w.id() + "'");
            }
            if (!known.add(w.id())) {
                continue;
            }
            Queued q = queue(w.id(), w.event(), w.receivedAt(), w.body(), w.key().isEmpty() ? null : w.key());
            if (w.attempts() > 0 || w.notBefore() != null) {
                record(new Rec("progress", q.seq(), null, new Progress(0, false, w.attempts(), w.notBefore()), null),
                        false);
            }
        }
        for (Map.Entry<String, Instant> d : from.done().entrySet()) {
            if (known.add(d.getKey())) {
                record(new Rec("done", 0, d.getKey(), null, d.getValue()), false);
            }
        }
        journal.sync();
    }

    /**
     * What the inbox under {@code dir} holds, read without changing a file (as {@link
     * FileDeliveryLog} reads it), as a server would find it at its start: the deliveries queued and
     * not done with, in the order received, with their failed attempts, and the ids done with that
     * its journal keeps. Nothing when there is no inbox.
     *
     * @throws UncheckedIOException when a file of it cannot be read whole (a damaged record that is
     *     not the last one, a record that is not the inbox's)
     */
    public static Acknowledged acknowledged(Path dir) {
        ObjectMapper json = JsonSupport.mapper();
        Map<Long, Progress> progress = new java.util.HashMap<>();
        TreeMap<String, Instant> done = new TreeMap<>();
        Path journalFile = dir.resolve("journal");
        for (byte[] record : Journal.readOnly(journalFile)) {
            Rec r;
            try {
                r = readRec(json, record);
            } catch (IOException | RuntimeException e) {
                throw new UncheckedIOException("cannot read the inbox journal " + journalFile + ": " + e.getMessage(),
                        e instanceof IOException io ? io : new IOException(e));
            }
            switch (r.op()) {
                case "seq" -> { }
                case "progress" -> progress.put(r.seq(), r.progress());
                case "done" -> {
                    progress.remove(r.seq());
                    done.put(r.id(), r.at());
                }
                default -> throw new UncheckedIOException(new IOException("the inbox journal " + journalFile
                        + " has a record '" + r.op() + "' this agentx does not know"));
            }
        }
        TreeMap<Long, Acknowledged.Waiting> waiting = new TreeMap<>();
        Set<String> queuedIds = new java.util.HashSet<>();
        List<Path> segments;
        try (Stream<Path> s = Files.list(dir.resolve("queue"))) {
            segments = s.filter(p -> p.getFileName().toString().endsWith(SEGMENT_SUFFIX)).sorted().toList();
        } catch (java.nio.file.NoSuchFileException e) {
            segments = List.of();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot list " + dir.resolve("queue") + ": " + e.getMessage(), e);
        }
        for (Path segment : segments) {
            for (byte[] record : Journal.readOnly(segment)) {
                DeliveryFile.Header h;
                InboundDelivery d;
                try {
                    h = DeliveryFile.decodeHeader(json, record);
                    d = DeliveryFile.decode(json, record);
                } catch (IOException e) {
                    throw new UncheckedIOException("cannot read the inbox queue segment " + segment + ": "
                            + e.getMessage(), e);
                }
                if (done.containsKey(h.id()) || !queuedIds.add(h.id())) {
                    continue; // done with (a crash undid its segment's deletion), or queued twice: as a start does
                }
                Progress p = progress.getOrDefault(h.seq(), Progress.NONE);
                waiting.put(h.seq(), new Acknowledged.Waiting(h.id(), h.event(), h.receivedAt(),
                        h.key() == null ? "" : h.key(), d.body(), p.attempts(), p.notBefore()));
            }
        }
        return new Acknowledged(List.copyOf(waiting.values()), done);
    }

    /** Closes the inbox's files; it is not used after this. */
    public void close() {
        journal.close();
        synchronized (segmentLock) {
            segments.values().forEach(seg -> seg.journal.close());
        }
    }

    /** Whether the delivery with this id was received: queued now, or done with in the last {@link #KEEP_SEEN}. */
    @Override
    public boolean received(String id) {
        return known.contains(id);
    }

    /** Deliveries waiting, oldest first. */
    @Override
    public List<Queued> queued() {
        return new ArrayList<>(queued.values());
    }

    /** How many deliveries wait. */
    @Override
    public int size() {
        return queued.size();
    }

    /** One server on its own disk: nothing is left by another. */
    @Override
    public List<Queued> adoptable(Instant now) {
        return List.of();
    }

    /** Every queued delivery is this server's: the delivery as received and its progress. */
    @Override
    public Turn take(Queued q, Instant now) {
        try {
            return new Turn.Mine(read(q), progress(q));
        } catch (RuntimeException e) {
            return new Turn.Unreadable("unreadable: " + e.getMessage());
        }
    }

    /** The delivery as received. */
    public InboundDelivery read(Queued q) {
        Location at = locations.get(q.seq());
        Segment seg;
        synchronized (segmentLock) {
            seg = at == null ? null : segments.get(at.segment());
        }
        if (seg == null) {
            throw new IllegalStateException("delivery " + q.id() + " is no longer in the inbox's queue");
        }
        try {
            return DeliveryFile.decode(json, seg.journal.read(at.offset()));
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read delivery " + q.id() + " from " + seg.journal.file() + ": "
                    + e.getMessage(), e);
        }
    }

    /** The journal's records written and known to be on disk since the inbox was opened (for tests). */
    long[] journalWrittenAndDurable() {
        return new long[] {journal.written(), journal.durable()};
    }

    public Progress progress(Queued q) {
        return progress.getOrDefault(q.seq(), Progress.NONE);
    }

    /**
     * Makes every record written to the journal so far durable (no fdatasync if they are) and says
     * which deliveries are now durably done with: those numbered up to the highest handed out before
     * the sync that were not queued then. So a machine crash can undo at most the done records
     * written since the last call (the worker calls it on every tick).
     */
    @Override
    public java.util.function.LongPredicate syncDone() {
        long upTo = seq.get();
        Set<Long> waiting = Set.copyOf(queued.keySet());
        journal.sync();
        return n -> n <= upTo && !waiting.contains(n);
    }

    @Override
    public void saveProgress(Queued q, Progress p) {
        record(new Rec("progress", q.seq(), null, p, null));
    }

    /**
     * The delivery is processed: its id is kept as seen, and its segment may go. This record is
     * not waited for (no fdatasync of its own): the next sync of the journal covers it (the
     * worker's {@link #syncDone()} on every tick, a compaction, or the deletion of its segment,
     * which waits for it). Should a machine crash lose it, the delivery is processed again at
     * start, which carries out no command twice (each was recorded as done, durably, in the
     * outbox journal: the worker's progress notes, forgotten only after this record is durable)
     * and queues no effect twice (the outbox knows their keys); the rest of processing (the
     * monitor, bringing the issue in step, abandoning on close) is harmless to repeat.
     */
    @Override
    public void done(Queued q) {
        record(new Rec("done", q.seq(), q.id(), null, clock.instant()), false);
        if (queued.remove(q.seq()) != null) {
            release(q);
        }
        maybeCompact();
    }

    private void release(Queued q) {
        Location at = locations.remove(q.seq());
        Segment seg;
        synchronized (segmentLock) {
            seg = at == null ? null : segments.get(at.segment());
        }
        if (seg != null) {
            release(seg);
        }
    }

    private void release(Segment seg) {
        Segment gone;
        synchronized (segmentLock) {
            seg.live--;
            gone = takeIfDone(seg);
        }
        if (gone != null) {
            delete(gone);
        }
    }

    /**
     * The delivery cannot be processed: keep it in {@code failed/} ({@code <seq>-<id>.json}, the
     * inbox file format) for a person to look at.
     */
    @Override
    public void fail(Queued q, String why) {
        LOG.error("delivery {} moved to {}: {}", q.id(), failed, why);
        String name = String.format("%020d-%s", q.seq(), q.id());
        byte[] content;
        Path target;
        try {
            content = DeliveryFile.encode(json, read(q));
            target = failed.resolve(name + ".json");
        } catch (IOException | RuntimeException e) {
            // not even readable: what is known of it, and why
            content = ("delivery " + q.id() + " (" + q.event() + "), received " + q.receivedAt() + ", could not be "
                    + "read from the inbox's queue: " + e.getMessage() + "\nfailed because: " + why + "\n")
                    .getBytes(java.nio.charset.StandardCharsets.UTF_8);
            target = failed.resolve(name + ".txt");
        }
        AtomicFiles.write(target, content);
        record(new Rec("done", q.seq(), q.id(), null, clock.instant()));
        if (queued.remove(q.seq()) != null) {
            release(q);
        }
    }

    /** Forgets delivery ids seen longer ago than {@link #KEEP_SEEN} and compacts the journal. */
    @Override
    public void prune() {
        try {
            compact();
        } catch (RuntimeException e) {
            LOG.warn("inbox: {}", e.getMessage());
        }
    }

    private void maybeCompact() {
        if (journal.size() > 2L * (seen.size() + progress.size()) + COMPACT_SLACK) {
            prune();
        }
    }

    /**
     * Rewrites the journal from what this inbox keeps in memory (the ids done with in the last
     * {@link #KEEP_SEEN}, the progress of deliveries still queued, the last seq), followed by the
     * records written meanwhile, without reading it back (as the outbox does; each record sets
     * what it changes, so those after the mark replay on top of a snapshot that already has some).
     */
    private void compact() {
        synchronized (compaction) {
            Instant cutoff = clock.instant().minus(KEEP_SEEN);
            seen.entrySet().removeIf(e -> {
                boolean old = e.getValue().isBefore(cutoff);
                if (old) {
                    known.remove(e.getKey());
                }
                return old;
            });
            Journal.Mark mark;
            changing.writeLock().lock();
            try {
                mark = journal.mark();
            } finally {
                changing.writeLock().unlock();
            }
            journal.compact(mark, out -> {
                try {
                    out.accept(json.writeValueAsBytes(new Rec("seq", seq.get(), null, null, null)));
                    StringBuilder done = new StringBuilder(96);
                    for (Map.Entry<String, Instant> e : seen.entrySet()) {
                        if (!InboundDelivery.validId(e.getKey())) { // never seen: ids are checked on receipt
                            out.accept(json.writeValueAsBytes(new Rec("done", 0, e.getKey(), null, e.getValue())));
                            continue;
                        }
                        // by hand (a few hundred thousand): Rec's JSON, a valid id needs no escaping (a test checks)
                        done.setLength(0);
                        done.append("{\"op\":\"done\",\"seq\":0,\"id\":\"").append(e.getKey()).append("\",\"at\":\"");
                        IsoInstant.append(done, e.getValue()).append("\"}");
                        out.accept(done.toString().getBytes(java.nio.charset.StandardCharsets.US_ASCII));
                    }
                    for (Map.Entry<Long, Progress> e : progress.entrySet()) { // any order: a record per delivery
                        out.accept(json.writeValueAsBytes(new Rec("progress", e.getKey(), null, e.getValue(), null)));
                    }
                } catch (IOException e) {
                    throw new UncheckedIOException("cannot compact the inbox journal: " + e.getMessage(), e);
                }
            });
        }
    }
}
