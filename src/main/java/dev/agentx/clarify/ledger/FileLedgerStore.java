package dev.agentx.clarify.ledger;

import dev.agentx.clarify.files.AtomicFiles;
import dev.agentx.clarify.files.IoErrors;
import dev.agentx.clarify.files.RuntimeFolder;
import dev.agentx.clarify.lock.LockManager;
import dev.agentx.clarify.lock.WaitDeadline;
import dev.agentx.clarify.protocol.ClarifyException;
import dev.agentx.clarify.protocol.ErrorCode;
import dev.agentx.clarify.protocol.Ledger;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.OptionalInt;
import java.util.function.Function;
import java.util.stream.Stream;

/** Ledgers as {@code <state>/clarifications/issue-N.json}, one file per issue, written atomically under lock. */
public final class FileLedgerStore implements LedgerStore, OpenRecords {
    /** The folder of the state folder where each agent's open records are marked (docs/protocol.md). */
    public static final String OPEN_RECORDS = "open-records";
    /** The folder of the state folder where the ledgers a monitor pass reads are marked (docs/protocol.md). */
    public static final String MONITOR_ACTIVE = "monitor-active";
    private static final String PREFIX = "issue-";
    private static final String SUFFIX = ".json";

    private final Path dir;
    /** The state folder's runtime folder: temp files of ledger writes, changes waiting for a lock. */
    private final Path runtime;
    private final LockManager locks;
    private final LedgerCodec codec = new LedgerCodec();
    private final ChangeQueue queue;
    private final OpenRecordMarks marks;
    private final ActiveMarks activeMarks;
    /**
     * The ledgers this process last wrote or read, with the file's signature at the time: a read
     * that finds the file unchanged (every write is a rename, which changes the signature: see
     * ActiveLedgerIndex) returns the ledger without reading and decoding it again. What makes it
     * pay: every status mirror reads the ledger its process has just written.
     */
    private final Map<Integer, Known> known = new java.util.LinkedHashMap<>(16, 0.75f, true) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<Integer, Known> eldest) {
            return size() > KNOWN_LEDGERS;
        }
    };
    private static final int KNOWN_LEDGERS = 64;

    /**
     * A ledger as last read or written, with its file's signature then and the bytes it was read from
     * or written as, so that the next read of a changed file decodes only what changed, and the next
     * write encodes only what changed (see LedgerCodec).
     */
    private record Known(ActiveLedgerIndex.Signature signature, LedgerCodec.Encoded encoded) {
    }

    /** The issue's ledger as last read or written here, or null. */
    private LedgerCodec.Encoded base(int issue) {
        synchronized (known) {
            Known k = known.get(issue);
            return k == null ? null : k.encoded();
        }
    }

    /** @param stateDir the {@code .agentx/state} directory */
    public FileLedgerStore(Path stateDir, LockManager locks) {
        this.dir = stateDir.resolve("clarifications");
        this.runtime = RuntimeFolder.in(stateDir);
        this.locks = locks;
        this.queue = new ChangeQueue(runtime, locks.identity(), locks.clock());
        this.marks = new OpenRecordMarks(stateDir);
        this.activeMarks = new ActiveMarks(stateDir);
    }

    /** The marks of the ledgers a monitor pass reads, which the writes keep (ActiveMarks). */
    ActiveMarks activeMarks() {
        return activeMarks;
    }

    /** The clock the locks go by: the monitor index's full checks go by it too. */
    java.time.Clock clock() {
        return locks.clock();
    }

    public Path directory() {
        return dir;
    }

    public Path fileOf(int issue) {
        return dir.resolve("issue-" + issue + ".json");
    }

    @Override
    public boolean exists(int issue) {
        return Files.exists(fileOf(issue));
    }

    @Override
    public Optional<Ledger> read(int issue) {
        ActiveLedgerIndex.Signature before = signatureOf(issue);
        if (before == null) {
            return read(issue, new TreeSet<>()).map(LedgerCodec.Encoded::ledger);
        }
        synchronized (known) {
            Known k = known.get(issue);
            if (k != null && k.signature().equals(before)) {
                return Optional.of(k.encoded().ledger());
            }
        }
        // the signature taken before the read: a write landing in between makes the entry stale, never wrong
        Set<String> unknown = new TreeSet<>();
        Optional<LedgerCodec.Encoded> read = read(issue, unknown);
        if (unknown.isEmpty()) {
            read.ifPresent(e -> remember(issue, before, e));
        }
        return read.map(LedgerCodec.Encoded::ledger);
    }

    /** The ledger file's signature, or null if it has none (no file, or the file system does not tell). */
    private ActiveLedgerIndex.Signature signatureOf(int issue) {
        try {
            java.nio.file.attribute.BasicFileAttributes a = Files.readAttributes(fileOf(issue),
                    java.nio.file.attribute.BasicFileAttributes.class);
            return a.fileKey() == null ? null : ActiveLedgerIndex.Signature.of(a);
        } catch (IOException e) {
            return null;
        }
    }

    /** Only a ledger with no field this version does not know: its records serve as they are. */
    private void remember(int issue, ActiveLedgerIndex.Signature signature, LedgerCodec.Encoded encoded) {
        synchronized (known) {
            known.put(issue, new Known(signature, encoded));
        }
    }

    /**
     * The issue's ledger, read leniently: fields this version does not know are skipped and named in
     * {@code unknown}.
     */
    private Optional<LedgerCodec.Encoded> read(int issue, Set<String> unknown) {
        Path file = fileOf(issue);
        byte[] bytes;
        try {
            bytes = Files.readAllBytes(file);
        } catch (NoSuchFileException e) {
            return Optional.empty();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + file + ": " + IoErrors.why(e), e);
        }
        return Optional.of(decode(file, issue, bytes, unknown, base(issue)));
    }

    /**
     * The issue's ledger for a write, which refuses fields this version does not know (writing the
     * ledger back would lose them).
     */
    private Optional<LedgerCodec.Encoded> readForWrite(int issue) {
        Set<String> unknown = new TreeSet<>();
        Optional<LedgerCodec.Encoded> ledger = read(issue, unknown);
        if (!unknown.isEmpty()) {
            Path file = fileOf(issue);
            throw new ClarifyException(ErrorCode.LEDGER_NEWER, "Ledger " + file + " has " + (unknown.size() == 1
                    ? "a field" : "fields") + " this version of agentx does not know (" + String.join(", ", unknown)
                    + "): a newer version wrote it. It can be read, but changing it here would lose "
                    + (unknown.size() == 1 ? "that field" : "those fields") + ", so nothing was changed. Upgrade agentx "
                    + "to change this issue's clarifications.");
        }
        return ledger;
    }

    /**
     * Decodes a ledger file for reading: fields this version does not know are skipped; a damaged
     * file is refused with a message that says what to do.
     */
    public Ledger decode(Path file, int issue, byte[] bytes) {
        return decode(file, issue, bytes, new TreeSet<>(), null).ledger();
    }

    private LedgerCodec.Encoded decode(Path file, int issue, byte[] bytes, Set<String> unknown,
                                       LedgerCodec.Encoded base) {
        LedgerCodec.Encoded encoded;
        try {
            encoded = codec.decode(bytes, unknown, base);
        } catch (IllegalArgumentException e) {
            throw damaged(file, issue, e.getMessage());
        }
        if (encoded.ledger().issueNumber() != issue) {
            throw damaged(file, issue, "issueNumber is " + encoded.ledger().issueNumber()
                    + " but the file is for issue " + issue);
        }
        return encoded;
    }

    private static ClarifyException damaged(Path file, int issue, String why) {
        return new ClarifyException(ErrorCode.LEDGER_DAMAGED, "Ledger " + file + " is damaged: " + why
                + ". Nothing was changed. Restore it from a backup or version control, or move it away to start "
                + "the issue afresh (GitHub Mode: then 'agentx sync --repo OWNER/REPO --issue " + issue + " --write' "
                + "rebuilds it from the App's comments).");
    }

    /** Whether this JVM has read and written a ledger once: see {@link #update}. */
    private static volatile boolean warm;

    @Override
    public <T> T update(int issue, String actor, Function<Ledger, Mutation<T>> change) {
        Path file = fileOf(issue);
        warmUp(issue);
        try {
            return locks.withLock(file, actor, () -> {
                // the records a change leaves alone are written back as the bytes they were read from
                LedgerCodec.Encoded read = readForWrite(issue).orElse(null);
                Mutation<T> m = change.apply(read == null ? Ledger.empty(issue) : read.ledger());
                if (m.ledger() != null) {
                    write(issue, read, m.ledger());
                }
                return m.result();
            });
        } finally {
            Doorbell.ring(queue.nextBell(issue)); // the lock is free: the longest waiting takes it
        }
    }

    /**
     * Group commit. If the issue's lock is free, {@code change} is carried out at once (with any
     * changes waiting in the queue). If not, it goes into the issue's queue (see {@link ChangeQueue})
     * and this thread sleeps on its {@link Doorbell} until a holder that lets go rings it, or 50 ms
     * pass; then it looks for its reply and, if there is none and the lock is free, tries the lock
     * without waiting for it. Whoever gets the lock carries out every change in the queue, its own
     * and those of other processes, on one read of the ledger, writes the ledger once, mirrors the
     * others' statuses ({@link SharedChange.Codec#carriedOut}) and leaves them their replies:
     * under contention one durable write serves every waiter instead of one each, and a waiter
     * whose change was carried out needs no turn of the lock. No waiter starves: a change that
     * waits when a holder looks is carried out by that holder. A waiter that runs out of time
     * withdraws its change and fails with LOCK_TIMEOUT; if a holder claimed it first, the reply is
     * coming and it waits on.
     */
    @Override
    public <T> T submit(int issue, String actor, SharedChange<T> change, SharedChange.Codec<T> changes) {
        Path file = fileOf(issue);
        warmUp(issue);
        Path lockFile = dev.agentx.clarify.lock.FileLock.lockPathOf(file);
        long since = System.nanoTime();
        // uncontended, the usual case: the lock is free, and the change goes straight to the ledger
        if (!lockFile.toFile().exists()) {
            Optional<Result<T>> done = tryTurn(issue, actor, since, locks.maxWait(), null, change, changes);
            if (done.isPresent()) {
                return done.get().value();
            }
        }
        // LOCK_TIMEOUT when the lock made no progress (the same holder) for maxWait, or after the queue's
        // limit in all: a holder that changes (one of another kind, taking it again and again) is waited out
        WaitDeadline deadline = new WaitDeadline(since, locks.maxWait(), locks.maxQueueWait(), locks.holder(file));
        try (Doorbell bell = new Doorbell()) {
            ChangeQueue.Request mine = queue.enqueue(issue, changes.writeChange(change), bell.port());
            boolean rang = true;
            while (true) {
                Optional<ChangeQueue.Reply> reply = queue.takeReply(mine);
                if (reply.isPresent()) {
                    locks.waitEnded(file, since);
                    return result(reply.get(), changes);
                }
                // the lock file is there while someone holds the lock: a look costs far less than a try;
                // after a wait that heard no bell, try anyway (the holder may be gone, or not one of ours)
                if (!rang || !lockFile.toFile().exists()) {
                    Optional<Result<T>> done;
                    try {
                        // a holder of another kind found at the lock gets what is left of this wait's
                        // budget (time waited in the queue behind the same holder counts), not a new one
                        deadline.saw(System.nanoTime(), locks.holder(file));
                        Duration left = Duration.ofNanos(Math.max(0, deadline.remaining(System.nanoTime())));
                        done = tryTurn(issue, actor, since, left, mine, change, changes);
                    } catch (ClarifyException e) {
                        // no turn (a holder of another kind outlasted the wait, or the lock was lost):
                        // the change must not be carried out later, unless a holder has claimed it
                        if ((e.code() == ErrorCode.LOCK_TIMEOUT || e.code() == ErrorCode.LOCK_LOST)
                                && !queue.withdraw(mine)) {
                            continue;
                        }
                        throw e;
                    }
                    if (done.isPresent()) {
                        return done.get().value();
                    }
                }
                long now = System.nanoTime();
                if (deadline.remaining(now) <= 0) {
                    deadline.saw(now, locks.holder(file)); // looked at only then: another holder moves it on
                    if (deadline.remaining(now) <= 0 && queue.withdraw(mine)) {
                        throw new ClarifyException(ErrorCode.LOCK_TIMEOUT, "Failed to acquire lock for "
                                + file.getFileName() + ": " + (deadline.ranOut(now) ? "waited "
                                + locks.maxQueueWait().toSeconds() + "s in all" : "held by the same holder for "
                                + locks.maxWait().toSeconds() + "s") + "." + locks.describeHolder(file)
                                .map(who -> " It is held by " + who + ".").orElse("")
                                + " Nothing was changed: retry shortly.");
                    }
                }
                rang = bell.await(LOOK_AGAIN);
            }
        }
    }

    /** How long a waiter that hears no bell waits before it looks at the lock and its reply again. */
    private static final Duration LOOK_AGAIN = Duration.ofMillis(50);

    /**
     * A turn if the lock is free now (empty if not); once it is let go, the doorbells of those the
     * turn replied to and of the longest waiting of those still waiting are rung.
     */
    private <T> Optional<Result<T>> tryTurn(int issue, String actor, long since, Duration left, ChangeQueue.Request mine,
                                            SharedChange<T> change, SharedChange.Codec<T> changes) {
        List<Result<T>> done = new ArrayList<>(1);
        List<Integer> bells = new ArrayList<>();
        try {
            if (locks.withLockIfFree(fileOf(issue), actor, since, left,
                    () -> done.add(new Result<>(turn(issue, mine, change, changes, bells))))) {
                return Optional.of(done.get(0));
            }
            return Optional.empty();
        } finally {
            if (!bells.isEmpty()) {
                bells.addAll(queue.nextBell(issue));
                Doorbell.ring(bells);
            }
        }
    }

    private static <T> T result(ChangeQueue.Reply reply, SharedChange.Codec<T> changes) {
        if (reply instanceof ChangeQueue.Refused r) {
            throw r.exception();
        }
        return changes.readResult(((ChangeQueue.Done) reply).result());
    }

    /**
     * One holder's turn: every change waiting in the queue and its own ({@code mine}: the request
     * it queued, null if it went straight for the lock and queued none), in order of arrival, on
     * one read of the ledger and in one write. {@code bells} receives the doorbells of those it
     * replied to.
     */
    private <T> T turn(int issue, ChangeQueue.Request mine, SharedChange<T> change, SharedChange.Codec<T> changes,
                       List<Integer> bells) {
        if (mine != null) {
            Optional<ChangeQueue.Reply> reply = queue.takeReply(mine); // replied to between the look and the lock
            if (reply.isPresent()) {
                return result(reply.get(), changes);
            }
        }
        List<ChangeQueue.Claimed> others = new ArrayList<>();
        boolean queued = false;
        for (ChangeQueue.Claimed c : queue.claim(issue)) {
            if (mine != null && c.name().equals(mine.name())) {
                queued = true;
            } else {
                others.add(c);
                if (c.bell() != null) {
                    bells.add(c.bell());
                }
            }
        }
        if (mine != null && !queued) {
            throw new IllegalStateException("request " + mine.name() + " left " + queue.directory()
                    + " without a reply");
        }
        if (mine != null) {
            // its own claim goes before the ledger is written: its change is carried out without its
            // key (see LedgerChange), so a claim left by a holder that died after the write would be
            // carried out again by the next; dying, the holder takes its caller with it anyway
            queue.finish(mine);
        }
        LedgerCodec.Encoded read;
        try {
            read = readForWrite(issue).orElse(null);
        } catch (RuntimeException e) {
            throw failAll(others, e); // a damaged or newer ledger refuses every change alike
        }
        Ledger current = read == null ? Ledger.empty(issue) : read.ledger();
        // the others in order of arrival (the queue's names sort so), then its own: all of them were
        // waiting at once, so any order is one they could have taken the lock in
        Ledger next = current;
        Map<ChangeQueue.Claimed, Object> results = new IdentityHashMap<>(); // a Result, or the exception
        Object own = null;
        for (ChangeQueue.Claimed c : others) {
            try {
                Mutation<T> m = changes.readChange(c.change()).apply(next);
                next = m.ledger() != null ? m.ledger() : next;
                results.put(c, new Result<>(m.result()));
            } catch (RuntimeException e) {
                results.put(c, e); // refused: changes nothing, the next change goes on from the same ledger
            }
        }
        try {
            Mutation<T> m = change.apply(next);
            next = m.ledger() != null ? m.ledger() : next;
            own = new Result<>(m.result());
        } catch (RuntimeException e) {
            own = e;
        }
        try {
            write(issue, read, next);
        } catch (RuntimeException e) {
            throw failAll(others, e); // nothing written: no change of the batch happened
        }
        List<T> forOthers = new ArrayList<>();
        for (Object r : results.values()) {
            if (r instanceof Result<?> done) {
                @SuppressWarnings("unchecked")
                T value = ((Result<T>) done).value();
                forOthers.add(value);
            }
        }
        if (!forOthers.isEmpty()) {
            try {
                changes.carriedOut(issue, forOthers);
            } catch (RuntimeException e) {
                org.slf4j.LoggerFactory.getLogger(FileLedgerStore.class).warn("after the changes of other processes "
                        + "to issue {}: {}", issue, e.getMessage());
            }
        }
        for (ChangeQueue.Claimed c : others) {
            replyTo(c, results.get(c), changes);
        }
        if (own instanceof RuntimeException e) {
            throw e;
        }
        @SuppressWarnings("unchecked")
        T result = ((Result<T>) own).value();
        return result;
    }

    /** A change's result, boxed: a result may itself be null. */
    private record Result<T>(T value) {
    }

    private <T> void replyTo(ChangeQueue.Claimed c, Object outcome, SharedChange.Codec<T> changes) {
        try {
            if (outcome instanceof RuntimeException e) {
                queue.reply(c, refusal(e));
            } else {
                @SuppressWarnings("unchecked")
                T value = ((Result<T>) outcome).value();
                queue.reply(c, new ChangeQueue.Done(changes.writeResult(value)));
            }
        } catch (RuntimeException e) {
            // the ledger holds the change: its submitter, finding no reply, carries it out again and
            // finds it done by its key
            org.slf4j.LoggerFactory.getLogger(FileLedgerStore.class).warn("no reply to {}: {}", c.name(),
                    e.getMessage());
        }
    }

    /** Refuses every change of the batch with {@code e} (none was carried out); returns {@code e} to throw. */
    private RuntimeException failAll(List<ChangeQueue.Claimed> others, RuntimeException e) {
        for (ChangeQueue.Claimed c : others) {
            replyTo(c, e, null);
        }
        return e;
    }

    private static ChangeQueue.Refused refusal(RuntimeException e) {
        if (e instanceof ClarifyException ce) {
            return new ChangeQueue.Refused(ce.code(), ce.getMessage());
        }
        return new ChangeQueue.Refused(ErrorCode.INTERNAL, "The process that held the lock failed to carry out "
                + "this change: " + e);
    }

    /**
     * Writes {@code next} over {@code current} (as read under the lock, null if there was no file;
     * nothing is written if {@code next} holds the same). Call holding the issue's lock.
     */
    private void write(int issue, LedgerCodec.Encoded current, Ledger next) {
        if (LedgerStore.unchanged(next, current == null ? Ledger.empty(issue) : current.ledger())) {
            return;
        }
        Path file = fileOf(issue);
        LedgerCodec.Encoded encoded = codec.encode(next, current);
        // the agents the ledger holds open are marked before it is in place, unmarked after (OpenRecordMarks)
        Set<String> heldOpen = OpenRecordMarks.agentsHeldOpen(next);
        marks.mark(issue, heldOpen);
        // likewise the monitor's mark of a ledger with an active record (ActiveMarks)
        boolean active = !next.active().isEmpty();
        if (active) {
            activeMarks.mark(issue);
        }
        // the temp file in the runtime folder, renamed into clarifications/, which is fsynced
        Path temp = AtomicFiles.prepare(file, RuntimeFolder.enter(runtime), encoded.bytes(), true);
        try {
            // the rename only while the lock on disk is still ours: a takeover never loses a write
            locks.commit(file, () -> AtomicFiles.commit(temp, file));
        } catch (RuntimeException e) {
            AtomicFiles.discard(temp); // not renamed into place (renamed, it is gone, and this does nothing)
            throw e;
        }
        Set<String> released = OpenRecordMarks.agentsHeldOpen(current == null ? null : current.ledger());
        released.removeAll(heldOpen);
        marks.unmark(issue, released);
        if (!active) {
            activeMarks.unmark(issue);
        }
        // still under the lock: the file is the one just written
        ActiveLedgerIndex.Signature written = signatureOf(issue);
        if (written != null) {
            remember(issue, written, encoded);
        }
    }

    /**
     * A new process (each CLI command is one) reads and encodes the ledger once before it takes
     * the lock, so that loading and first running the codec's classes happen outside the lock: with
     * many agents starting JVMs on few cores, that first run is slow, and inside the lock every
     * waiter would wait for it.
     */
    private void warmUp(int issue) {
        if (!warm) {
            read(issue).ifPresent(codec::encode);
            warm = true;
        }
    }

    /**
     * The ledgers that hold a record open for {@code agent} (and perhaps a few that no longer do),
     * found through its marks ({@link OpenRecordMarks}) without looking at any other ledger. A
     * damaged ledger is left out: the commands on its issue say so.
     */
    @Override
    public List<Ledger> openFor(String agent) {
        List<Ledger> out = new ArrayList<>();
        for (int issue : marks.issuesOf(agent)) {
            try {
                read(issue).ifPresent(out::add);
            } catch (ClarifyException damaged) {
                // named by every command on that issue and by the monitor
            }
        }
        return out;
    }

    /** The issue number of a ledger file name ({@code issue-N.json}), or empty if it is not one. */
    public static OptionalInt issueOf(String fileName) {
        // by hand rather than with a regular expression: the monitor calls this for every file of the directory
        if (!fileName.startsWith(PREFIX) || !fileName.endsWith(SUFFIX)
                || fileName.length() <= PREFIX.length() + SUFFIX.length()) {
            return OptionalInt.empty();
        }
        String digits = fileName.substring(PREFIX.length(), fileName.length() - SUFFIX.length());
        for (int i = 0; i < digits.length(); i++) {
            if (digits.charAt(i) < '0' || digits.charAt(i) > '9') {
                return OptionalInt.empty();
            }
        }
        try {
            int n = Integer.parseInt(digits);
            return n > 0 ? OptionalInt.of(n) : OptionalInt.empty();
        } catch (NumberFormatException e) {
            return OptionalInt.empty(); // too large to be an issue number
        }
    }

    @Override
    public List<Integer> issues() {
        if (!Files.isDirectory(dir)) {
            return List.of();
        }
        List<Integer> out = new ArrayList<>();
        try (Stream<Path> files = Files.list(dir)) {
            files.forEach(p -> issueOf(p.getFileName().toString()).ifPresent(out::add));
        } catch (IOException e) {
            throw new UncheckedIOException("cannot list " + dir + ": " + IoErrors.why(e), e);
        }
        out.sort(null);
        return out;
    }
}
