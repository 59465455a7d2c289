package dev.agentx.clarify.lock;

import dev.agentx.clarify.files.IoErrors;
import dev.agentx.clarify.files.RuntimeFolder;
import dev.agentx.clarify.protocol.ClarifyException;
import dev.agentx.clarify.protocol.ErrorCode;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ThreadLocalRandom;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The cross-process lock on a ledger file (docs/architecture.md, the lock protocol): how it is
 * acquired, committed under and released. The parts it rests on each have a class of their own:
 * <ul>
 *   <li>Acquire: create {@code <file>.lock} exclusively (O_CREAT|O_EXCL semantics) holding {@link LockInfo},
 *   hard-linked into place from a content file the process keeps for its next lock ({@link LockContentFiles}).
 *   What our processes need beside the lock file (its queue, its guard, the content files) lives in
 *   the state folder's runtime folder (files/RuntimeFolder), entered before the lock is taken.</li>
 *   <li>Stale: its owner's pid is dead on this host, or, for another host's, older than 30 s: taken
 *   over at once, by renaming it away to a unique name, never deleted-then-created, and what killed
 *   processes left beside it goes too ({@link StaleLockTakeOver}, {@link LeftoverSweep}).</li>
 *   <li>Commit and release: only while the lock is still the one we made (the same file, size and
 *   time: {@link LockContentFiles.Made}) is the change renamed into place and the lock removed.</li>
 *   <li>Waiting: our processes queue for the lock in the kernel ({@link Turnstile}: an OS lock on
 *   {@code <file>.queue}), so the next one learns at once that the lock is free; only the head of
 *   that queue looks at the lock file, and while a process that knows only the lock-file protocol
 *   holds it, the head polls it with short jittered sleeps (10 ms doubling to at most 80 ms).
 *   LOCK_TIMEOUT comes when the lock made no progress for 15 s (the same holder, or the same
 *   foreign holder at the head), or after 120 s in a queue that moves (our processes taking
 *   turns, or holders of another kind one after another).</li>
 * </ul>
 *
 * <p>Only the head of the queue judges and takes over, so the commit check and the release, which
 * the holder of the turn runs, need no guard.
 */
public final class FileLock {
    /** Looked up on first use: the CLI must not start the logging system unless something is logged. */
    private static Logger log() {
        return LoggerFactory.getLogger(FileLock.class);
    }

    private final Clock clock;
    private final LockSettings settings;
    private final Sleeper sleeper;
    private final ProcessIdentity self;
    private final LockContentFiles contents = new LockContentFiles();
    private final StaleLockTakeOver stale;

    /** Deletes the content files kept for this lock's next acquisitions (see {@link LockContentFiles#close}). */
    public void close() {
        contents.close();
    }

    public FileLock(Clock clock, LockSettings settings, Sleeper sleeper, ProcessIdentity self) {
        this.clock = Objects.requireNonNull(clock);
        this.settings = Objects.requireNonNull(settings);
        this.sleeper = Objects.requireNonNull(sleeper);
        this.self = Objects.requireNonNull(self);
        this.stale = new StaleLockTakeOver(clock, settings, self);
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
        /** The content file linked as the lock, kept for the next lock of its state folder; null if none. */
        private final LockContentFiles.Content content;
        /** The lock file as this holder made it: the lock is ours while its name has this file; null if unknown. */
        private final LockContentFiles.Made made;
        private boolean released;

        private Held(Path lockPath, LockInfo info, Duration waited, Turnstile.Turn turn,
                     LockContentFiles.Content content, LockContentFiles.Made made) {
            this.lockPath = lockPath;
            this.info = info;
            this.waited = waited;
            this.turn = turn;
            this.content = content;
            this.made = made;
        }

        /**
         * Whether the lock file is still the one this holder made: one look at its name, which must
         * still have the file, size and time it was made with ({@link LockContentFiles.Made}), or
         * without those, a read of the lock, which must carry this holder's token.
         */
        private boolean stillOurs() {
            if (made != null) {
                try {
                    return made.equals(LockContentFiles.Made.of(lockPath));
                } catch (IOException e) {
                    throw new UncheckedIOException("cannot read lock " + lockPath + ": " + IoErrors.why(e), e);
                }
            }
            Optional<ObservedLock> now = ObservedLock.observe(lockPath);
            return now.isPresent() && now.get().carries(info.token());
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
            boolean ours = stillOurs();
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
                    contents.released(content, release(lockPath, stillOurs()));
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
        Path runtime = RuntimeFolder.enter(RuntimeFolder.of(file));
        Instant start = clock.instant();
        Turnstile.Turn turn = Turnstile.enter(lockPath, file, budget, new java.util.function.Supplier<Object>() {
            @Override
            public Object get() {
                return holderOf(lockPath);
            }
        });
        try {
            // at the head of the queue: the budget starts again, for a holder of another kind
            return acquireFile(file, lockPath, runtime, agent, budget, budget, start, turn);
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
        Path runtime = RuntimeFolder.enter(RuntimeFolder.of(file));
        Instant start = clock.instant();
        Turnstile.Turn turn = Turnstile.tryEnter(lockPath);
        if (turn == null) {
            return null;
        }
        try {
            return acquireFile(file, lockPath, runtime, agent, first, budget, start, turn);
        } catch (RuntimeException e) {
            turn.close();
            throw e;
        }
    }

    /** With the turn held: creates the lock file, waiting out (by polling) a holder of another kind. */
    private Held acquireFile(Path file, Path lockPath, Path runtime, String agent, Duration first, Duration budget,
                             Instant start, Turnstile.Turn turn) {
        // a holder of another kind that changes (new tokens) is a queue that moves: each new holder
        // gives the budget again, up to the queue's limit
        WaitDeadline deadline = null;
        int attempt = 0;
        int immediateRetries = 0;
        ObservedLock last = null;
        while (true) {
            LockInfo mine = new LockInfo(self.pid(), clock.instant(), agent, LockTokens.next(),
                    self.host(), self.processStart());
            LockContentFiles.Created created = contents.tryCreate(lockPath, runtime, mine);
            if (created.held()) {
                return new Held(lockPath, mine, Duration.between(start, clock.instant()), turn, created.content(),
                        created.made());
            }
            Optional<ObservedLock> seen = ObservedLock.observe(lockPath);
            if (seen.isPresent()) {
                last = seen.get();
                if (stale.isStale(last) && stale.takeOver(lockPath, runtime, last)) {
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
            return ObservedLock.observe(lockPathOf(file)).map(seen -> seen.info() != null ? seen.info().holder()
                    : "a holder whose lock file says nothing of itself");
        } catch (UncheckedIOException e) {
            return Optional.empty();
        }
    }

    /** Who holds the lock file now, for telling whether the queue moves: its token; null when nobody does. */
    private Object holderOf(Path lockPath) {
        try {
            Optional<ObservedLock> seen = ObservedLock.observe(lockPath);
            if (seen.isEmpty()) {
                return null;
            }
            return seen.get().holder();
        } catch (UncheckedIOException e) {
            return null;
        }
    }

    /** Deletes the content files kept for the next locks (at exit; see {@link LockContentFiles}). */
    void deleteSpares() {
        contents.deleteSpares();
    }

    private static long nanos(Instant at) {
        return java.util.concurrent.TimeUnit.SECONDS.toNanos(at.getEpochSecond()) + at.getNano();
    }

    private ClarifyException timeout(Path file, int attempts, ObservedLock holder) {
        String who = "";
        if (holder != null && holder.info() != null) {
            who = " It is held by " + holder.info().holder() + ".";
        }
        return new ClarifyException(ErrorCode.LOCK_TIMEOUT, "Failed to acquire lock for " + file.getFileName()
                + " after " + attempts + " attempts (" + settings.maxWait().toSeconds() + "s with no new holder, or "
                + Turnstile.MAX_QUEUE_WAIT.toSeconds() + "s in all)." + who
                + " Nothing was changed: retry shortly. A lock whose process died is taken over automatically ("
                + "at once on the same host, after " + settings.staleAfter().toSeconds() + "s elsewhere).");
    }

    /**
     * Removes the lock file if it is still ours ({@code ours}, just looked at); the turn is still
     * ours, so no guard is needed (see commit). True when our lock file is gone (removed here, or by
     * a process of another kind that judged it stale), so its content file is linked nowhere else.
     */
    private boolean release(Path lockPath, boolean ours) {
        if (ours) {
            // File.delete: one unlink (Files.delete looks at the file first); no fsync: see
            // LockContentFiles.writeNew. Only a failure is looked into, for its reason.
            if (!lockPath.toFile().delete()) {
                try {
                    Files.delete(lockPath);
                } catch (NoSuchFileException e) {
                    // removed by a process of another kind that judged it stale
                } catch (IOException e) {
                    throw new UncheckedIOException("cannot remove lock " + lockPath + ": " + IoErrors.why(e), e);
                }
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
}
