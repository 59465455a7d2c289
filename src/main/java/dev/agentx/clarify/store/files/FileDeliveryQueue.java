package dev.agentx.clarify.store.files;

import dev.agentx.clarify.files.AtomicFiles;
import dev.agentx.clarify.store.Acknowledged;
import dev.agentx.clarify.store.DeliveryQueue;
import dev.agentx.clarify.store.InboundDelivery;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.function.Consumer;
import java.util.function.LongPredicate;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The durable inbox of verified deliveries under {@code $AGENTX_DATA_DIR/inbox/}, the file store's
 * {@link DeliveryQueue}; the place to start reading the inbox. Its parts: {@code queue/<n>.log},
 * the deliveries as received, appended to {@link QueueSegments} under a shared {@code fdatasync};
 * {@code journal}, the {@link InboxJournal} of failed attempts, done marks and the last number;
 * the dedupe by id in memory ({@link DeliveryIds}); {@code failed/}, the deliveries that could not
 * be processed, a file each ({@link DeliveryFile}), with the reason in the log. The id of every
 * delivery done with is kept for {@link #KEEP_SEEN}, which covers GitHub's manual redelivery
 * window (deliveries of the past 3 days) with room to spare.
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
    /** A queue segment takes no more appends once it holds this many bytes (a few thousand deliveries). */
    static final long SEGMENT_BYTES = 64L << 20;

    private final Path failed;
    private final Clock clock;
    private final DeliveryIds ids = new DeliveryIds();
    final InboxJournal marks; // package-private for tests
    private final QueueSegments segments;
    private final ConcurrentSkipListMap<Long, Queued> queued = new ConcurrentSkipListMap<>();
    private volatile Consumer<Queued> listener = q -> { };

    public FileDeliveryQueue(Path dir, Clock clock) {
        this(dir, clock, SEGMENT_BYTES);
    }

    /**
     * With a smaller segment size, for tests of the segments' lifecycle (also in child processes).
     * At start the journal is read first, then the queue: each delivery not done with is queued
     * again in its place, one whose id the journal has as done (or that is queued twice) is left out.
     */
    public FileDeliveryQueue(Path dir, Clock clock, long segmentBytes) {
        Path queueDir = dir.resolve("queue");
        this.failed = dir.resolve("failed");
        this.clock = clock;
        try {
            Files.createDirectories(queueDir);
            Files.createDirectories(failed);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot open the inbox in " + dir + ": " + e.getMessage(), e);
        }
        this.marks = new InboxJournal(dir.resolve("journal"), clock, ids);
        this.segments = new QueueSegments(queueDir, segmentBytes, marks::highestSeq, marks::sync);
        try {
            segments.open(h -> {
                marks.numberSeen(h.seq());
                if (ids.doneWith(h.id()) || !ids.add(h.id())) {
                    return false; // done before a crash undid the segment's deletion, or queued twice
                }
                queued.put(h.seq(), new Queued(h.seq(), h.id(), h.event(), h.receivedAt(),
                        h.key() == null ? "" : h.key()));
                return true;
            });
            marks.keepProgressOf(queued.keySet());
            segments.startAppending();
        } catch (IOException | NumberFormatException e) {
            throw new UncheckedIOException("cannot open the inbox in " + dir + ": " + e.getMessage(),
                    e instanceof IOException io ? io : new IOException(e));
        }
        ids.knowDone();
        // not compacted here: the worker's first tick prunes (compacts) it, off the start's path
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
        if (!ids.add(id)) {
            return Accepted.DUPLICATE;
        }
        queue(id, event, clock.instant(), body, key);
        return Accepted.QUEUED;
    }

    /**
     * Appends a delivery whose id was just added to {@link #ids}, received at {@code now}, waits
     * for it to be durable, and queues it.
     */
    private Queued queue(String id, String event, Instant now, byte[] body, String key) {
        long n = marks.nextSeq();
        try {
            segments.append(n, DeliveryFile.encode(new InboundDelivery(id, event, now, body), n, key));
        } catch (IOException | RuntimeException e) {
            ids.forget(id);
            throw e instanceof IOException io ? new UncheckedIOException(io) : (RuntimeException) e;
        }
        Queued q = new Queued(n, id, event, now, key);
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
            if (!ids.add(w.id())) {
                continue;
            }
            Queued q = queue(w.id(), w.event(), w.receivedAt(), w.body(), w.key().isEmpty() ? null : w.key());
            if (w.attempts() > 0 || w.notBefore() != null) {
                marks.progress(q.seq(), new Progress(0, false, w.attempts(), w.notBefore()), false);
            }
        }
        for (Map.Entry<String, Instant> d : from.done().entrySet()) {
            if (ids.add(d.getKey())) {
                marks.done(0, d.getKey(), d.getValue(), false);
            }
        }
        marks.sync();
    }

    /**
     * What the inbox under {@code dir} holds, read without changing a file, as a server would find
     * it at its start ({@link InboxReader}). Nothing when there is no inbox.
     *
     * @throws UncheckedIOException when a file of it cannot be read whole (a damaged record that is
     *     not the last one, a record that is not the inbox's)
     */
    public static Acknowledged acknowledged(Path dir) {
        return InboxReader.acknowledged(dir);
    }

    /** Closes the inbox's files; it is not used after this. */
    public void close() {
        marks.close();
        segments.close();
    }

    /** Whether the delivery with this id was received: queued now, or done with in the last {@link #KEEP_SEEN}. */
    @Override
    public boolean received(String id) {
        return ids.known(id);
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
        return segments.read(q.seq(), q.id());
    }

    public Progress progress(Queued q) {
        return marks.progress(q.seq());
    }

    /**
     * Makes every record written to the journal so far durable (no fdatasync if they are) and says
     * which deliveries are now durably done with: those numbered up to the highest handed out before
     * the sync that were not queued then. So a machine crash can undo at most the done records
     * written since the last call (the worker calls it on every tick).
     */
    @Override
    public LongPredicate syncDone() {
        long upTo = marks.highestSeq();
        Set<Long> waiting = Set.copyOf(queued.keySet());
        marks.sync();
        return n -> n <= upTo && !waiting.contains(n);
    }

    @Override
    public void saveProgress(Queued q, Progress p) {
        marks.progress(q.seq(), p, true);
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
        marks.done(q.seq(), q.id(), clock.instant(), false);
        if (queued.remove(q.seq()) != null) {
            segments.release(q.seq());
        }
        if (marks.outgrown()) {
            prune();
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
            content = DeliveryFile.encode(read(q));
            target = failed.resolve(name + ".json");
        } catch (IOException | RuntimeException e) {
            // not even readable: what is known of it, and why
            content = ("delivery " + q.id() + " (" + q.event() + "), received " + q.receivedAt() + ", could not be "
                    + "read from the inbox's queue: " + e.getMessage() + "\nfailed because: " + why + "\n")
                    .getBytes(StandardCharsets.UTF_8);
            target = failed.resolve(name + ".txt");
        }
        AtomicFiles.write(target, content);
        marks.done(q.seq(), q.id(), clock.instant(), true);
        if (queued.remove(q.seq()) != null) {
            segments.release(q.seq());
        }
    }

    /** Forgets delivery ids seen longer ago than {@link #KEEP_SEEN} and compacts the journal. */
    @Override
    public void prune() {
        try {
            marks.compact();
        } catch (RuntimeException e) {
            LOG.warn("inbox: {}", e.getMessage());
        }
    }
}
