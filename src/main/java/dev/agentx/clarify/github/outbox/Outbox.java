package dev.agentx.clarify.github.outbox;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.agentx.clarify.files.AtomicFiles;
import dev.agentx.clarify.files.Journal;
import dev.agentx.clarify.files.JsonSupport;
import dev.agentx.clarify.github.RepoRef;
import dev.agentx.clarify.github.api.GitHubApiException;
import dev.agentx.clarify.github.api.GitHubGateway;
import dev.agentx.clarify.metrics.ServerMetrics;
import dev.agentx.clarify.render.CommentLimit;
import dev.agentx.clarify.store.Replicas;
import dev.agentx.clarify.store.UnitOfWork;
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
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.ReentrantLock;
import java.util.concurrent.locks.ReentrantReadWriteLock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.slf4j.MDC;

/**
 * The durable queue of effects on GitHub, kept in {@code outbox/journal}. An effect is recorded
 * on disk before any network call and recorded as done only once GitHub confirmed it, so a crash
 * or an outage loses nothing. Effects of one issue go out in the order they were queued; one that
 * fails holds back the later effects of its issue (so a question never appears after its answer).
 * Different issues are sent side by side.
 *
 * <p>Storage: an append-only journal ({@link OutboxJournal}) of queue, retry, done and failed
 * records with group commit, so the effects and confirmations of deliveries handled at the same time share their
 * fsyncs; it is compacted by {@link #prune()} (the worker's first tick after a start, then daily)
 * and when it has grown well past what it must keep.
 *
 * <p>Retries: server errors and lost connections back off exponentially (10 s doubling, at most
 * 10 min, or GitHub's Retry-After); rate limits (429, secondary limits, an exhausted primary
 * limit) wait what GitHub says and hold back the whole installation. Other 4xx answers are final:
 * the effect moves to {@code failed/} with the reason.
 *
 * <p>Exactly once: each effect's key is remembered as done for {@link #KEEP_DONE}. Every comment
 * carries a hidden {@code <!-- agentx-effect:... -->} tag. One whose earlier attempt may have
 * reached GitHub (a 5xx, no response, or still pending when the previous process ended, which may
 * have died during the POST) is posted only after the issue's comments were looked through for
 * that tag. Among replicas on one database ({@link Replicas}) an effect is sent by the replica
 * that claimed its key first; the others drop their copy once that claim is done, holding back the
 * issue's later effects until then, and take a rate limit one of them met as their own. A claim
 * keeps its effect, so the claims of a replica that is gone are taken over and sent by another.
 * Effects of an issue queued after effects another replica queued for it wait for those
 * ({@link #after}), so the issue's comments appear in the order they were queued whichever
 * replica sends them.
 *
 * <p>Notes: a small JSON value under a name ({@link #note(String, Object)}), written to the
 * journal after the effects it describes, so the sync that makes them durable makes it durable
 * too (what the issue mirror has queued for an issue: no file and no fsync of its own). The
 * latest value per key is kept in memory and by every compaction.
 */
public final class Outbox {
    private static final Logger LOG = LoggerFactory.getLogger(Outbox.class);
    static final Duration KEEP_DONE = Duration.ofDays(30);
    static final Duration FIRST_BACKOFF = Duration.ofSeconds(10);
    static final Duration MAX_BACKOFF = Duration.ofMinutes(10);
    static final int MAX_ATTEMPTS = 40;
    /** The journal is compacted when it holds more than this many records beyond twice what it must keep. */
    static final int COMPACT_SLACK = 20_000;
    /** In {@link #keys}: queued, not done yet. */
    private static final Instant QUEUED = Instant.MAX;

    /** An unfinished claim of another replica this old is taken over (that replica is stuck); at once if it is gone. */
    static final Duration TAKE_OVER = Duration.ofMinutes(10);
    /** The first wait before looking again whether what an issue's effect waits for on another replica is done. */
    static final Duration FIRST_RECHECK = Duration.ofMillis(50);
    /** The longest such wait (the worker's tick also looks, every 5 s). */
    static final Duration MAX_RECHECK = Duration.ofSeconds(2);
    /**
     * How long after a send its claim is marked done while other replicas run: long enough for
     * one statement to mark what the senders finished meanwhile (at 200 deliveries/s, a few
     * each), short beside a waiting replica's first look again ({@link #FIRST_RECHECK}).
     */
    static final Duration MARK_DELAY = Duration.ofMillis(20);

    private final Replicas replicas;
    private final UnitOfWork unit;
    /** The effects queued inside the unit this thread has open, handed over once it committed. */
    private final ThreadLocal<InUnit> inUnit = new ThreadLocal<>();
    /**
     * Key hashes of effects this replica claimed when they were queued (in a unit, {@link InUnit})
     * or took over, not sent yet, with the {@link Replicas#claimTerm term} they were claimed in
     * ({@link #NO_TERM}: none): one claimed in the term still running is sent without asking the
     * database again.
     */
    private final Map<String, Long> claimedHere = new ConcurrentHashMap<>();
    /** A claim taken while this replica's heartbeats had lapsed: checked in the database before it is sent. */
    private static final long NO_TERM = Long.MIN_VALUE;
    /** The lapse of this replica's heartbeats has been logged (until they reach the database again). */
    private final AtomicBoolean lapseLogged = new AtomicBoolean();
    /** Key hashes of effects sent or given up on whose claims are still to be marked done. */
    private final Set<String> claimsDone = ConcurrentHashMap.newKeySet();
    private final Path failed;
    private final GitHubGateway github;
    private final Clock clock;
    private final ServerMetrics metrics;
    private final ObjectMapper json = JsonSupport.mapper();
    private final OutboxJournal journal;
    /** Keys (hashed) queued ({@link #QUEUED}) or done (when): an effect with one of them is not queued again. */
    private final Map<String, Instant> keys = new ConcurrentHashMap<>();
    /** The queued effects, per issue, in order. */
    private final Map<String, IssueQueue> issues = new ConcurrentHashMap<>();
    /** Issues with effects queued since their last flush. */
    private final Set<String> dirty = ConcurrentHashMap.newKeySet();
    /** The latest note per name, as JSON ({@link #note(String, Object)}). */
    private final Map<String, byte[]> notes = new ConcurrentHashMap<>();
    /** Installations held back by a rate limit, until when. */
    private final Map<Long, Instant> heldInstallations = new ConcurrentHashMap<>();
    private final AtomicLong seq = new AtomicLong();
    private final Object compaction = new Object();
    /**
     * Held for reading by every change that writes a journal record and updates the memory above
     * to match, for the two together; a compaction takes it for writing only to mark the journal's
     * end, so its snapshot of the memory covers every record before the mark. Taken before an
     * issue queue's monitor, never while holding one: a reader waiting for it behind a compaction
     * while holding the monitor would deadlock with a reader holding it and waiting for the monitor.
     */
    final ReentrantReadWriteLock changing = new ReentrantReadWriteLock(); // package-private for a test
    /**
     * Per thread: the journal number of the last queue record it wrote or found pending for a key it
     * queued, which its {@link #sync()} must cover ({@link #ANY}: all written so far). A lane syncs
     * only its own effects, so another lane's newer records do not cost it an fsync.
     */
    private final ThreadLocal<long[]> queuedHere = ThreadLocal.withInitial(() -> new long[1]);
    private static final long ANY = Long.MAX_VALUE;

    /**
     * What is kept for one queued effect. {@code delivery}: the id of the delivery whose handling
     * queued it (null if none), for log lines. {@code after}: key hashes of effects of the same issue
     * that other replicas queued before it, which it waits for ({@link #after}); null when none.
     * {@code takenOver}: queued here from the claim of a replica that is gone ({@link #adoptLeftovers}).
     */
    record Entry(Effect effect, Instant queuedAt, int attempts, Instant notBefore, boolean uncertain,
                 String lastError, String delivery, List<String> after, boolean takenOver) {
        Entry retried(int attempts, Instant notBefore, boolean uncertain, String lastError) {
            return new Entry(effect, queuedAt, attempts, notBefore, uncertain, lastError, delivery, after, takenOver);
        }

        Entry withoutWait() {
            return new Entry(effect, queuedAt, attempts, notBefore, uncertain, lastError, delivery, null, takenOver);
        }
    }

    /**
     * One queued effect: its place in line, key hash, what is to be done, and the journal number of
     * its queue record (0 when it was read from disk), which must be durable before it is sent.
     */
    private record Slot(long seq, String hash, Entry entry, long mark) {
    }

    /**
     * The effects of one issue in order. Its monitor guards {@code slots}; {@code sending} lets one
     * thread at a time send them (never held while waiting for the monitor); {@code requests}
     * tells the sender that more was asked for meanwhile.
     */
    private static final class IssueQueue {
        final String key;
        final TreeMap<Long, Slot> slots = new TreeMap<>();
        final ReentrantLock sending = new ReentrantLock();
        final AtomicInteger requests = new AtomicInteger();
        boolean retired;
        /**
         * Set by the sender while the first effect waits for another replica (its claim of the same
         * effect, or effects it queued before): the wait before looking again, doubling from
         * {@link #FIRST_RECHECK} up to {@link #MAX_RECHECK}; null while nothing waits so.
         */
        volatile Duration recheck;
        /** A look again at {@link #recheck} is scheduled: one at a time, however many flushes found it waiting. */
        final AtomicBoolean recheckScheduled = new AtomicBoolean();

        IssueQueue(String key) {
            this.key = key;
        }
    }

    /** The result of one flush. */
    public record Flush(int done, int failed, int waiting) {
        Flush plus(Flush o) {
            return new Flush(done + o.done, failed + o.failed, waiting + o.waiting);
        }
    }

    /** Told of each comment GitHub created, with its id (the dashboard links to it); never fails a send. */
    private volatile java.util.function.ObjLongConsumer<Effect.Comment> posted = (c, id) -> { };

    /** Sets who is told of each comment posted. */
    public void onCommentPosted(java.util.function.ObjLongConsumer<Effect.Comment> listener) {
        this.posted = listener;
    }

    public Outbox(Path dir, GitHubGateway github, Clock clock, ServerMetrics metrics) {
        this(dir, github, clock, metrics, Replicas.alone("outbox"));
    }

    /** {@code replicas}: an effect is sent only by the replica that claims its key first. */
    public Outbox(Path dir, GitHubGateway github, Clock clock, ServerMetrics metrics, Replicas replicas) {
        this(dir, github, clock, metrics, replicas, UnitOfWork.NONE);
    }

    /**
     * {@code unit}: the store's unit; effects queued inside one are claimed with it and queued
     * here once it committed ({@link #enqueue(Effect)}).
     */
    public Outbox(Path dir, GitHubGateway github, Clock clock, ServerMetrics metrics, Replicas replicas,
                  UnitOfWork unit) {
        this.unit = unit;
        this.replicas = replicas;
        this.metrics = metrics;
        this.failed = dir.resolve("failed");
        this.github = github;
        this.clock = clock;
        try {
            Files.createDirectories(failed);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot open the outbox in " + dir + ": " + e.getMessage(), e);
        }
        this.journal = new OutboxJournal(dir.resolve("journal"));
        OutboxJournal.Contents state = journal.read();
        try {
            seq.set(state.lastSeq());
            state.done().forEach(keys::put);
            for (Map.Entry<String, JsonNode> n : state.notes().entrySet()) {
                notes.put(n.getKey(), json.writeValueAsBytes(n.getValue()));
            }
            for (OutboxJournal.Pending p : state.pending()) {
                Entry entry = queued(json, p);
                if (entry.effect() instanceof Effect.Comment && !entry.uncertain()) {
                    // it may have been on its way to GitHub when the last process ended: look for its tag
                    // before posting it (one listing of the issue's comments, only for what was pending)
                    entry = entry.retried(entry.attempts(), entry.notBefore(), true, entry.lastError());
                }
                keys.put(p.hash(), QUEUED);
                queue(issueKey(entry.effect())).slots.put(p.seq(), new Slot(p.seq(), p.hash(), entry, 0));
                dirty.add(issueKey(entry.effect()));
            }
        } catch (IOException | RuntimeException e) {
            throw new IllegalStateException("cannot read the outbox journal " + journal.file() + ": " + e.getMessage(),
                    e);
        }
        // not compacted here: the worker's first tick prunes (compacts) it, off the start's path
    }

    /** The effect as JSON, as a claim among replicas keeps it ({@link Replicas#claimEffect}). */
    private static String effectJson(Effect e) {
        try {
            return JsonSupport.shared().writeValueAsString(e);
        } catch (IOException x) {
            throw new UncheckedIOException(x);
        }
    }

    /**
     * The effects queued inside one unit ({@link UnitOfWork}), in order: claimed for this replica,
     * with their JSON, just before the unit commits, so a crash after the commit leaves them in
     * the database for this replica's next start or another replica to send; queued here once it
     * committed; dropped if it rolled back.
     */
    private final class InUnit implements UnitOfWork.Participant {
        final Map<String, Effect> effects = new LinkedHashMap<>();
        /** Per issue ({@link #issueKey}): what its first effect queued in the unit waits for ({@link #after}). */
        final Map<String, List<String>> after = new LinkedHashMap<>();
        /** Those this replica claimed (another replica may have claimed one first). */
        Set<String> claimed = Set.of();
        /** The term they were claimed in, read before the commit: a lapse after it changes the term. */
        long term = NO_TERM;

        /**
         * Each claim keeps what its effect waits for: here only the issue's first effect waits (the
         * rest wait behind it in its queue), but a replica taking the claims over takes them into a
         * queue of its own, so every effect of the issue names it.
         */
        @Override
        public void beforeCommit() {
            Map<String, Replicas.ClaimedEffect> queued = new LinkedHashMap<>();
            effects.forEach((h, e) -> queued.put(h, new Replicas.ClaimedEffect(effectJson(e), after.get(issueKey(e)))));
            term = replicas.claimTerm().orElse(NO_TERM);
            claimed = replicas.claimEffects(queued, clock.instant());
        }

        @Override
        public void committed() {
            inUnit.remove();
            try {
                effects.forEach((h, e) -> {
                    String issue = issueKey(e);
                    if (enqueue(e, false, after.get(issue), false)) {
                        after.remove(issue); // the issue's first effect queued here waits; the rest wait behind it
                    }
                    if (claimed.contains(h)) {
                        claimedHere.put(h, term);
                    }
                });
            } catch (RuntimeException e) {
                // claimed but not in the journal (a full disk): the next flush takes them up from their claims
                ownClaimsChecked = false;
                throw e;
            }
        }

        @Override
        public void rolledBack() {
            inUnit.remove();
        }
    }

    static String hash(String key) {
        try {
            byte[] d = MessageDigest.getInstance("SHA-256").digest(key.getBytes(StandardCharsets.UTF_8));
            return HexFormat.of().formatHex(d, 0, 16);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    /** The hidden tag a comment carries so a repeated attempt can tell whether the first one landed. */
    static String tag(Effect e) {
        return "<!-- agentx-effect:" + hash(e.key()) + " -->";
    }

    private static String issueKey(Effect e) {
        return issueKey(e.installation(), e.repo(), e.issue());
    }

    private static String issueKey(long installation, RepoRef repo, int issue) {
        return installation + "/" + repo + "#" + issue;
    }

    /** This replica's name, as claims and issue notes record it. */
    public String replica() {
        return replicas.replica();
    }

    /**
     * Inside the calling thread's unit: the effects of the issue queued in this unit so far are to
     * go out after those of {@code hashes}, which another replica queued (and claimed) before: the
     * first of them waits until those are {@link Replicas#unfinished finished} (sent or given up on
     * by whoever holds them), holding back the rest, as effects of one issue wait for each other
     * on one replica. For the next entry of a thread applied on another replica than the entry
     * before. Without an open unit, or without effects of the issue queued in it, nothing waits.
     */
    public void after(long installation, RepoRef repo, int issue, Collection<String> hashes) {
        if (!unit.open() || hashes.isEmpty()) {
            return;
        }
        inUnit().after.put(issueKey(installation, repo, issue), List.copyOf(hashes));
    }

    /** The key hashes of the effects of the issue queued in the calling thread's open unit so far, in order. */
    public List<String> queuedInUnit(long installation, RepoRef repo, int issue) {
        InUnit pending = unit.open() ? inUnit.get() : null;
        if (pending == null) {
            return List.of();
        }
        String key = issueKey(installation, repo, issue);
        List<String> out = new ArrayList<>();
        pending.effects.forEach((h, e) -> {
            if (issueKey(e).equals(key)) {
                out.add(h);
            }
        });
        return out;
    }

    private IssueQueue queue(String key) {
        return issues.computeIfAbsent(key, IssueQueue::new);
    }

    /** The entry as JSON, as the journal keeps it. */
    private byte[] entryJson(Entry entry) {
        try {
            return json.writeValueAsBytes(entry);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * Makes every effect the calling thread queued durable, and every effect it tried to queue
     * that was pending already (one fsync shared with other threads, none if they are durable).
     * Whoever records that effects were queued (the inbox saving a delivery's progress, the issue
     * mirror its state) calls this first, on the thread that queued them, so a machine crash cannot
     * keep the record and lose the effects.
     */
    public void sync() {
        long[] here = queuedHere.get();
        long upTo = here[0];
        if (upTo == ANY) {
            journal.sync();
            here[0] = 0; // everything written before is on disk, this thread's records with it
        } else if (upTo > 0) {
            journal.syncTo(upTo);
        }
    }

    /**
     * Queues the effect: written to the journal, so it survives the process ending, and durable
     * against a machine crash at the next {@link #sync()} (an effect is never sent before that).
     * False when its key was queued or done before. Inside the store's unit ({@link
     * UnitOfWork#open}) it is queued only once the unit committed, claimed with it.
     */
    public boolean enqueue(Effect effect) {
        if (unit.open()) {
            return enqueueInUnit(effect);
        }
        return enqueue(effect, false, null, false);
    }

    /** Inside the calling thread's unit: kept until it ends ({@link InUnit}). */
    private boolean enqueueInUnit(Effect effect) {
        String h = hash(effect.key());
        if (keys.containsKey(h)) {
            return false; // queued or done here before
        }
        return inUnit().effects.putIfAbsent(h, effect) == null;
    }

    /** The calling thread's effects of its open unit, joined to the unit at first use. */
    private InUnit inUnit() {
        InUnit pending = inUnit.get();
        if (pending == null) {
            pending = new InUnit();
            inUnit.set(pending);
            unit.join(pending);
        }
        return pending;
    }

    /**
     * As {@link #enqueue(Effect)}; {@code uncertain}: a comment is looked for on the issue before it
     * is posted; {@code after}: what it waits for ({@link #after}), or null; {@code takenOver}: from
     * the claim of a replica that is gone.
     */
    private boolean enqueue(Effect effect, boolean uncertain, List<String> after, boolean takenOver) {
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
                            coverHere(pendingMark(q, h));
                        }
                        return false;
                    }
                    // seq and insertion under the issue's monitor: the issue's effects stay in the order queued
                    long n = seq.incrementAndGet();
                    Entry entry = new Entry(effect, clock.instant(), 0, null, uncertain, null, MDC.get("delivery"),
                            after, takenOver);
                    long mark;
                    try {
                        mark = journal.queued(n, h, entryJson(entry));
                        q.slots.put(n, new Slot(n, h, entry, mark));
                    } catch (RuntimeException e) {
                        keys.remove(h);
                        throw e;
                    }
                    coverHere(mark);
                }
            } finally {
                changing.readLock().unlock();
            }
            dirty.add(key);
            return true;
        }
    }

    /**
     * Records {@code value} (written as JSON) under {@code name}, replacing the note before it,
     * after the effects this thread queued: the thread's next {@link #sync()} makes it durable
     * together with them (and a crash that loses it loses no effect it speaks of). Seen by
     * {@link #note(String, Class)} at once, by every thread. Kept in memory as its JSON bytes: a
     * note per issue stays for good, and a byte array costs the collector less than a tree.
     */
    public void note(String name, Object value) {
        byte[] bytes;
        try {
            bytes = json.writeValueAsBytes(value);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        long[] mark = new long[1];
        changing.readLock().lock();
        try {
            // under the name's lock: notes of one name reach the journal in the order they are kept
            notes.compute(name, (k, before) -> {
                mark[0] = journal.note(name, bytes);
                return bytes;
            });
        } finally {
            changing.readLock().unlock();
        }
        coverHere(mark[0]);
    }

    /**
     * Forgets the note {@code name}, if there is one. The record is not waited for: should a crash
     * lose it, the note is back at the next start, so forget only what may come back.
     */
    public void forget(String name) {
        changing.readLock().lock();
        try {
            notes.computeIfPresent(name, (k, v) -> {
                journal.forget(name);
                return null;
            });
        } finally {
            changing.readLock().unlock();
        }
    }

    /**
     * The notes whose names start with {@code prefix} in the outbox journal of {@code dir}, by name,
     * read without changing the file (a server may be appending to it; a half-written last record
     * is left out): what {@code agentx store copy} hands over. Empty without a journal.
     */
    public static Map<String, JsonNode> notesIn(Path dir, String prefix) {
        Map<String, JsonNode> out = new TreeMap<>();
        OutboxJournal.readOnly(dir.resolve("journal")).notes().forEach((name, value) -> {
            if (name.startsWith(prefix)) {
                out.put(name, value);
            }
        });
        return out;
    }

    /**
     * The effects still queued (not done, not given up on) in the outbox journal of {@code dir},
     * in their order, read without changing the file (a server may be appending to it; a
     * half-written last record is left out): what {@code agentx sync} must not rebuild over.
     * Empty without a journal.
     */
    public static List<Effect> pendingIn(Path dir) {
        ObjectMapper json = JsonSupport.mapper();
        List<Effect> out = new ArrayList<>();
        for (OutboxJournal.Pending p : OutboxJournal.readOnly(dir.resolve("journal")).pending()) {
            try {
                out.add(queued(json, p).effect());
            } catch (IOException e) {
                throw new UncheckedIOException("cannot read the queued effect " + p.seq() + " of the outbox journal in "
                        + dir + ": " + e.getMessage(), e);
            }
        }
        return out;
    }

    /** A queued effect's entry as the journal holds it; one without an effect is refused. */
    private static Entry queued(ObjectMapper json, OutboxJournal.Pending p) throws IOException {
        Entry entry = json.treeToValue(p.entry(), Entry.class);
        if (entry.effect() == null) {
            throw new IllegalStateException("the queued effect " + p.seq() + " has no effect");
        }
        return entry;
    }

    /** The names of the notes that start with {@code prefix}. */
    public List<String> noteNames(String prefix) {
        return notes.keySet().stream().filter(n -> n.startsWith(prefix)).sorted().toList();
    }

    /** The latest note recorded under {@code name}, read as {@code type}, if any. */
    public <T> Optional<T> note(String name, Class<T> type) {
        byte[] bytes = notes.get(name);
        if (bytes == null) {
            return Optional.empty();
        }
        try {
            return Optional.of(json.readValue(bytes, type));
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read the note " + name + " of the outbox journal as "
                    + type.getSimpleName() + ": " + e.getMessage(), e);
        }
    }

    private void coverHere(long mark) {
        long[] here = queuedHere.get();
        here[0] = Math.max(here[0], mark);
    }

    /** The journal number of the pending effect with key hash {@code h}; {@link #ANY} if not in {@code q} (being sent). */
    private static long pendingMark(IssueQueue q, String h) {
        for (Slot s : q.slots.values()) {
            if (s.hash().equals(h)) {
                return s.mark();
            }
        }
        return ANY;
    }

    /** The journal's fdatasyncs since the outbox was opened (for tests). */
    public long journalSyncs() {
        return journal.syncs();
    }

    /** Records written to the journal since the outbox was opened that are known to be on disk (for tests). */
    long journalDurable() {
        return journal.durable();
    }

    /** Effects queued, not yet done or failed. */
    public int size() {
        int n = 0;
        for (IssueQueue q : issues.values()) {
            synchronized (q) {
                n += q.slots.size();
            }
        }
        return n;
    }

    /**
     * Hands each issue with effects queued since its last flush to {@code senders}, which send the
     * issues side by side (each issue's effects in order). What a rejected task would have sent
     * stays queued for the next flush. An issue whose first effect waits for another replica is
     * handed over again on {@code later} (doubling waits, from {@link #FIRST_RECHECK}); null: at the
     * next flush.
     */
    public void sendQueued(Executor senders, ScheduledExecutorService later) {
        for (String key : List.copyOf(dirty)) {
            if (dirty.remove(key)) {
                IssueQueue q = issues.get(key);
                if (q == null) {
                    continue;
                }
                try {
                    senders.execute(() -> {
                        try {
                            flush(q);
                            markClaimsDoneSoon(later);
                        } catch (RuntimeException e) {
                            LOG.error("outbox: sending the effects of {} failed; they stay queued: {}", key,
                                    e.toString(), e);
                        }
                        Duration recheck = q.recheck;
                        if (recheck != null && later != null && q.recheckScheduled.compareAndSet(false, true)) {
                            try {
                                later.schedule(() -> {
                                    q.recheckScheduled.set(false);
                                    dirty.add(key);
                                    sendQueued(senders, later);
                                }, recheck.toMillis(), TimeUnit.MILLISECONDS);
                            } catch (RejectedExecutionException e) {
                                q.recheckScheduled.set(false); // stopping: the final flush or the next start sends them
                            }
                        }
                    });
                } catch (RejectedExecutionException e) {
                    dirty.add(key); // stopping: the final flush or the next start sends them
                }
            }
        }
    }

    /**
     * While other replicas run, marks the claims of what was sent as done {@link #MARK_DELAY}
     * after the first send not marked yet (one statement for what the senders finished
     * meanwhile), so a replica whose effects of the same issue wait for them goes on within
     * tens of milliseconds; alone, or without {@code later}, the worker's tick does it
     * ({@link #flush()}).
     */
    private void markClaimsDoneSoon(ScheduledExecutorService later) {
        if (later == null || claimsDone.isEmpty() || !replicas.othersRunning() || !markScheduled.compareAndSet(false,
                true)) {
            return;
        }
        try {
            later.schedule(() -> {
                markScheduled.set(false);
                markClaimsDone();
            }, MARK_DELAY.toMillis(), TimeUnit.MILLISECONDS);
        } catch (RejectedExecutionException e) {
            markScheduled.set(false); // stopping: the final flush marks them
        }
    }

    /** Sends every effect that is due, issue by issue, each issue's in order. Never throws for a GitHub failure. */
    public Flush flush() {
        adoptLeftovers();
        refreshHolds();
        Flush total = new Flush(0, 0, 0);
        for (IssueQueue q : List.copyOf(issues.values())) {
            dirty.remove(q.key);
            total = total.plus(flush(q));
        }
        markClaimsDone();
        maybeCompact();
        return total;
    }

    /**
     * Sends the issue's due effects unless another thread is sending them; that thread then goes
     * round once more, so nothing asked for is left behind.
     */
    private Flush flush(IssueQueue q) {
        Flush total = new Flush(0, 0, 0);
        q.requests.incrementAndGet();
        while (q.requests.get() > 0 && q.sending.tryLock()) {
            try {
                q.requests.set(0);
                total = total.plus(send(q));
            } finally {
                q.sending.unlock();
                journal.sync(); // the done and retry records of this round: one fsync for all of them
            }
        }
        synchronized (q) {
            if (q.slots.isEmpty() && !q.sending.isLocked() && q.requests.get() == 0 && !q.retired) {
                q.retired = true;
                issues.remove(q.key, q);
            }
        }
        return total;
    }

    /**
     * What to send instead of {@code head}, which waits for effects another replica queued: when
     * this replica took one of those over from a replica that is gone (it sits behind {@code head}
     * in this queue), the first effect taken over that lies before it, which was claimed before it
     * on the replica that is gone; otherwise {@code head}. The caller holds {@code q}'s monitor.
     */
    private static Slot takenOverFirst(IssueQueue q, Slot head) {
        Slot firstTaken = null;
        for (Slot s : q.slots.tailMap(head.seq(), false).values()) {
            if (firstTaken == null && s.entry().takenOver()) {
                firstTaken = s;
            }
            if (head.entry().after().contains(s.hash())) {
                return firstTaken != null ? firstTaken : s;
            }
        }
        return head;
    }

    /** Sends the issue's effects in order until one is not due or fails for now; the caller holds {@code q.sending}. */
    private Flush send(IssueQueue q) {
        int ok = 0;
        int bad = 0;
        while (true) {
            Slot slot;
            synchronized (q) {
                Map.Entry<Long, Slot> first = q.slots.firstEntry();
                if (first == null) {
                    return new Flush(ok, bad, 0);
                }
                slot = first.getValue();
                if (slot.entry().after() != null) {
                    slot = takenOverFirst(q, slot);
                }
            }
            Entry entry = slot.entry();
            Effect e = entry.effect();
            Instant now = clock.instant();
            Instant held = heldInstallations.get(e.installation());
            if ((held != null && now.isBefore(held)) || (entry.notBefore() != null && now.isBefore(entry.notBefore()))) {
                q.recheck = null; // a retry's or rate limit's wait: the tick takes it up
                return new Flush(ok, bad, waiting(q));
            }
            journal.syncTo(slot.mark()); // never send what a machine crash could make us forget we queued
            if (entry.after() != null) {
                Set<String> unfinished;
                try {
                    unfinished = replicas.unfinished(entry.after());
                } catch (RuntimeException ex) {
                    LOG.warn("outbox: cannot read whether the effects {} waits for are done; its issue waits: {}",
                            e.key(), ex.toString());
                    return waitForReplica(q, ok, bad);
                }
                if (!unfinished.isEmpty()) {
                    if (entry.queuedAt() == null || now.isBefore(entry.queuedAt().plus(TAKE_OVER))) {
                        LOG.debug("outbox: {} waits for {} effect(s) of its issue another replica queued before it",
                                e.key(), unfinished.size());
                        return waitForReplica(q, ok, bad);
                    }
                    LOG.warn("outbox: {} waited {} min for {} effect(s) of its issue another replica queued before "
                            + "it; sending it now", e.key(), TAKE_OVER.toMinutes(), unfinished.size());
                }
                entry = entry.withoutWait(); // in memory: after a restart it looks once more, finding them done
                slot = new Slot(slot.seq(), slot.hash(), entry, slot.mark());
                synchronized (q) {
                    q.slots.replace(slot.seq(), slot);
                }
            }
            java.util.OptionalLong term = replicas.claimTerm();
            if (term.isEmpty()) {
                if (lapseLogged.compareAndSet(false, true)) {
                    LOG.warn("outbox: this replica's heartbeats have not reached the database lately; effects wait "
                            + "until one does (other replicas may be taking them over meanwhile)");
                }
                return waitForReplica(q, ok, bad);
            }
            lapseLogged.set(false);
            putContext(entry);
            String type = e.getClass().getSimpleName().toLowerCase(Locale.ROOT);
            try {
                Replicas.EffectClaim claim;
                try {
                    Long claimedIn = claimedHere.remove(slot.hash());
                    claim = claimedIn != null && claimedIn == term.getAsLong() ? new Replicas.EffectClaim(
                            Replicas.Claim.MINE, false, replicas.replica()) : replicas.claimEffect(slot.hash(),
                            effectJson(e), now, now.minus(TAKE_OVER));
                } catch (RuntimeException ex) {
                    LOG.warn("outbox: cannot claim {} in the database; its issue waits for the next tick: {}", e.key(),
                            ex.toString());
                    return new Flush(ok, bad, waiting(q));
                }
                if (claim.claim() == Replicas.Claim.PENDING_ELSEWHERE) {
                    LOG.debug("outbox: {} is being sent by replica {}; its issue waits", e.key(), claim.holder());
                    return waitForReplica(q, ok, bad);
                }
                q.recheck = null;
                if (claim.claim() == Replicas.Claim.DONE) {
                    LOG.info("outbox: {} was sent by replica {}; not sending it here", e.key(), claim.holder());
                    markDone(q, slot);
                    ok++;
                    continue;
                }
                if (claim.takenOver()) {
                    LOG.warn("outbox: {} was claimed by replica {}, which is gone or has not sent it in {} min; "
                            + "sending it here (a comment after looking for its tag)", e.key(), claim.holder(),
                            TAKE_OVER.toMinutes());
                    entry = entry.retried(entry.attempts(), entry.notBefore(), true, entry.lastError());
                }
                if (!replicas.claimTerm().equals(term)) {
                    // the heartbeats lapsed while claiming (a slow database): checked again in the next term
                    synchronized (q) {
                        q.slots.replace(slot.seq(), new Slot(slot.seq(), slot.hash(), entry, slot.mark()));
                    }
                    return waitForReplica(q, ok, bad);
                }
                perform(entry, term);
                Instant at = markDone(q, slot);
                claimsDone.add(slot.hash());
                metrics.effect(type, "done");
                if (entry.queuedAt() != null) {
                    metrics.effectConfirmed(type, Duration.between(entry.queuedAt(), at));
                }
                ok++;
            } catch (GitHubApiException ex) {
                int attempts = entry.attempts() + 1;
                if (!ex.retryable() || attempts >= MAX_ATTEMPTS) {
                    LOG.error("outbox: giving up on {} after {} attempt(s): {}", e.key(), attempts, ex.getMessage());
                    moveToFailed(q, slot, entry.retried(attempts, null, entry.uncertain(), ex.getMessage()));
                    claimsDone.add(slot.hash()); // given up on: another replica's copy would fail too
                    metrics.effect(type, "failed");
                    bad++;
                    continue;
                }
                metrics.effect(type, "retry");
                Duration wait = ex.retryAfter() != null ? ex.retryAfter() : backoff(attempts);
                LOG.warn("outbox: {} failed (attempt {}), retrying in {} s: {}", e.key(), attempts, wait.toSeconds(),
                        ex.getMessage());
                Entry retried = entry.retried(attempts, now.plus(wait), entry.uncertain() || ex.uncertain(),
                        ex.getMessage());
                changing.readLock().lock();
                try {
                    journal.retried(slot.seq(), entryJson(retried));
                    synchronized (q) {
                        q.slots.put(slot.seq(), new Slot(slot.seq(), slot.hash(), retried, 0));
                    }
                } finally {
                    changing.readLock().unlock();
                }
                if (ex.rateLimited()) {
                    heldInstallations.merge(e.installation(), now.plus(wait), (a, b) -> a.isAfter(b) ? a : b);
                    try {
                        replicas.holdInstallation(e.installation(), now.plus(wait)); // other replicas share its budget
                    } catch (RuntimeException hx) {
                        LOG.warn("outbox: cannot share the rate limit of installation {} with other replicas: {}",
                                e.installation(), hx.toString());
                    }
                }
                return new Flush(ok, bad, waiting(q));
            } catch (RuntimeException ex) {
                LOG.error("outbox: dropping {}: {}", e.key(), ex.toString(), ex);
                moveToFailed(q, slot, entry.retried(entry.attempts() + 1, null, entry.uncertain(), ex.toString()));
                claimsDone.add(slot.hash()); // given up on: another replica's copy would fail too
                metrics.effect(type, "failed");
                bad++;
            } finally {
                clearContext();
            }
        }
    }

    /**
     * Takes over what replicas that are gone claimed and did not send (at every tick; none on the
     * file store): each effect is queued here as one that may have reached GitHub (a comment is
     * looked for first), behind what this replica had queued for its issue already.
     */
    private void adoptLeftovers() {
        List<Replicas.ClaimedEffect> left;
        long term = replicas.claimTerm().orElse(NO_TERM); // read before the claims are taken, as a unit's
        try {
            left = new ArrayList<>();
            if (!ownClaimsChecked) {
                // claims this replica took over before a crash that its journal never recorded
                left.addAll(replicas.unsentEffectsClaimedHere());
            }
            left.addAll(replicas.adoptEffects(clock.instant(), ADOPT_BATCH));
        } catch (RuntimeException ex) {
            LOG.warn("outbox: cannot look for effects left by replicas that are gone: {}", ex.toString());
            return;
        }
        ownClaimsChecked = true;
        int queued = 0;
        for (Replicas.ClaimedEffect claim : left) {
            Effect effect;
            try {
                effect = json.readValue(claim.effect(), Effect.class);
            } catch (IOException | RuntimeException ex) {
                LOG.error("outbox: an effect another replica left cannot be read; dropped: {}: {}", ex.toString(),
                        claim.effect());
                continue;
            }
            String h = hash(effect.key());
            if (enqueue(effect, true, claim.after(), true)) {
                queued++;
            }
            Instant known = keys.get(h);
            if (known != null && known != QUEUED) {
                claimsDone.add(h); // done here before: the claim, now this replica's, is done
            } else {
                claimedHere.put(h, term);
            }
        }
        if (queued > 0) {
            sync();
            LOG.info("outbox: took over {} effects left unsent by replicas that are gone", queued);
        }
    }

    /** A mark of the claims done is scheduled ({@link #markClaimsDoneSoon}). */
    private final AtomicBoolean markScheduled = new AtomicBoolean();

    /** At most this many effects of gone replicas are taken over per tick. */
    static final int ADOPT_BATCH = 200;
    /** The first tick has checked this replica's own unfinished claims against the journal. */
    private volatile boolean ownClaimsChecked;

    /**
     * Has the next flush look again for effects this replica claimed and does not have queued: a
     * transaction whose COMMIT reached the database but whose answer did not (the connection broke
     * as the database stopped) claimed its effects for good while this process, told it failed,
     * never queued them. Nobody else takes them over (this replica is alive), so they are queued
     * here as effects that may have landed: a comment is looked for on the issue first.
     */
    public void checkOwnClaimsAgain() {
        ownClaimsChecked = false;
    }

    /** Takes over the rate limits other replicas met (at every tick: between ticks a replica finds its own). */
    private void refreshHolds() {
        try {
            replicas.installationHolds(clock.instant()).forEach((installation, until) ->
                    heldInstallations.merge(installation, until, (a, b) -> a.isAfter(b) ? a : b));
        } catch (RuntimeException ex) {
            LOG.warn("outbox: cannot read the rate limits other replicas met: {}", ex.toString());
        }
    }

    /**
     * Marks the claims of the effects sent or given up on since the last call as done, in one
     * statement (the worker's tick calls it through {@link #flush()}). Should that fail, they are
     * marked at the next call; a replica holding the same effect waits meanwhile.
     */
    private void markClaimsDone() {
        if (claimsDone.isEmpty()) {
            return;
        }
        List<String> batch = new ArrayList<>(claimsDone);
        try {
            replicas.effectsDone(batch);
            batch.forEach(claimsDone::remove);
        } catch (RuntimeException ex) {
            LOG.warn("outbox: cannot mark {} claims done in the database; trying at the next tick: {}", batch.size(),
                    ex.toString());
        }
    }

    /** Records the effect as done and takes it off its issue's queue; when. */
    private Instant markDone(IssueQueue q, Slot slot) {
        Instant at = clock.instant();
        changing.readLock().lock();
        try {
            journal.done(slot.seq(), slot.hash(), at);
            keys.put(slot.hash(), at);
            remove(q, slot);
        } finally {
            changing.readLock().unlock();
        }
        return at;
    }

    /** The issue's first effect waits for another replica: looked at again after {@link IssueQueue#recheck}. */
    private static Flush waitForReplica(IssueQueue q, int ok, int bad) {
        Duration before = q.recheck;
        q.recheck = before == null ? FIRST_RECHECK : before.multipliedBy(2).compareTo(MAX_RECHECK) > 0 ? MAX_RECHECK
                : before.multipliedBy(2);
        return new Flush(ok, bad, waiting(q));
    }

    private static int waiting(IssueQueue q) {
        synchronized (q) {
            return q.slots.size();
        }
    }

    private static void remove(IssueQueue q, Slot slot) {
        synchronized (q) {
            q.slots.remove(slot.seq());
        }
    }

    /**
     * Keeps the entry in {@code failed/<seq>-<hash>.json} for a person to look at, then drops it
     * from the queue; its key is remembered as done (not queued again for {@link #KEEP_DONE}).
     */
    private void moveToFailed(IssueQueue q, Slot slot, Entry entry) {
        try {
            AtomicFiles.write(failed.resolve(String.format("%020d-%s.json", slot.seq(), slot.hash())),
                    json.writeValueAsBytes(entry));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        long mark;
        changing.readLock().lock();
        try {
            Instant at = clock.instant();
            mark = journal.failed(slot.seq(), slot.hash(), at);
            keys.put(slot.hash(), at);
            remove(q, slot);
        } finally {
            changing.readLock().unlock();
        }
        journal.syncTo(mark);
    }

    /** Forgets done keys older than {@link #KEEP_DONE} and compacts the journal. */
    public void prune() {
        try {
            compact();
        } catch (RuntimeException e) {
            LOG.warn("outbox: {}", e.getMessage());
        }
    }

    private void maybeCompact() {
        if (journal.size() > 2L * (keys.size() + notes.size()) + COMPACT_SLACK) {
            prune();
        }
    }

    /**
     * Rewrites the journal from what this outbox keeps in memory (the effects queued, the done keys
     * younger than {@link #KEEP_DONE}, the notes, the last seq), followed by the records written
     * meanwhile: nothing is read back or parsed, so the cost is writing what is kept, not the
     * journal's length. Every change holds {@link #changing} for reading while it writes its record
     * and updates the memory; the mark is taken under the write lock, so the snapshot taken after
     * it covers every record before the mark. It may also cover some after it, which replay on top
     * of it to the same state (each record sets what it changes).
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

    /** The records that rebuild what this outbox keeps in memory. */
    private void snapshot(OutboxJournal.Head out) {
        out.lastSeq(seq.get());
        for (Map.Entry<String, Instant> k : keys.entrySet()) {
            if (k.getValue() != QUEUED) {
                out.doneKey(k.getKey(), k.getValue());
            }
        }
        for (IssueQueue q : issues.values()) {
            List<Slot> slots;
            synchronized (q) {
                slots = List.copyOf(q.slots.values());
            }
            for (Slot slot : slots) {
                out.queued(slot.seq(), slot.hash(), entryJson(slot.entry()));
            }
        }
        for (Map.Entry<String, byte[]> n : notes.entrySet()) {
            out.note(n.getKey(), n.getValue());
        }
    }

    /** Log lines about an effect carry the delivery that queued it, its repository and issue, as the worker's do. */
    private static void putContext(Entry entry) {
        Effect e = entry.effect();
        if (entry.delivery() != null) {
            MDC.put("delivery", entry.delivery());
        }
        MDC.put("repository", e.repo().fullName());
        MDC.put("issue", String.valueOf(e.issue()));
        MDC.put("effect", e.key());
    }

    private static void clearContext() {
        MDC.remove("delivery");
        MDC.remove("repository");
        MDC.remove("issue");
        MDC.remove("effect");
    }

    static Duration backoff(int attempts) {
        Duration d = FIRST_BACKOFF.multipliedBy(1L << Math.min(attempts - 1, 16));
        return d.compareTo(MAX_BACKOFF) > 0 ? MAX_BACKOFF : d;
    }

    /** Where a look for an effect's comment starts: a minute before it was queued (clocks differ). */
    private static Instant since(Entry entry) {
        return entry.queuedAt() == null ? Instant.EPOCH : entry.queuedAt().minus(Duration.ofMinutes(1));
    }

    /**
     * After a comment was created that another replica may have posted too (each looked for the
     * other's before posting, and neither had landed yet): when the issue shows an earlier
     * comment with the same tag, the one just created is a second copy and is deleted. GitHub's
     * comment ids grow with creation, so whichever replica checks, the earliest copy stays; the
     * later one's check always sees it. Returns the id of the comment that stays.
     */
    private long keepFirst(Effect.Comment c, String tag, long created, Entry entry) {
        try {
            List<Long> copies = github.commentsContaining(c.installation(), c.repo(), c.issue(), tag, since(entry));
            long first = copies.isEmpty() ? created : copies.get(0); // oldest first
            if (first < created) {
                github.deleteComment(c.installation(), c.repo(), created);
                LOG.warn("outbox: {} was posted by another replica meanwhile (comment {}); deleted this replica's "
                        + "copy {}", c.key(), first, created);
                return first;
            }
        } catch (GitHubApiException e) {
            LOG.warn("outbox: {} posted as {}; whether another replica posted it too could not be checked: {}",
                    c.key(), created, e.getMessage());
        }
        return created;
    }

    /**
     * Sends the effect. {@code term}: this replica's {@link Replicas#claimTerm term} when it
     * checked its claim; a comment sent while it lapsed is checked afterwards ({@link #keepFirst}).
     */
    private void perform(Entry entry, java.util.OptionalLong term) {
        Effect effect = entry.effect();
        if (effect instanceof Effect.Comment c) {
            String tag = tag(c);
            if (entry.uncertain() && github.commentContains(c.installation(), c.repo(), c.issue(), tag,
                    since(entry))) {
                LOG.info("outbox: {} was posted by an earlier attempt; not posting it again", c.key());
                return;
            }
            long created = github.createComment(c.installation(), c.repo(), c.issue(),
                    tag + "\n" + CommentLimit.fit(c.body(), CommentLimit.MAX - tag.length() - 1));
            // a copy another replica may have posted meanwhile: taken over (uncertain), or sent as
            // this replica's heartbeats lapsed (paused between its last check and the request)
            long id = entry.uncertain() || !replicas.claimTerm().equals(term) ? keepFirst(c, tag, created, entry)
                    : created;
            try {
                posted.accept(c, id);
            } catch (RuntimeException e) {
                LOG.warn("outbox: comment {} posted as {}, but that was not recorded: {}", c.key(), id, e.toString());
            }
        } else if (effect instanceof Effect.Reaction r) {
            if (r.commentId() == null) {
                github.reactToIssue(r.installation(), r.repo(), r.issue(), r.content());
            } else {
                github.reactToComment(r.installation(), r.repo(), r.issue(), r.commentId(), r.content());
            }
        } else if (effect instanceof Effect.AddLabels a) {
            github.addLabels(a.installation(), a.repo(), a.issue(), a.labels());
        } else if (effect instanceof Effect.RemoveLabel r) {
            github.removeLabel(r.installation(), r.repo(), r.issue(), r.label());
        }
    }

}
