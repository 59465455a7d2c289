package dev.agentx.clarify.lock;

import dev.agentx.clarify.files.Directories;
import dev.agentx.clarify.files.IoErrors;
import dev.agentx.clarify.files.RuntimeFolder;
import dev.agentx.clarify.protocol.ClarifyException;
import dev.agentx.clarify.protocol.ErrorCode;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.channels.ClosedByInterruptException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLockInterruptionException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Supplier;

/**
 * Where our processes wait their turn for a lock file: an OS advisory lock on {@code <file>.queue}
 * in the state folder's runtime folder (files/RuntimeFolder), held from before the lock file is
 * created until after it is removed. A waiter sleeps in the kernel, which wakes it the moment the
 * holder lets go (or dies: the kernel drops the locks of a dead process), instead of polling the
 * lock file on a backoff and waking long after it is free. Threads of one JVM queue first on a
 * fair in-process lock per file, so that only one of them at a time waits on the OS lock (the JDK
 * allows one OS lock per file per JVM).
 *
 * <p>The lock file stays the truth: a process that only knows the lock-file protocol never looks
 * at the queue, and whoever holds the turn still creates the lock file, polling it while such a
 * process holds it.
 */
final class Turnstile {
    /** In-process turns per queue file: an entry lives while a thread holds or waits for it. */
    private static final Map<Path, Local> LOCAL = new ConcurrentHashMap<>();
    /** Interrupts a waiter whose time is up; created on the first wait that blocks. */
    private static volatile ScheduledExecutorService alarms;

    private static final class Local {
        final ReentrantLock mutex = new ReentrantLock(true);
        int users;
    }

    private Turnstile() {
    }

    /** The queue of the lock {@code lockPath}: {@code <file>.queue} in its state folder's runtime folder. */
    static Path queuePathOf(Path lockPath) {
        String name = lockPath.getFileName().toString();
        return RuntimeFolder.of(lockPath).resolve(name.substring(0, name.length() - ".lock".length()) + ".queue");
    }

    /** A turn: held until closed. */
    static final class Turn implements AutoCloseable {
        private final Path key;
        private final Local local;
        private final FileChannel channel;
        private boolean closed;

        private Turn(Path key, Local local, FileChannel channel) {
            this.key = key;
            this.local = local;
            this.channel = channel;
        }

        @Override
        public void close() {
            if (closed) {
                return;
            }
            closed = true;
            try {
                channel.close(); // releases the OS lock
            } catch (IOException ignored) {
                // closing releases the lock whatever the error
            } finally {
                local.mutex.unlock();
                leave(key);
            }
        }
    }

    /** The longest a process waits in the queue, however steadily it moves. */
    static final Duration MAX_QUEUE_WAIT = Duration.ofSeconds(120);

    /**
     * Waits for the turn at {@code lockPath}'s queue. A waiter gives up (LOCK_TIMEOUT) when the
     * lock made no progress for {@code budget}: {@code holder} (who holds the lock file now; null
     * when nobody does) says the same at two looks {@code budget} apart. A queue that moves (a
     * long one: many agents, each command a new JVM on two cores) is waited out, up to
     * {@link #MAX_QUEUE_WAIT}. {@code file} names the ledger in the message.
     */
    static Turn enter(Path lockPath, Path file, Duration budget, Supplier<Object> holder) {
        Path key = queuePathOf(lockPath);
        long deadline = System.nanoTime() + Math.max(0, budget.toNanos());
        Local local = join(key);
        try {
            if (!local.mutex.tryLock() && !local.mutex.tryLock(left(deadline), TimeUnit.NANOSECONDS)) {
                throw timeout(file, budget, "another task of this process holds it");
            }
        } catch (InterruptedException e) {
            leave(key);
            Thread.currentThread().interrupt();
            throw new ClarifyException(ErrorCode.LOCK_TIMEOUT, "Interrupted while waiting for the lock of "
                    + file.getFileName(), e);
        } catch (RuntimeException e) {
            leave(key);
            throw e;
        }
        try {
            FileChannel ch = open(key);
            try {
                if (ch.tryLock() == null) {
                    ch = waitFor(ch, key, file, budget, holder);
                }
            } catch (IOException | RuntimeException e) {
                closeQuietly(ch);
                throw e;
            }
            return new Turn(key, local, ch);
        } catch (IOException e) {
            local.mutex.unlock();
            leave(key);
            throw new UncheckedIOException("lock queue " + key + ": " + IoErrors.why(e), e);
        } catch (RuntimeException e) {
            local.mutex.unlock();
            leave(key);
            throw e;
        }
    }

    /**
     * The turn at {@code lockPath}'s queue if nobody holds or waits for it now (no thread of this
     * process, no other process): null otherwise, at once.
     */
    static Turn tryEnter(Path lockPath) {
        Path key = queuePathOf(lockPath);
        Local local = join(key);
        if (!local.mutex.tryLock()) {
            leave(key);
            return null;
        }
        FileChannel ch = null;
        try {
            ch = open(key);
            if (ch.tryLock() != null) {
                return new Turn(key, local, ch);
            }
            closeQuietly(ch);
        } catch (IOException e) {
            if (ch != null) {
                closeQuietly(ch);
            }
            local.mutex.unlock();
            leave(key);
            throw new UncheckedIOException("lock queue " + key + ": " + IoErrors.why(e), e);
        }
        local.mutex.unlock();
        leave(key);
        return null;
    }

    /**
     * Blocks in the kernel for the OS lock. Every {@code budget} an alarm interrupts the wait (which
     * closes the channel) to look at the lock's holder: if it changed, the queue moves and the wait
     * goes on, on a new channel; if not, LOCK_TIMEOUT. Returns the channel that holds the lock.
     */
    private static FileChannel waitFor(FileChannel first, Path key, Path file, Duration budget,
                                       Supplier<Object> holder) throws IOException {
        long end = System.nanoTime() + MAX_QUEUE_WAIT.toNanos();
        long step = Math.max(1, budget.toNanos());
        FileChannel ch = first;
        Object seen = holder.get();
        while (true) {
            if (wait(ch, Math.min(step, left(end)))) {
                return ch;
            }
            Object now = holder.get();
            if (left(end) <= 0) {
                throw timeout(file, MAX_QUEUE_WAIT, "the queue for it did not clear");
            }
            if (now != null && now.equals(seen)) {
                throw timeout(file, budget, "its holder made no progress meanwhile");
            }
            seen = now;
            ch = open(key);
        }
    }

    /**
     * One wait for the OS lock of at most {@code nanos}: true when held, false (channel closed) when
     * time ran out. Blocking in the kernel; but POSIX record locks belong to the process, and the
     * kernel refuses a blocking wait (EDEADLK) when its waits-for graph of processes has a cycle,
     * which can run through two threads of one process (one holds a file's turn, another waits for
     * a second file's). Refused so, the wait polls for the rest of its time.
     */
    private static boolean wait(FileChannel ch, long nanos) throws IOException {
        if (nanos <= 0) {
            closeQuietly(ch);
            return false;
        }
        long started = System.nanoTime();
        Alarm alarm = Alarm.set(nanos);
        try {
            ch.lock();
            return true;
        } catch (FileLockInterruptionException | ClosedByInterruptException e) {
            closeQuietly(ch);
            return false;
        } catch (IOException e) {
            if (!ch.isOpen()) {
                throw e;
            }
            // EDEADLK: a thread of this process holds a turn, which a thread of the holder we
            // wait for waits on. Ours do not wait on each other: poll for the rest
            return poll(ch, nanos - (System.nanoTime() - started));
        } finally {
            alarm.disarm();
        }
    }

    /**
     * Interrupts the thread that set it when its time is up, and never once that thread disarmed
     * it. Disarming an alarm that rang (or is ringing) waits for it and clears the interrupt it set,
     * so that the waiter's next wait is not cut short by it. A future's {@code cancel} cannot tell
     * this: it succeeds on a task that is running, so the interrupt could land after it.
     */
    private static final class Alarm implements Runnable {
        private static final int ARMED = 0;
        private static final int RINGING = 1;
        private static final int RANG = 2;
        private static final int DISARMED = 3;
        private final Thread waiter = Thread.currentThread();
        private final AtomicInteger state = new AtomicInteger(ARMED);
        private ScheduledFuture<?> task;

        static Alarm set(long nanos) {
            Alarm a = new Alarm();
            a.task = alarms().schedule(a, nanos, TimeUnit.NANOSECONDS);
            return a;
        }

        @Override
        public void run() {
            if (state.compareAndSet(ARMED, RINGING)) {
                waiter.interrupt();
                state.set(RANG);
            }
        }

        void disarm() {
            if (state.compareAndSet(ARMED, DISARMED)) {
                task.cancel(false);
                return;
            }
            while (state.get() != RANG) {
                Thread.onSpinWait();
            }
            Thread.interrupted();
        }
    }

    /**
     * Takes {@code ch}'s OS lock, waiting as long as it takes (the lock guards, held for moments):
     * blocking in the kernel, or by polling every millisecond or two where the kernel refuses the
     * blocking wait with EDEADLK (see {@link #wait(FileChannel, long)}).
     */
    static java.nio.channels.FileLock lockOrPoll(FileChannel ch) throws IOException, InterruptedException {
        try {
            return ch.lock();
        } catch (IOException e) {
            if (!ch.isOpen()) {
                throw e;
            }
            while (true) {
                java.nio.channels.FileLock held = ch.tryLock();
                if (held != null) {
                    return held;
                }
                Thread.sleep(1 + ThreadLocalRandom.current().nextInt(2));
            }
        }
    }

    /**
     * One wait for the OS lock of at most {@code nanos} by polling it every millisecond or two: true
     * when held, false (channel closed) when time ran out or the thread was interrupted.
     */
    private static boolean poll(FileChannel ch, long nanos) throws IOException {
        long end = System.nanoTime() + nanos;
        try {
            while (ch.tryLock() == null) {
                if (System.nanoTime() - end >= 0) {
                    closeQuietly(ch);
                    return false;
                }
                Thread.sleep(1 + ThreadLocalRandom.current().nextInt(2));
            }
            return true;
        } catch (InterruptedException | ClosedByInterruptException e) {
            closeQuietly(ch);
            return false;
        }
    }

    private static ScheduledExecutorService alarms() {
        ScheduledExecutorService a = alarms;
        if (a == null) {
            synchronized (Turnstile.class) {
                a = alarms;
                if (a == null) {
                    ScheduledThreadPoolExecutor e = new ScheduledThreadPoolExecutor(1, r -> {
                        Thread t = new Thread(r, "agentx-lock-alarm");
                        t.setDaemon(true);
                        return t;
                    });
                    e.setRemoveOnCancelPolicy(true);
                    alarms = a = e;
                }
            }
        }
        return a;
    }

    private static FileChannel open(Path queue) throws IOException {
        try {
            return FileChannel.open(queue, StandardOpenOption.CREATE, StandardOpenOption.WRITE);
        } catch (java.nio.file.NoSuchFileException e) {
            Directories.ensure(queue.getParent());
            return FileChannel.open(queue, StandardOpenOption.CREATE, StandardOpenOption.WRITE);
        }
    }

    private static long left(long deadline) {
        return deadline - System.nanoTime();
    }

    /** The in-process turns of {@code key}, counting this thread as a user until it calls {@link #leave}. */
    private static Local join(Path key) {
        return LOCAL.compute(key, (k, v) -> {
            Local e = v == null ? new Local() : v;
            e.users++;
            return e;
        });
    }

    private static void leave(Path key) {
        LOCAL.computeIfPresent(key, (k, e) -> --e.users == 0 ? null : e);
    }

    private static void closeQuietly(FileChannel ch) {
        try {
            ch.close();
        } catch (IOException ignored) {
            // releasing is all that matters
        }
    }

    private static ClarifyException timeout(Path file, Duration budget, String why) {
        return new ClarifyException(ErrorCode.LOCK_TIMEOUT, "Failed to acquire lock for " + file.getFileName()
                + " within " + budget.toSeconds() + "s: " + why + ". Nothing was changed: retry shortly.");
    }
}
