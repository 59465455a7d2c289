package dev.agentx.clarify.lock;

import dev.agentx.clarify.files.AtomicFiles;
import dev.agentx.clarify.files.Directories;
import dev.agentx.clarify.files.IoErrors;
import dev.agentx.clarify.protocol.ClarifyException;
import dev.agentx.clarify.protocol.ErrorCode;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.OverlappingFileLockException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Deque;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedDeque;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.ThreadLocalRandom;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The cross-process lock on a ledger file (docs/architecture.md, the lock protocol).
 *
 * <ul>
 *   <li>Acquire: create {@code <file>.lock} exclusively (O_CREAT|O_EXCL semantics) holding {@link LockInfo};
 *   see {@link #tryCreate} for why it is hard-linked into place.</li>
 *   <li>Stale: older than 30 s, or its owner's pid is dead on this host: taken over at once.</li>
 *   <li>Take-over: the stale lock is renamed away to a unique name, never deleted-then-created.</li>
 *   <li>Release: only a lock that still carries our own token is removed.</li>
 *   <li>Waiting: our processes queue for the lock in the kernel ({@link Turnstile}: an OS lock on
 *   {@code .<file>.queue}), so the next one learns at once that the lock is free; only the head of
 *   that queue looks at the lock file, and while a process that knows only the lock-file protocol
 *   holds it, the head polls it with short jittered sleeps (10 ms doubling to at most 80 ms).
 *   LOCK_TIMEOUT comes when the lock made no progress for 15 s (the same holder, or the same
 *   foreign holder at the head), or after 120 s in a queue that moves (our processes taking
 *   turns, or holders of another kind one after another).</li>
 * </ul>
 *
 * <p>Take-over and release each run under a short guard: an OS advisory lock on a hidden sibling
 * file {@code .<file>.guard}. The kernel drops it when its process dies, so the guard itself can
 * never be stale. Without it, a process that judged lock A stale could rename away the fresh lock
 * B another process had just created in its place, and a slow owner could delete a successor's
 * lock; under the guard, the lock is re-read and renamed or deleted only if it is still the one
 * that was judged.
 */
public final class FileLock {
    /** How a stale lock renamed away to be deleted is named: {@code <name>.lock.stale-<uuid>}. */
    private static final String STALE = ".stale-";
    /** Looked up on first use: the CLI must not start the logging system unless something is logged. */
    private static Logger log() {
        return LoggerFactory.getLogger(FileLock.class);
    }

    private final Clock clock;
    private final LockSettings settings;
    private final Sleeper sleeper;
    private final ProcessIdentity self;
    private volatile boolean hardLinks = true;
    /**
     * Hidden lock-content files ({@code .<name>.lock.<token>}) of released locks, per directory,
     * written again and linked for the next lock taken there: a lock then costs no new inode (see
     * {@link #tryCreate}). Deleted when the process exits.
     */
    private final Map<Path, Deque<Path>> spare = new ConcurrentHashMap<>();
    private final AtomicBoolean cleanupRegistered = new AtomicBoolean();

    public FileLock(Clock clock, LockSettings settings, Sleeper sleeper, ProcessIdentity self) {
        this.clock = Objects.requireNonNull(clock);
        this.settings = Objects.requireNonNull(settings);
        this.sleeper = Objects.requireNonNull(sleeper);
        this.self = Objects.requireNonNull(self);
    }

    public static Path lockPathOf(Path file) {
        return file.resolveSibling(file.getFileName() + ".lock");
    }

    /** A held lock. Closing it releases the lock if it is still ours. */
    public final class Held implements AutoCloseable {
        private final Path lockPath;
        private final LockInfo info;
        private final Duration waited;
        private final Turnstile.Turn turn;
        /** The hidden file linked as the lock, kept for the next lock in its directory; null if none. */
        private final Path content;
        private boolean released;

        private Held(Path lockPath, LockInfo info, Duration waited, Turnstile.Turn turn, Path content) {
            this.lockPath = lockPath;
            this.info = info;
            this.waited = waited;
            this.turn = turn;
            this.content = content;
        }

        public LockInfo info() {
            return info;
        }

        /** How long acquiring took. */
        public Duration waited() {
            return waited;
        }

        /**
         * Runs {@code write} (the rename that publishes a change) only while this is still the
         * lock on disk, checked under the guard that a takeover runs under, so no takeover can
         * slip in between the check and the write; a lock taken over meanwhile (this process was
         * paused past the stale time, on another host) fails with LOCK_LOST and writes nothing.
         */
        public void commit(IoAction write) {
            // No guard needed: takeovers by our processes run only at the head of the queue, whose
            // turn this holder has; a process of another kind never takes the guard anyway.
            Optional<Observed> now = observe(lockPath);
            boolean ours = now.isPresent() && now.get().info != null && info.token().equals(now.get().info.token());
            if (ours) {
                try {
                    write.run();
                } catch (IOException e) {
                    throw new UncheckedIOException("cannot write beside " + lockPath + ": " + IoErrors.why(e), e);
                }
            }
            if (!ours) {
                throw new ClarifyException(ErrorCode.LOCK_LOST, "The lock " + lockPath.getFileName() + " was taken "
                        + "over while this command held it (it was paused past the stale time): nothing was written. "
                        + "Run the command again.");
            }
        }

        /** Removes the lock file if it is still ours, then lets the next process in the queue go. */
        @Override
        public void close() {
            if (!released) {
                released = true;
                try {
                    boolean removed = release(lockPath, info.token());
                    if (content != null) {
                        if (removed) {
                            keepSpare(content);
                        } else {
                            deleteQuietly(content);
                        }
                    }
                } finally {
                    turn.close();
                }
            }
        }
    }

    /**
     * Acquires the lock of {@code file} for {@code agent}. It waits at most {@code budget} for other
     * holders, counted from the first attempt that finds the lock taken, so that a cold process's
     * own start-up work never eats into the wait.
     */
    public Held acquire(Path file, String agent, Duration budget) {
        Path lockPath = lockPathOf(file);
        Instant start = clock.instant();
        Turnstile.Turn turn = Turnstile.enter(lockPath, file, budget, new java.util.function.Supplier<Object>() {
            @Override
            public Object get() {
                return holderOf(lockPath);
            }
        });
        try {
            // at the head of the queue: the budget starts again, for a holder of another kind
            return acquireFile(file, lockPath, agent, budget, budget, start, turn);
        } catch (RuntimeException e) {
            turn.close();
            throw e;
        }
    }

    /**
     * The lock of {@code file} if no process of ours holds or waits for its turn now, else null at
     * once. Holding the turn, it waits up to {@code budget} for a holder of another kind, as
     * {@link #acquire} does.
     */
    public Held tryAcquire(Path file, String agent, Duration budget) {
        return tryAcquire(file, agent, budget, budget);
    }

    /**
     * As {@link #tryAcquire(Path, String, Duration)}, for a caller that already waited: the holder
     * found first is waited for at most {@code first} (what is left of the caller's budget), a
     * holder after it for {@code budget}.
     */
    public Held tryAcquire(Path file, String agent, Duration first, Duration budget) {
        Path lockPath = lockPathOf(file);
        Instant start = clock.instant();
        Turnstile.Turn turn = Turnstile.tryEnter(lockPath);
        if (turn == null) {
            return null;
        }
        try {
            return acquireFile(file, lockPath, agent, first, budget, start, turn);
        } catch (RuntimeException e) {
            turn.close();
            throw e;
        }
    }

    /** With the turn held: creates the lock file, waiting out (by polling) a holder of another kind. */
    private Held acquireFile(Path file, Path lockPath, String agent, Duration first, Duration budget, Instant start,
                             Turnstile.Turn turn) {
        // a holder of another kind that changes (new tokens) is a queue that moves: each new holder
        // gives the budget again, up to the queue's limit
        WaitDeadline deadline = null;
        int attempt = 0;
        int immediateRetries = 0;
        Observed last = null;
        while (true) {
            LockInfo mine = new LockInfo(self.pid(), clock.instant(), agent, UUID.randomUUID().toString(),
                    self.host(), self.processStart());
            Created created = tryCreate(lockPath, mine);
            if (created.held()) {
                return new Held(lockPath, mine, Duration.between(start, clock.instant()), turn, created.content());
            }
            Optional<Observed> seen = observe(lockPath);
            if (seen.isPresent()) {
                last = seen.get();
                if (isStale(last) && takeOver(lockPath, last)) {
                    if (immediateRetries++ < 20) {
                        continue;
                    }
                }
            } else if (immediateRetries++ < 20) {
                continue; // released between our create and our read: try again at once
            }
            long now = nanos(clock.instant());
            Object holder = last == null ? null : last.holder();
            if (deadline == null) {
                deadline = new WaitDeadline(now, first, budget, Turnstile.MAX_QUEUE_WAIT, holder);
            } else {
                deadline.saw(now, holder);
            }
            Duration remaining = Duration.ofNanos(deadline.remaining(now));
            if (remaining.isNegative() || remaining.isZero()) {
                throw timeout(file, attempt + 1, last);
            }
            long base = settings.baseDelay().toMillis() << Math.min(attempt, 3);
            long jittered = (long) (base * ThreadLocalRandom.current().nextDouble(0.5, 1.0));
            Duration delay = Duration.ofMillis(Math.max(1, jittered));
            if (delay.compareTo(remaining) > 0) {
                delay = remaining;
            }
            try {
                sleeper.sleep(delay);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new ClarifyException(ErrorCode.LOCK_TIMEOUT, "Interrupted while waiting for the lock of "
                        + file.getFileName(), e);
            }
            attempt++;
        }
    }

    /** Who holds {@code file}'s lock now, for telling whether a queue moves: its token; null when nobody does. */
    public Object holderOfLock(Path file) {
        return holderOf(lockPathOf(file));
    }

    /** Who holds {@code file}'s lock now, for messages ({@link LockInfo#holder()}); empty when nobody does. */
    public Optional<String> describeHolderOf(Path file) {
        try {
            return observe(lockPathOf(file)).map(seen -> seen.info != null ? seen.info.holder()
                    : "a holder whose lock file says nothing of itself");
        } catch (UncheckedIOException e) {
            return Optional.empty();
        }
    }

    /** Who holds the lock file now, for telling whether the queue moves: its token; null when nobody does. */
    private Object holderOf(Path lockPath) {
        try {
            Optional<Observed> seen = observe(lockPath);
            if (seen.isEmpty()) {
                return null;
            }
            return seen.get().holder();
        } catch (UncheckedIOException e) {
            return null;
        }
    }

    private static long nanos(Instant at) {
        return java.util.concurrent.TimeUnit.SECONDS.toNanos(at.getEpochSecond()) + at.getNano();
    }

    private ClarifyException timeout(Path file, int attempts, Observed holder) {
        String who = "";
        if (holder != null && holder.info != null) {
            who = " It is held by " + holder.info.holder() + ".";
        }
        return new ClarifyException(ErrorCode.LOCK_TIMEOUT, "Failed to acquire lock for " + file.getFileName()
                + " after " + attempts + " attempts (" + settings.maxWait().toSeconds() + "s with no new holder, or "
                + Turnstile.MAX_QUEUE_WAIT.toSeconds() + "s in all)." + who
                + " Nothing was changed: retry shortly. A lock whose process died is taken over automatically ("
                + "at once on the same host, after " + settings.staleAfter().toSeconds() + "s elsewhere).");
    }

    /** Whether {@link #tryCreate} took the lock, and the hidden file linked as it (null without hard links). */
    private record Created(boolean held, Path content) {
        static final Created TAKEN = new Created(false, null);
    }

    /**
     * Creates the lock file with its content in one step: the content is written to a hidden file,
     * then hard-linked to the lock path. link(2) fails if the lock exists (the same exclusivity as
     * O_CREAT|O_EXCL), and a lock so created is never seen empty, even if its creator is killed
     * half-way; a process killed between a plain create and its write would leave an empty lock
     * that could only be judged by its age. Where the file system has no hard links, the lock is
     * created with CREATE_NEW and written.
     *
     * <p>The hidden file keeps its name while the lock is held, and after the release (which
     * unlinks only the lock path) it is written again for the next lock in its directory. So a
     * long-lived process (the server, an agent's MCP session) takes a lock without allocating an
     * inode: on a file system that allocates inodes slowly while many were freed recently (ext4
     * without a journal scans past them), the inodes of the lock files were the larger part of a
     * ledger write's cost (bench/README.md). Nobody reads the hidden file while it is not linked
     * as a lock, so writing it again in place is safe.
     */
    private Created tryCreate(Path lockPath, LockInfo info) {
        byte[] bytes = info.toJson();
        Path dir = lockPath.getParent();
        try {
            Directories.ensure(dir);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot create " + dir + ": " + IoErrors.why(e), e);
        }
        for (int attempt = 1; hardLinks; attempt++) {
            Path content = reuseSpare(dir, bytes);
            try {
                if (content == null) {
                    content = dir.resolve("." + lockPath.getFileName() + "." + info.token());
                    writeNew(content, bytes);
                }
                Files.createLink(lockPath, content);
                return new Created(true, content);
            } catch (FileAlreadyExistsException e) {
                keepSpare(content);
                return Created.TAKEN;
            } catch (NoSuchFileException e) {
                // a sweep of leftovers removed the spare between its write and the link: a new one,
                // unless the file is gone again (the directory itself went away)
                deleteQuietly(content);
                if (attempt >= 3) {
                    throw new UncheckedIOException("cannot create lock " + lockPath + ": " + IoErrors.why(e), e);
                }
            } catch (UnsupportedOperationException | IOException e) {
                deleteQuietly(content);
                hardLinks = false; // e.g. a file system without hard links: fall back to CREATE_NEW
                log().debug("hard links unavailable in {} ({}); creating locks with CREATE_NEW", dir, e.toString());
            }
        }
        try {
            writeNew(lockPath, bytes);
            return new Created(true, null);
        } catch (FileAlreadyExistsException e) {
            return Created.TAKEN;
        } catch (IOException e) {
            throw new UncheckedIOException("cannot create lock " + lockPath + ": " + IoErrors.why(e), e);
        }
    }

    /** A spare hidden file of {@code dir} written with {@code bytes}, or null if there is none (or it was swept). */
    private Path reuseSpare(Path dir, byte[] bytes) {
        Deque<Path> kept = spare.get(dir);
        for (Path p = kept == null ? null : kept.pollFirst(); p != null; p = kept.pollFirst()) {
            try {
                AtomicFiles.overwrite(p, bytes);
                return p;
            } catch (IOException e) {
                deleteQuietly(p); // swept as a leftover (older than the stale time), or unwritable: not reused
            }
        }
        return null;
    }

    /** Keeps a hidden lock-content file for the next lock in its directory; all are deleted when the process exits. */
    private void keepSpare(Path content) {
        if (cleanupRegistered.compareAndSet(false, true)) {
            Runtime.getRuntime().addShutdownHook(new Thread(this::deleteSpares, "agentx-lock-spares"));
        }
        spare.computeIfAbsent(content.getParent(), d -> new ConcurrentLinkedDeque<>()).offerFirst(content);
    }

    /** Deletes the spare hidden files (at exit; one a process killed leaves is swept as a leftover, see {@link #sweep}). */
    void deleteSpares() {
        for (Deque<Path> kept : spare.values()) {
            for (Path p = kept.pollFirst(); p != null; p = kept.pollFirst()) {
                deleteQuietly(p);
            }
        }
    }

    private static void deleteQuietly(Path p) {
        if (p == null) {
            return;
        }
        try {
            Files.deleteIfExists(p);
        } catch (IOException ignored) {
            // a hidden leftover of a few bytes; harmless, and swept with the others
        }
    }

    /**
     * Lock files are not fsynced, on purpose: a lock only matters between live processes, and every
     * process sees the page cache, so a killed holder's lock is whole. What a crash of the machine
     * can leave (a lock of a process that no longer exists, or an empty one) is taken over as
     * stale: at once for a dead process of this host (pid and start time), by age otherwise. Two
     * fsyncs per lock and two per release would double the cost of a ledger write for nothing.
     */
    private static void writeNew(Path path, byte[] bytes) throws IOException {
        try (FileChannel ch = FileChannel.open(path, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)) {
            ByteBuffer buf = ByteBuffer.wrap(bytes);
            while (buf.hasRemaining()) {
                ch.write(buf);
            }
        }
    }

    /** What we saw of an existing lock: its content (null if empty or torn) and file identity. */
    private record Observed(LockInfo info, Object fileKey, Instant modified) {
        /** Who holds it: its token, or for a lock without one the file and its time. */
        Object holder() {
            return info != null ? info.token() : fileKey + "@" + modified;
        }

        boolean sameLockAs(Observed other) {
            if (info != null && other.info != null) {
                return Objects.equals(info.token(), other.info.token());
            }
            return info == null && other.info == null && Objects.equals(fileKey, other.fileKey)
                    && Objects.equals(modified, other.modified);
        }
    }

    private Optional<Observed> observe(Path lockPath) {
        try {
            BasicFileAttributes attrs = Files.readAttributes(lockPath, BasicFileAttributes.class);
            byte[] bytes = Files.readAllBytes(lockPath);
            // null if being written right now, or torn by a crash: then it is judged by its age
            LockInfo info = LockInfo.parse(bytes);
            return Optional.of(new Observed(info, attrs.fileKey(), attrs.lastModifiedTime().toInstant()));
        } catch (NoSuchFileException e) {
            return Optional.empty();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read lock " + lockPath + ": " + IoErrors.why(e), e);
        }
    }

    private boolean isStale(Observed seen) {
        Instant now = clock.instant();
        if (seen.info == null) {
            return Duration.between(seen.modified, now).compareTo(settings.staleAfter()) > 0;
        }
        LockInfo info = seen.info;
        if (self.host().equals(info.host())) {
            // on this host liveness is known: a dead owner's lock goes at once, a live owner's never,
            // however old (a paused process resumes and finishes its write)
            return !self.isAlive(info.pid(), info.processStart());
        }
        Instant taken = info.timestamp() == null ? seen.modified : info.timestamp();
        return Duration.between(taken, now).compareTo(settings.staleAfter()) > 0;
    }

    private boolean takeOver(Path lockPath, Observed judged) {
        return underGuard(lockPath, () -> {
            Optional<Observed> now = observe(lockPath);
            if (now.isEmpty()) {
                return true;
            }
            if (!now.get().sameLockAs(judged)) {
                return false; // replaced by a fresh lock since we looked
            }
            sweep(lockPath);
            Path away = lockPath.resolveSibling(lockPath.getFileName() + STALE + UUID.randomUUID());
            try {
                Files.move(lockPath, away, StandardCopyOption.ATOMIC_MOVE);
            } catch (NoSuchFileException e) {
                return true;
            }
            LockInfo old = judged.info;
            log().warn("took over stale lock {} (was {})", lockPath.getFileName(),
                    old == null ? "empty" : "held by " + old.holder());
            Files.deleteIfExists(away);
            return true;
        });
    }

    /**
     * What killed processes left beside the lock, removed in one look at its directory when a
     * stale lock is taken over, which is when such a crash shows. Runs under the guard while the
     * stale lock is still in place.
     * <ul>
     *   <li>The locked file's temp copies ({@code .<file>.tmp-*}, see AtomicFiles): its holder was
     *   killed writing it. No other process can be writing the file now (its writers hold its
     *   lock); one that held it before and is only paused (another host's, judged stale by age)
     *   finds its temp file gone and its write fails, as it must.</li>
     *   <li>Hidden lock content files ({@code .<name>.lock.<token>}) of any lock of the directory
     *   older than the stale time: a killed process's spares, or one it wrote and had not linked
     *   yet. A live process's idle spare may go too: it then writes a new one. One linked as a lock
     *   loses only its hidden name; the lock stays.</li>
     *   <li>Stale locks renamed away to be deleted ({@code <name>.lock.stale-<uuid>}) by a process
     *   killed before it deleted them, whatever their age: no lock is read under such a name.</li>
     * </ul>
     */
    private void sweep(Path lockPath) {
        String lockName = lockPath.getFileName().toString();
        String tempPrefix = "." + lockName.substring(0, lockName.length() - ".lock".length()) + ".tmp-";
        Instant cutoff = clock.instant().minus(settings.staleAfter());
        try (java.util.stream.Stream<Path> files = Files.list(lockPath.getParent())) {
            files.forEach(p -> {
                String name = p.getFileName().toString();
                boolean content = name.startsWith(".") && name.contains(".lock.");
                try {
                    if (name.startsWith(tempPrefix) || name.contains(".lock" + STALE)
                            || content && Files.getLastModifiedTime(p).toInstant().isBefore(cutoff)) {
                        Files.deleteIfExists(p);
                    }
                } catch (IOException ignored) {
                    // gone already, or not ours to judge: left for the next take-over, harmless
                }
            });
        } catch (IOException e) {
            log().debug("could not sweep what killed processes left in {}: {}", lockPath.getParent(), e.toString());
        }
    }

    /**
     * Removes the lock file if it still carries our token; the turn is still ours, so no guard is
     * needed (see commit). True when our lock file is gone (removed here, or by a process of
     * another kind that judged it stale), so its hidden content file is linked nowhere else.
     */
    private boolean release(Path lockPath, String token) {
        Optional<Observed> now = observe(lockPath);
        if (now.isPresent() && now.get().info != null && token.equals(now.get().info.token())) {
            try {
                Files.delete(lockPath); // no fsync: see writeNew
            } catch (NoSuchFileException e) {
                // removed by a process of another kind that judged it stale
            } catch (IOException e) {
                throw new UncheckedIOException("cannot remove lock " + lockPath + ": " + IoErrors.why(e), e);
            }
            return true;
        }
        log().warn("lock {} was no longer ours at release (taken over as stale); left as it is",
                lockPath.getFileName());
        return false;
    }

    /** A write that may fail with an I/O error. */
    @FunctionalInterface
    public interface IoAction {
        void run() throws IOException;
    }

    @FunctionalInterface
    private interface GuardedAction {
        boolean run() throws IOException;
    }

    private boolean underGuard(Path lockPath, GuardedAction action) {
        String name = lockPath.getFileName().toString();
        Path guard = lockPath.resolveSibling("." + name.substring(0, name.length() - ".lock".length()) + ".guard");
        try (FileChannel ch = FileChannel.open(guard, StandardOpenOption.CREATE, StandardOpenOption.WRITE)) {
            java.nio.channels.FileLock os = null;
            while (os == null) {
                try {
                    os = Turnstile.lockOrPoll(ch);
                } catch (OverlappingFileLockException e) {
                    // another lock object of this same JVM holds the guard for a moment
                    Thread.onSpinWait();
                    Thread.sleep(1);
                }
            }
            try {
                return action.run();
            } finally {
                os.release();
            }
        } catch (IOException e) {
            throw new UncheckedIOException("lock guard " + guard + ": " + IoErrors.why(e), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new ClarifyException(ErrorCode.LOCK_TIMEOUT, "Interrupted while waiting for " + guard, e);
        }
    }
}
