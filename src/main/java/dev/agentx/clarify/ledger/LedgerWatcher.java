package dev.agentx.clarify.ledger;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.ClosedWatchServiceException;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardWatchEventKinds;
import java.nio.file.WatchEvent;
import java.nio.file.WatchKey;
import java.nio.file.WatchService;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.BooleanSupplier;
import java.util.function.IntConsumer;
import java.util.function.Supplier;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Learns that a ledger changed from the operating system's file notifications (inotify on Linux)
 * on the ledger folder, so that a waiting ask holds no lock and costs no CPU: its thread sleeps
 * until the ledger it waits on is renamed into place by whichever process answered. A ledger is
 * always written by renaming a finished file over it, so a change is seen as that name being
 * created or modified; the writers' temporary files are ignored.
 *
 * <p>Where notifications do not arrive (a network file system changed from another host), waiters
 * still look again every {@code recheck}, and an overflow of the notification queue wakes every
 * waiter.
 */
public final class LedgerWatcher implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(LedgerWatcher.class);
    private static final Pattern LEDGER = Pattern.compile("issue-([1-9][0-9]{0,8})\\.json");

    private final Path directory;
    private final Duration recheck;
    private final WatchService watch;
    private final Thread thread;
    private final Object signal = new Object();
    /** Changes seen per issue; guarded by {@link #signal}. */
    private final Map<Integer, Long> changes = new HashMap<>();
    /** Overflows seen: each counts as a change of every issue; guarded by {@link #signal}. */
    private long overflows;
    private final List<IntConsumer> listeners = new CopyOnWriteArrayList<>();
    private final List<Runnable> overflowListeners = new CopyOnWriteArrayList<>();

    /** Watches {@code directory} (created if missing) from a daemon thread until {@link #close()}. */
    public LedgerWatcher(Path directory, Duration recheck) {
        this.directory = directory;
        this.recheck = recheck;
        try {
            Files.createDirectories(directory);
            this.watch = FileSystems.getDefault().newWatchService();
            directory.register(watch, StandardWatchEventKinds.ENTRY_CREATE, StandardWatchEventKinds.ENTRY_MODIFY);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot watch " + directory + ": " + e.getMessage(), e);
        }
        this.thread = new Thread(this::loop, "agentx-ledger-watch");
        thread.setDaemon(true);
        thread.start();
    }

    /** Called with the issue number, on the watcher's thread, after each change of a ledger. */
    public void onChange(IntConsumer listener) {
        listeners.add(listener);
    }

    /** Called when notifications were lost: any ledger may have changed. */
    public void onOverflow(Runnable listener) {
        overflowListeners.add(listener);
    }

    /**
     * Checks {@code check} now and again after each change of the issue's ledger, until it gives a
     * value or {@code timeout} has passed (then empty). The waiting thread sleeps in between.
     */
    public <T> Optional<T> await(int issue, Duration timeout, Supplier<Optional<T>> check) throws InterruptedException {
        return await(issue, timeout, check, () -> false);
    }

    /**
     * As {@link #await(int, Duration, Supplier)}, and ends early (empty) once {@code ended} is true;
     * it is looked at before each sleep and whenever {@link #wake()} is called.
     */
    public <T> Optional<T> await(int issue, Duration timeout, Supplier<Optional<T>> check, BooleanSupplier ended)
            throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (true) {
            long seen = version(issue);
            Optional<T> result = check.get();
            if (result.isPresent()) {
                return result;
            }
            long left = deadline - System.nanoTime();
            if (left <= 0 || ended.getAsBoolean()) {
                return Optional.empty();
            }
            long sleep = Math.min(left, recheck.toNanos());
            synchronized (signal) {
                long until = System.nanoTime() + sleep;
                while (version(issue) == seen && !ended.getAsBoolean()) {
                    long rest = until - System.nanoTime();
                    if (rest <= 0) {
                        break;
                    }
                    signal.wait(Math.max(1, rest / 1_000_000), 0);
                }
            }
        }
    }

    /** Wakes every waiting {@link #await}, which then looks at its {@code ended} condition. */
    public void wake() {
        synchronized (signal) {
            signal.notifyAll();
        }
    }

    private long version(int issue) {
        synchronized (signal) {
            return changes.getOrDefault(issue, 0L) + overflows;
        }
    }

    private void loop() {
        try {
            while (true) {
                WatchKey key = watch.take();
                boolean overflow = false;
                List<Integer> changed = new java.util.ArrayList<>();
                for (WatchEvent<?> event : key.pollEvents()) {
                    if (event.kind() == StandardWatchEventKinds.OVERFLOW) {
                        overflow = true;
                        continue;
                    }
                    Matcher m = LEDGER.matcher(String.valueOf(event.context()));
                    if (m.matches()) {
                        int issue = Integer.parseInt(m.group(1));
                        if (!changed.contains(issue)) {
                            changed.add(issue);
                        }
                    }
                }
                if (!key.reset()) {
                    LOG.warn("{} can no longer be watched (removed?); waits fall back to looking every {} s",
                            directory, recheck.toSeconds());
                    return;
                }
                synchronized (signal) {
                    if (overflow) {
                        overflows++;
                    }
                    for (int issue : changed) {
                        changes.merge(issue, 1L, Long::sum);
                    }
                    signal.notifyAll();
                }
                if (overflow) {
                    for (Runnable l : overflowListeners) {
                        notify(l::run);
                    }
                }
                for (int issue : changed) {
                    for (IntConsumer l : listeners) {
                        notify(() -> l.accept(issue));
                    }
                }
            }
        } catch (InterruptedException | ClosedWatchServiceException e) {
            // closed
        } catch (RuntimeException e) {
            LOG.warn("ledger watch stopped: {}", e.toString(), e);
        }
    }

    /** A listener that fails is logged; the watch goes on. */
    private static void notify(Runnable call) {
        try {
            call.run();
        } catch (RuntimeException e) {
            LOG.warn("ledger change listener failed: {}", e.toString(), e);
        }
    }

    @Override
    public void close() {
        try {
            watch.close();
        } catch (IOException e) {
            LOG.debug("closing the watch service", e);
        }
        thread.interrupt();
    }
}
