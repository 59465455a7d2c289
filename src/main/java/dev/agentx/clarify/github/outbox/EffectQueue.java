package dev.agentx.clarify.github.outbox;

import dev.agentx.clarify.files.AtomicFiles;
import dev.agentx.clarify.files.Journal;
import dev.agentx.clarify.files.JsonSupport;
import dev.agentx.clarify.github.RepoRef;
import dev.agentx.clarify.store.files.OutboxJournal;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.ReentrantReadWriteLock;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.slf4j.MDC;

/**
 * The outbox's storage: the effects queued, per issue in order ({@link IssueQueue}), the keys
 * queued or done, and the notes ({@link OutboxNotes}), in memory and in {@code outbox/journal}
 * ({@link OutboxJournal}); effects given up on in {@code outbox/failed/}. Every change writes its
 * record and updates the memory to match; a record is durable once the lane that wrote it syncs
 * ({@link LaneSync}), an fsync shared with the other lanes' records written meanwhile.
 *
 * <p>The journal is compacted by {@link #prune()} (the worker's first tick after a start, then
 * daily) and when it has grown well past what it must keep ({@link #maybeCompact()}): rewritten
 * from the memory, never read back.
 */
final class EffectQueue {
    private static final Logger LOG = LoggerFactory.getLogger(Outbox.class);
    /** How long a done key is remembered: an effect with that key is not queued again meanwhile. */
    static final Duration KEEP_DONE = Duration.ofDays(30);
    /** The journal is compacted when it holds more than this many records beyond twice what it must keep. */
    static final int COMPACT_SLACK = 20_000;
    /** In {@link #keys}: queued, not done yet. */
    private static final Instant QUEUED = Instant.MAX;

    private final OutboxJournal journal;
    private final Path failed;
    private final Clock clock;
    private final LaneSync lanes;
    private final OutboxNotes notes;
    /** Told of the issue (its {@link #issueKey}) of each effect queued, and of each pending at the start. */
    private final Consumer<String> queuedFor;
    /** Keys (hashed) queued ({@link #QUEUED}) or done (when): an effect with one of them is not queued again. */
    private final Map<String, Instant> keys = new ConcurrentHashMap<>();
    /** The queued effects, per issue, in order. */
    private final Map<String, IssueQueue> issues = new ConcurrentHashMap<>();
    private final AtomicLong seq = new AtomicLong();
    private final Object compaction = new Object();
    /**
     * Held for reading by every change that writes a journal record and updates the memory above
     * to match, for the two together; a compaction takes it for writing only to mark the journal's
     * end, so its snapshot of the memory covers every record before the mark. Taken before an
     * issue queue's monitor, never while holding one: a reader waiting for it behind a compaction
     * while holding the monitor would deadlock with a reader holding it and waiting for the monitor.
     */
    final ReentrantReadWriteLock changing;

    private EffectQueue(OutboxJournal journal, Path failed, Clock clock, Consumer<String> queuedFor,
                        ReentrantReadWriteLock changing, LaneSync lanes, OutboxNotes notes) {
        this.journal = journal;
        this.failed = failed;
        this.clock = clock;
        this.queuedFor = queuedFor;
        this.changing = changing;
        this.lanes = lanes;
        this.notes = notes;
    }

    /**
     * Opens the outbox's storage in {@code dir}: what its journal adds up to is taken into memory,
     * every comment still pending as uncertain (it may have been on its way to GitHub when the last
     * process ended). Not compacted here: the worker's first tick prunes it, off the start's path.
     */
    static EffectQueue open(Path dir, Clock clock, Consumer<String> queuedFor) {
        Path failed = dir.resolve("failed");
        try {
            Files.createDirectories(failed);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot open the outbox in " + dir + ": " + e.getMessage(), e);
        }
        OutboxJournal journal = new OutboxJournal(dir.resolve("journal"));
        OutboxJournal.Contents state = journal.read();
        ReentrantReadWriteLock changing = new ReentrantReadWriteLock();
        LaneSync lanes = new LaneSync(journal);
        try {
            EffectQueue queue = new EffectQueue(journal, failed, clock, queuedFor, changing, lanes,
                    new OutboxNotes(journal, changing, lanes, state.notes()));
            queue.seq.set(state.lastSeq());
            state.done().forEach(queue.keys::put);
            for (OutboxJournal.Pending p : state.pending()) {
                QueuedEffect entry = queued(p);
                if ((entry.effect() instanceof Effect.Comment || entry.effect() instanceof Effect.ReviewReply)
                        && !entry.uncertain()) {
                    // it may have been on its way to GitHub when the last process ended: look for its tag
                    // before posting it (one listing of the issue's comments, only for what was pending)
                    entry = entry.asUncertain();
                }
                queue.keys.put(p.hash(), QUEUED);
                String issue = issueKey(entry.effect());
                queue.queue(issue).put(new Slot(p.seq(), p.hash(), entry, 0));
                queuedFor.accept(issue);
            }
            return queue;
        } catch (IOException | RuntimeException e) {
            throw new IllegalStateException("cannot read the outbox journal " + journal.file() + ": " + e.getMessage(),
                    e);
        }
    }

    /** The first 16 bytes of the key's SHA-256, in hex: what the journal, the tag and the claims keep. */
    static String hash(String key) {
        try {
            byte[] d = MessageDigest.getInstance("SHA-256").digest(key.getBytes(StandardCharsets.UTF_8));
            return HexFormat.of().formatHex(d, 0, 16);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    /**
     * The queue an effect goes into: its issue's, or for a notification its receiver's ({@link
     * #NOTIFY_LINE}). Effects of one queue are sent in the order queued. An issue's queue is known
     * by its repository's id where known, so an issue's effects stay one queue across a rename, a
     * transfer or the App installed again.
     */
    static String issueKey(Effect e) {
        if (e instanceof Effect.Notification n) {
            return NOTIFY_LINE + n.receiver();
        }
        return issueKey(e.installation(), e.repo(), e.issue());
    }

    /** The start of a receiver's line of notifications; no issue's key starts with it. */
    static final String NOTIFY_LINE = "notify/";

    /** Whether the queue {@code key} is a receiver's line of notifications. */
    static boolean notificationLine(String key) {
        return key.startsWith(NOTIFY_LINE);
    }

    static String issueKey(long installation, RepoRef repo, int issue) {
        return repo.id() > 0 ? "repository " + repo.id() + "#" + issue : installation + "/" + repo + "#" + issue;
    }

    OutboxNotes notes() {
        return notes;
    }

    /** Whether an effect with key hash {@code h} is queued or was done (or given up on) here. */
    boolean known(String h) {
        return keys.containsKey(h);
    }

    /** Whether the effect with key hash {@code h} was done (or given up on) here, not just queued. */
    boolean done(String h) {
        Instant known = keys.get(h);
        return known != null && known != QUEUED;
    }

    private IssueQueue queue(String key) {
        return issues.computeIfAbsent(key, IssueQueue::new);
    }

    /** The queue of the issue {@code key}, if it has one. */
    IssueQueue issue(String key) {
        return issues.get(key);
    }

    /** The issues' queues now. */
    Collection<IssueQueue> issues() {
        return List.copyOf(issues.values());
    }

    /** Drops the issue's queue when nothing is queued, sent or asked for in it. */
    void retireIfIdle(IssueQueue q) {
        if (q.retireIfIdle()) {
            issues.remove(q.key, q);
        }
    }

    /**
     * Queues the effect: written to the journal, so it survives the process ending, and durable
     * against a machine crash at the calling thread's next {@link #sync()}. False when its key was
     * queued or done before. {@code uncertain}: a comment is looked for on the issue before it is
     * posted; {@code after}: what it waits for ({@link QueuedEffect#after}), or null; {@code
     * takenOver}: from the claim of a replica that is gone.
     */
    boolean add(Effect effect, boolean uncertain, List<String> after, boolean takenOver) {
        String h = hash(effect.key());
        String key = issueKey(effect);
        while (true) {
            IssueQueue q = queue(key);
            changing.readLock().lock(); // before the issue's monitor, as every change takes them
            try {
                synchronized (q) {
                    if (q.retired) {
                        continue;
                    }
                    Instant known = keys.putIfAbsent(h, QUEUED);
                    if (known != null) {
                        if (known == QUEUED) {
                            // pending, perhaps written by another thread and not durable yet: this
                            // thread's sync() must cover it too before anything claims it queued
                            lanes.cover(q.pendingMark(h));
                        }
                        return false;
                    }
                    // seq and insertion under the issue's monitor: the issue's effects stay in the order queued
                    long n = seq.incrementAndGet();
                    QueuedEffect entry = new QueuedEffect(effect, clock.instant(), 0, null, uncertain, null,
                            MDC.get("delivery"), after, takenOver);
                    long mark;
                    try {
                        mark = journal.queued(n, h, json(entry));
                        q.put(new Slot(n, h, entry, mark));
                    } catch (RuntimeException e) {
                        keys.remove(h);
                        throw e;
                    }
                    lanes.cover(mark);
                }
            } finally {
                changing.readLock().unlock();
            }
            queuedFor.accept(key);
            return true;
        }
    }

    /** Makes every record the calling thread wrote or covered durable ({@link LaneSync}). */
    void sync() {
        lanes.sync();
    }

    /** Waits until journal record {@code mark} is durable: an effect is never sent before its queue record is. */
    void syncTo(long mark) {
        journal.syncTo(mark);
    }

    /** Makes every record written so far durable: a sender's done and retry records, one fsync a round. */
    void syncAll() {
        journal.sync();
    }

    /** Records the effect's entry after a failed attempt, in the journal and in its queue. */
    void retried(IssueQueue q, Slot slot, QueuedEffect retried) {
        changing.readLock().lock();
        try {
            journal.retried(slot.seq(), json(retried));
            q.put(new Slot(slot.seq(), slot.hash(), retried, 0));
        } finally {
            changing.readLock().unlock();
        }
    }

    /** Records the effect as done and takes it off its issue's queue; when. */
    Instant markDone(IssueQueue q, Slot slot) {
        Instant at = clock.instant();
        changing.readLock().lock();
        try {
            journal.done(slot.seq(), slot.hash(), at);
            keys.put(slot.hash(), at);
            q.remove(slot);
        } finally {
            changing.readLock().unlock();
        }
        return at;
    }

    /**
     * Keeps the entry in {@code failed/<seq>-<hash>.json} for a person to look at, then drops it
     * from the queue, durably; its key is remembered as done (not queued again for {@link #KEEP_DONE}).
     */
    void moveToFailed(IssueQueue q, Slot slot, QueuedEffect entry) {
        AtomicFiles.write(failed.resolve(String.format("%020d-%s.json", slot.seq(), slot.hash())), json(entry));
        long mark;
        changing.readLock().lock();
        try {
            Instant at = clock.instant();
            mark = journal.failed(slot.seq(), slot.hash(), at);
            keys.put(slot.hash(), at);
            q.remove(slot);
        } finally {
            changing.readLock().unlock();
        }
        journal.syncTo(mark);
    }

    /** Effects queued, not yet done or failed. */
    int size() {
        int n = 0;
        for (IssueQueue q : issues.values()) {
            n += q.size();
        }
        return n;
    }

    /** The journal's fdatasyncs since it was opened. */
    long journalSyncs() {
        return journal.syncs();
    }

    /** Records written to the journal since it was opened that are known to be on disk. */
    long journalDurable() {
        return journal.durable();
    }

    /** Forgets done keys older than {@link #KEEP_DONE} and compacts the journal. */
    void prune() {
        try {
            compact();
        } catch (RuntimeException e) {
            LOG.warn("outbox: {}", e.getMessage());
        }
    }

    /** Compacts the journal when it holds far more records than it must keep. */
    void maybeCompact() {
        if (journal.size() > 2L * (keys.size() + notes.size()) + COMPACT_SLACK) {
            prune();
        }
    }

    /**
     * Rewrites the journal from what is kept in memory (the effects queued, the done keys younger
     * than {@link #KEEP_DONE}, the notes, the last seq), followed by the records written meanwhile:
     * nothing is read back or parsed, so the cost is writing what is kept, not the journal's length.
     * Every change holds {@link #changing} for reading while it writes its record and updates the
     * memory; the mark is taken under the write lock, so the snapshot taken after it covers every
     * record before the mark. It may also cover some after it, which replay on top of it to the
     * same state (each record sets what it changes).
     */
    private void compact() {
        synchronized (compaction) {
            Instant cutoff = clock.instant().minus(KEEP_DONE);
            keys.entrySet().removeIf(e -> e.getValue() != QUEUED && e.getValue().isBefore(cutoff));
            Journal.Mark mark;
            changing.writeLock().lock();
            try {
                mark = journal.mark();
            } finally {
                changing.writeLock().unlock();
            }
            journal.compact(mark, this::snapshot);
        }
    }

    /** The records that rebuild what is kept in memory. */
    private void snapshot(OutboxJournal.Head out) {
        out.lastSeq(seq.get());
        for (Map.Entry<String, Instant> k : keys.entrySet()) {
            if (k.getValue() != QUEUED) {
                out.doneKey(k.getKey(), k.getValue());
            }
        }
        for (IssueQueue q : issues.values()) {
            for (Slot slot : q.slots()) {
                out.queued(slot.seq(), slot.hash(), json(slot.entry()));
            }
        }
        notes.writeTo(out);
    }

    /** The entry as JSON, as the journal and {@code failed/} keep it. */
    private static byte[] json(QueuedEffect entry) {
        try {
            return JsonSupport.shared().writeValueAsBytes(entry);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * The effects still queued (not done, not given up on) in the outbox journal of {@code dir},
     * in their order, read without changing the file (a server may be appending to it; a
     * half-written last record is left out). Empty without a journal.
     */
    static List<Effect> pendingIn(Path dir) {
        List<Effect> out = new ArrayList<>();
        for (OutboxJournal.Pending p : OutboxJournal.readOnly(dir.resolve("journal")).pending()) {
            try {
                out.add(queued(p).effect());
            } catch (IOException e) {
                throw new UncheckedIOException("cannot read the queued effect " + p.seq() + " of the outbox journal in "
                        + dir + ": " + e.getMessage(), e);
            }
        }
        return out;
    }

    /** A queued effect's entry as the journal holds it; one without an effect is refused. */
    private static QueuedEffect queued(OutboxJournal.Pending p) throws IOException {
        QueuedEffect entry = JsonSupport.shared().treeToValue(p.entry(), QueuedEffect.class);
        if (entry.effect() == null) {
            throw new IllegalStateException("the queued effect " + p.seq() + " has no effect");
        }
        return entry;
    }
}
