package dev.agentx.clarify.lock;

import dev.agentx.clarify.protocol.ClarifyException;
import dev.agentx.clarify.protocol.ErrorCode;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Supplier;

/**
 * The lock to take before touching a state file: an in-process lock per file (so threads of one
 * process queue fairly instead of polling the file system) in front of the cross-process
 * {@link FileLock}. One instance per process; pass it to every store.
 */
public final class LockManager {
    private final Clock clock;
    private final LockSettings settings;
    private final FileLock fileLock;
    /** The in-process locks of the files in use: an entry lives while a thread holds or waits for it. */
    private final Map<Path, Local> local = new ConcurrentHashMap<>();
    private final LockObserver observer;
    private final ProcessIdentity self;

    public LockManager(Clock clock, LockSettings settings, Sleeper sleeper, ProcessIdentity self,
                       LockObserver observer) {
        this.clock = clock;
        this.settings = settings;
        this.fileLock = new FileLock(clock, settings, sleeper, self);
        this.observer = observer;
        this.self = self;
    }

    /**
     * Gives up what this manager keeps between locks (spare lock content files): for a command
     * of a long-lived process, at its end. A process of its own does this when it exits.
     */
    public void close() {
        fileLock.close();
    }

    /** This process, as its locks name it. */
    public ProcessIdentity identity() {
        return self;
    }

    /**
     * Tells the observer that a wait for {@code file}'s lock that began at {@code waitingSince} (a
     * {@link System#nanoTime()}) ended without the lock: what the waiter wanted done was done by
     * the holder (see FileLedgerStore#submit). To the waiter it is a wait like any other.
     */
    public void waitEnded(Path file, long waitingSince) {
        observer.acquired(file.toAbsolutePath().normalize(), Duration.ofNanos(System.nanoTime() - waitingSince));
    }

    /**
     * Who holds {@code file}'s lock now (a token, compared with {@code equals}); null when nobody
     * does. A waiter that sees it change is in a queue that moves.
     */
    public Object holder(Path file) {
        return fileLock.holderOfLock(file.toAbsolutePath().normalize());
    }

    /** Who holds {@code file}'s lock now, for messages: agent, pid, host and since when; empty when nobody does. */
    public Optional<String> describeHolder(Path file) {
        return fileLock.describeHolderOf(file.toAbsolutePath().normalize());
    }

    /** How long a queue that moves is waited out in all. */
    public Duration maxQueueWait() {
        return Turnstile.MAX_QUEUE_WAIT;
    }

    /** How long a wait for a lock may last without progress (the same holder) before LOCK_TIMEOUT. */
    public Duration maxWait() {
        return settings.maxWait();
    }

    /** The clock the locks' ages are told by. */
    public Clock clock() {
        return clock;
    }

    /** A file's in-process lock and how many threads hold or wait for it (changed only inside the map's compute). */
    private static final class Local {
        final ReentrantLock mutex = new ReentrantLock(true);
        int users;
    }

    public static LockManager standard(Clock clock) {
        return new LockManager(clock, LockSettings.defaults(), Sleeper.real(), ProcessIdentity.current(),
                LockObserver.NONE);
    }

    /** Runs {@code body} while holding both locks of {@code file}. Never call out to the network inside. */
    public <T> T withLock(Path file, String agent, Supplier<T> body) {
        Path key = file.toAbsolutePath().normalize();
        Local entry = enter(key);
        try {
            return withLocks(file, key, entry.mutex, agent, body);
        } finally {
            leave(key);
        }
    }

    /**
     * Runs {@code body} holding both locks of {@code file} if nobody holds or waits for them now,
     * and says whether it ran; false at once otherwise, whoever the holder: a thread of this
     * process or a process of ours (which can be left work to pick up, see FileAgentStatusStore),
     * or a process that knows only the lock-file protocol (whoever takes the lock next picks it
     * up). A stale lock is taken over as {@link #withLock} does.
     */
    public boolean withLockIfFree(Path file, String agent, Runnable body) {
        return lockIfFree(file, agent, System.nanoTime(), null, body);
    }

    /**
     * As {@link #withLockIfFree(Path, String, Runnable)}, for a caller that has been waiting for
     * the lock since {@code waitingSince} (a {@link System#nanoTime()}: the wait told to the
     * observer) and must have it in the end: a holder of another kind is waited out as {@link
     * #withLock} does (LOCK_TIMEOUT when it makes no progress), the one it finds first for at most
     * {@code left}, what is left of the caller's own wait for it (its wait in the queue counts).
     */
    public boolean withLockIfFree(Path file, String agent, long waitingSince, Duration left, Runnable body) {
        return lockIfFree(file, agent, waitingSince, java.util.Objects.requireNonNull(left, "left"), body);
    }

    /** {@code left} null: a holder of another kind is not waited for. */
    private boolean lockIfFree(Path file, String agent, long waitingSince, Duration left, Runnable body) {
        Path key = file.toAbsolutePath().normalize();
        Local entry = enter(key);
        try {
            if (entry.mutex.isHeldByCurrentThread()) {
                throw new IllegalStateException("nested lock of " + key + " in one thread");
            }
            if (!entry.mutex.tryLock()) {
                return false;
            }
            try {
                FileLock.Held held;
                try {
                    held = left == null ? fileLock.tryAcquire(key, agent, Duration.ZERO)
                            : fileLock.tryAcquire(key, agent, left, settings.maxWait());
                } catch (dev.agentx.clarify.protocol.ClarifyException e) {
                    if (left == null && e.code() == dev.agentx.clarify.protocol.ErrorCode.LOCK_TIMEOUT) {
                        return false; // held by one of another kind: not waited for
                    }
                    throw e;
                }
                if (held == null) {
                    return false;
                }
                try (held) {
                    observer.acquired(key, Duration.ofNanos(System.nanoTime() - waitingSince));
                    holding(key, held, () -> {
                        body.run();
                        return null;
                    });
                    return true;
                }
            } finally {
                entry.mutex.unlock();
            }
        } finally {
            leave(key);
        }
    }

    private Local enter(Path key) {
        return local.compute(key, (k, v) -> {
            Local e = v == null ? new Local() : v;
            e.users++;
            return e;
        });
    }

    /** The last user removes the entry: a server that touches many issues keeps no lock per file it ever locked. */
    private void leave(Path key) {
        local.computeIfPresent(key, (k, e) -> --e.users == 0 ? null : e);
    }

    private <T> T holding(Path key, FileLock.Held held, Supplier<T> body) {
        holding.get().put(key, held);
        try {
            return body.get();
        } finally {
            holding.get().remove(key);
        }
    }

    /** The file locks the current thread holds, by file: what {@link #commit} checks. */
    private final ThreadLocal<Map<Path, FileLock.Held>> holding = ThreadLocal.withInitial(HashMap::new);

    /**
     * Publishes a change of {@code file} (its rename) only if this thread still holds the file's
     * lock on disk, under the lock's guard: a writer whose lock was taken over writes nothing and
     * fails with LOCK_LOST. Call inside {@link #withLock} of the same file.
     */
    public void commit(Path file, FileLock.IoAction write) {
        FileLock.Held held = holding.get().get(file.toAbsolutePath().normalize());
        if (held == null) {
            throw new IllegalStateException("commit of " + file + " outside its lock");
        }
        held.commit(write);
    }

    /** Files whose in-process lock a thread holds or waits for (for tests). */
    int filesInUse() {
        return local.size();
    }

    /** Whether a thread waits for the in-process lock of {@code file} (for tests). */
    boolean hasQueuedThreadsFor(Path file) {
        Local e = local.get(file.toAbsolutePath().normalize());
        return e != null && e.mutex.hasQueuedThreads();
    }

    private <T> T withLocks(Path file, Path key, ReentrantLock mutex, String agent, Supplier<T> body) {
        if (mutex.isHeldByCurrentThread()) {
            throw new IllegalStateException("nested lock of " + key + " in one thread");
        }
        Instant start = clock.instant();
        try {
            if (!mutex.tryLock(settings.maxWait().toMillis(), TimeUnit.MILLISECONDS)) {
                throw new ClarifyException(ErrorCode.LOCK_TIMEOUT, "Failed to acquire lock for " + file.getFileName()
                        + " within " + settings.maxWait().toSeconds() + "s: another task of this process holds it."
                        + " Nothing was changed: retry shortly.");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new ClarifyException(ErrorCode.LOCK_TIMEOUT, "Interrupted while waiting for " + file.getFileName(), e);
        }
        Duration left = settings.maxWait().minus(Duration.between(start, clock.instant()));
        try (FileLock.Held held = fileLock.acquire(key, agent, left.isNegative() ? Duration.ZERO : left)) {
            observer.acquired(key, Duration.between(start, clock.instant()));
            return holding(key, held, body);
        } finally {
            mutex.unlock();
        }
    }
}
