package dev.agentx.clarify.store.files;

import dev.agentx.clarify.files.Journal;
import dev.agentx.clarify.store.InboundDelivery;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.LongSupplier;
import java.util.function.Predicate;
import java.util.stream.Stream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The inbox's queue, {@code queue/<n>.log}: segments of a {@link Journal} that every accepted
 * delivery is appended to ({@link DeliveryFile}: a header, then the body as received), made durable
 * by one {@code fdatasync} shared by the requests that arrive together, so the 202 costs an append,
 * not a file of its own (create, fsync, rename, directory fsync). A segment is sealed (takes no
 * more appends) once it holds the segment size and the next one is made (outside the lock the
 * appends take, so the acknowledgements meanwhile still append to it), and deleted once none of its deliveries is left:
 * after the done records in the inbox's journal are on disk, so that at every moment one of the two
 * says what became of each delivery.
 */
final class QueueSegments {
    /** The inbox's log: its parts log as one. */
    private static final Logger LOG = LoggerFactory.getLogger(FileDeliveryQueue.class);
    private static final String SUFFIX = ".log";

    private final Path dir;
    private final long segmentBytes;
    /** The highest delivery number handed out: a new segment is numbered past it. */
    private final LongSupplier highestSeq;
    /** Makes the done records durable, before a segment goes. */
    private final Runnable beforeDelete;
    /** Guards {@link #segments}, {@link #current} and each segment's count of live deliveries. */
    private final Object lock = new Object();
    private final TreeMap<Long, Segment> segments = new TreeMap<>();
    private Segment current;
    /**
     * A new segment is being made (outside {@link #lock}) by the append that filled {@link #current};
     * guarded by {@link #lock}. Meanwhile appends go on to {@link #current}, past the segment size.
     */
    private boolean rolling;
    /** Where each queued delivery is kept, by number. */
    private final Map<Long, Location> locations = new ConcurrentHashMap<>();

    /** Where a queued delivery is kept: its queue segment (by number) and the record's offset in it. */
    private record Location(long segment, long offset) {
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

    QueueSegments(Path dir, long segmentBytes, LongSupplier highestSeq, Runnable beforeDelete) {
        this.dir = dir;
        this.segmentBytes = segmentBytes;
        this.highestSeq = highestSeq;
        this.beforeDelete = beforeDelete;
    }

    /** The segment files under {@code dir}, in their order. */
    static List<Path> files(Path dir) throws IOException {
        try (Stream<Path> s = Files.list(dir)) {
            return s.filter(p -> p.getFileName().toString().endsWith(SUFFIX)).sorted().toList();
        }
    }

    /**
     * At start: reads every segment, handing each delivery's header to {@code queued}, which says
     * whether the delivery is queued (false: done with before a crash undid its segment's deletion,
     * or queued twice); then seals every segment but the last (and the last if it is full), deletes
     * those with no delivery left, and appends to the last or a new one.
     */
    void open(Predicate<DeliveryFile.Header> queued) throws IOException {
        for (Path f : files(dir)) {
            String name = f.getFileName().toString();
            long number = Long.parseLong(name.substring(0, name.length() - SUFFIX.length()));
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
                DeliveryFile.Header h = DeliveryFile.decodeHeader(r.payload());
                if (queued.test(h)) {
                    locations.put(h.seq(), new Location(number, r.offset()));
                    seg.live++;
                }
            }
            segments.put(number, seg);
        }
    }

    /** After {@link #open}: seals the segments a start seals, deletes those done with, and picks the one appended to. */
    void startAppending() {
        List<Segment> done = new ArrayList<>();
        synchronized (lock) {
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
    }

    /**
     * Appends delivery {@code seq}'s record and returns once it is on disk (an fdatasync shared with
     * the appends that came meanwhile). Should the sync fail, the delivery counts as not queued.
     * The append that fills the segment then makes the next one ({@link #rollOver}): its file's
     * creation and two fsyncs happen outside {@link #lock}, so the other acknowledgements do not
     * wait for them.
     */
    void append(long seq, byte[] record) {
        Segment seg;
        Journal.Written w;
        boolean roll = false;
        synchronized (lock) {
            seg = current;
            w = seg.journal.writeLocated(record);
            seg.live++;
            if (!rolling && seg.journal.bytes() >= segmentBytes) {
                rolling = true;
                roll = true;
            }
        }
        try {
            seg.journal.syncTo(w.number());
        } catch (RuntimeException e) {
            // not acknowledged, so GitHub shows it failed; should the record survive after all, the
            // start queues it and a redelivery of the same id is then a duplicate
            release(seg);
            if (roll) {
                synchronized (lock) {
                    rolling = false; // the next append tries again
                }
            }
            throw e;
        }
        locations.put(seq, new Location(seg.number, w.offset()));
        if (roll) {
            rollOver();
        }
    }

    /**
     * Makes the segment appended to next (created, fsynced, its directory fsynced) without holding
     * {@link #lock}, then seals the full one. Should that fail, appends go on to the full segment
     * and the next one tries again; the delivery that filled it is queued either way.
     */
    private void rollOver() {
        long number;
        synchronized (lock) {
            number = Math.max(highestSeq.getAsLong() + 1, segments.lastKey() + 1);
        }
        Segment next;
        try {
            next = openSegment(number);
        } catch (RuntimeException e) {
            LOG.warn("inbox: cannot start a new queue segment ({}); appending to the full one", e.toString());
            synchronized (lock) {
                rolling = false;
            }
            return;
        }
        Segment gone;
        synchronized (lock) {
            Segment full = current;
            segments.put(number, next);
            full.sealed = true;
            current = next;
            rolling = false;
            gone = takeIfDone(full);
        }
        if (gone != null) {
            delete(gone);
        }
    }

    /** Queued delivery {@code seq} as received ({@code id} names it in errors). */
    InboundDelivery read(long seq, String id) {
        Location at = locations.get(seq);
        Segment seg;
        synchronized (lock) {
            seg = at == null ? null : segments.get(at.segment());
        }
        if (seg == null) {
            throw new IllegalStateException("delivery " + id + " is no longer in the inbox's queue");
        }
        try {
            return DeliveryFile.decode(seg.journal.read(at.offset()));
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read delivery " + id + " from " + seg.journal.file() + ": "
                    + e.getMessage(), e);
        }
    }

    /** Delivery {@code seq} is done with: its segment goes once none of its deliveries is left and it is sealed. */
    void release(long seq) {
        Location at = locations.remove(seq);
        Segment seg;
        synchronized (lock) {
            seg = at == null ? null : segments.get(at.segment());
        }
        if (seg != null) {
            release(seg);
        }
    }

    /** Closes the segments' files. */
    void close() {
        synchronized (lock) {
            segments.values().forEach(seg -> seg.journal.close());
        }
    }

    private void release(Segment seg) {
        Segment gone;
        synchronized (lock) {
            seg.live--;
            gone = takeIfDone(seg);
        }
        if (gone != null) {
            delete(gone);
        }
    }

    /** A new segment to append to, numbered after every earlier one; the caller holds {@link #lock}. */
    private Segment newSegment() {
        long number = Math.max(highestSeq.getAsLong() + 1, segments.isEmpty() ? 1 : segments.lastKey() + 1);
        Segment seg = openSegment(number);
        segments.put(number, seg);
        return seg;
    }

    /** Creates segment {@code number}'s file, durably (its directory entry too), empty and ready for appends. */
    private Segment openSegment(long number) {
        Path file = dir.resolve(String.format("%020d%s", number, SUFFIX));
        Journal j = new Journal(file);
        j.records(); // positions it at the end (a new file: empty)
        return new Segment(number, j);
    }

    /**
     * Takes a sealed segment none of whose deliveries is left out of {@link #segments}, for
     * {@link #delete}; null if it stays. The caller holds {@link #lock}.
     */
    private Segment takeIfDone(Segment seg) {
        if (!seg.sealed || seg.live > 0) {
            return null;
        }
        segments.remove(seg.number);
        return seg;
    }

    /** Deletes a segment {@link #takeIfDone} took out; outside {@link #lock}, so acknowledgements go on meanwhile. */
    private void delete(Segment seg) {
        // its deliveries' done records first (written without waiting): once it is gone, they alone say so
        beforeDelete.run();
        seg.journal.close();
        try {
            Files.deleteIfExists(seg.journal.file()); // no fsync: should a crash undo it, the start drops it again
        } catch (IOException e) {
            LOG.warn("inbox: cannot delete the processed queue segment {}: {}", seg.journal.file(), e.toString());
        }
    }
}
