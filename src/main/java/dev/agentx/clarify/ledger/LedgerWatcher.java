package dev.agentx.clarify.ledger;

import dev.agentx.clarify.files.IoErrors;
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
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.FileTime;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.IntConsumer;
import java.util.function.Supplier;
import java.util.stream.Stream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Learns that a ledger changed from the operating system's file notifications (inotify on Linux)
 * on the ledger folder, so that a waiting ask holds no lock and costs no CPU: its thread sleeps
 * until the ledger it waits on is renamed into place by whichever process answered. A ledger is
 * always written by renaming a finished file over it, so a change is seen as that name being
 * created or modified; anything else in the folder (lock files, other writers' temporary files)
 * is ignored.
 *
 * <p>A new ledger ({@code issue-N.json} appearing in the folder) is a change like any other. The
 * watcher also keeps each ledger's signature (size, time, file key), so that whenever notifications
 * may have been lost it finds what changed by looking at the folder once, and reports exactly
 * those ledgers (the new ones among them):
 * <ul>
 *   <li>the notification queue overflowed;</li>
 *   <li>the folder was removed (its watch ends): its nearest ancestor is watched until the next
 *   writer makes it again, and the new folder is watched from then on;</li>
 *   <li>the folder was replaced (moved away and made again: the old watch follows the old folder),
 *   which a look at the folder's own file key every {@code recheck} notices;</li>
 *   <li>the folder's time moved on over a {@code recheck} in which no notification arrived at all
 *   (a network file system written from another host).</li>
 * </ul>
 * So a quiet folder costs one look at the folder itself every {@code recheck}, whatever the number
 * of ledgers, and the ledgers are listed only when one of the above happened. Where notifications
 * do not arrive, waiters also look again every {@code recheck}, and an overflow of the
 * notification queue wakes every waiter.
 */
public final class LedgerWatcher implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(LedgerWatcher.class);
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
    /** The watch of the folder, null while it cannot be watched; the watcher's thread only (after the constructor). */
    private WatchKey key;
    /** While the folder is missing: the watch of its nearest ancestor there is, for the folder to come back. */
    private WatchKey ancestorKey;
    /** The folder's file key and time when it was last looked at: a different key is another folder. */
    private Object folderKey;
    private FileTime folderModified;
    /** Whether any notification arrived since the last look at the folder. */
    private boolean notified;
    /** Each ledger's signature as last seen, by issue; the watcher's thread only. */
    private Map<Integer, ActiveLedgerIndex.Signature> seen = new HashMap<>();
    private boolean unwatchedLogged;
    /** Whether the folder itself was watched when the constructor returned (it existed). */
    private final boolean watchedFromStart;
    /** Runs between finding the nearest ancestor and watching it: the tests' way into that moment. */
    private final Runnable beforeAncestorWatch;

    /**
     * Watches {@code directory} from a daemon thread until {@link #close()}. A folder that does not
     * exist yet is not made (a folder with no project stays one: the CLI looks upward for
     * {@code .agentx/}); its nearest ancestor is watched until whoever writes the first ledger makes it.
     */
    public LedgerWatcher(Path directory, Duration recheck) {
        this(directory, recheck, () -> { });
    }

    LedgerWatcher(Path directory, Duration recheck, Runnable beforeAncestorWatch) {
        this.directory = directory;
        this.recheck = recheck;
        this.beforeAncestorWatch = beforeAncestorWatch;
        try {
            this.watch = FileSystems.getDefault().newWatchService();
            watchFolder();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot watch " + directory + ": " + IoErrors.why(e), e);
        }
        this.watchedFromStart = key != null;
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
            // the ledgers there were when the watch began, listed here (off the caller's thread, so that
            // a session's start does not wait for it): a ledger written from then on is in this list
            // and notified too, so none is missed. A folder missing at the start has none: every
            // ledger found in it later is new, also one written before this thread first ran.
            seen = watchedFromStart ? scan() : new HashMap<>();
            while (true) {
                WatchKey k = watch.poll(recheck.toNanos(), TimeUnit.NANOSECONDS);
                List<Integer> changed = new ArrayList<>();
                boolean overflow = false;
                if (k == null) {
                    lookAtFolder(changed);
                } else {
                    if (k == ancestorKey) {
                        k.pollEvents();
                        k.reset();
                        lookAtFolder(changed); // the folder, or an ancestor of it, may be back
                        publish(changed, false);
                        continue;
                    }
                    notified = true;
                    List<Integer> named = new ArrayList<>();
                    for (WatchEvent<?> event : k.pollEvents()) {
                        if (event.kind() == StandardWatchEventKinds.OVERFLOW) {
                            overflow = true;
                            continue;
                        }
                        ledgerOf(String.valueOf(event.context())).ifPresent(issue -> {
                            if (!named.contains(issue)) {
                                named.add(issue);
                            }
                        });
                    }
                    boolean valid = k.reset();
                    if (k != key) {
                        k.cancel();
                        continue; // the watch of a folder replaced since: its events are not this folder's
                    }
                    for (int issue : named) {
                        ActiveLedgerIndex.Signature now = signatureOf(issue);
                        if (now == null) {
                            seen.remove(issue);
                        } else {
                            seen.put(issue, now);
                        }
                        add(changed, issue);
                    }
                    if (!valid) {
                        // the folder was removed: whoever writes a ledger next makes it again; until
                        // then its nearest ancestor is watched for it to come back
                        LOG.info("{} was removed; watching for it to come back", directory);
                        key = null;
                        lookAtFolder(changed);
                    } else if (overflow) {
                        LOG.debug("{}: notifications were lost; looking at every ledger", directory);
                        rescan(changed);
                    }
                }
                publish(changed, overflow);
            }
        } catch (InterruptedException | ClosedWatchServiceException e) {
            // closed
        } catch (RuntimeException e) {
            LOG.warn("ledger watch stopped: {}", e.toString(), e);
        }
    }

    /**
     * A look at the folder itself: if it is another folder than the one watched (or none is), the
     * new one is watched and its ledgers compared with those seen; if its time moved on while no
     * notification arrived, its ledgers are compared too.
     */
    private void lookAtFolder(List<Integer> changed) {
        BasicFileAttributes a;
        try {
            a = Files.readAttributes(directory, BasicFileAttributes.class);
        } catch (IOException e) {
            a = null; // removed: made again below
        }
        if (key == null || a == null || !Objects.equals(a.fileKey(), folderKey)) {
            try {
                watchFolder();
                unwatchedLogged = false;
            } catch (IOException e) {
                if (!unwatchedLogged) {
                    LOG.warn("cannot watch {} ({}); trying again every {} s, and waits look every {} s", directory,
                            e.toString(), recheck.toSeconds(), recheck.toSeconds());
                    unwatchedLogged = true;
                }
            }
            rescan(changed); // none if the folder is missing: the ledgers seen are gone
        } else if (!notified && !Objects.equals(a.lastModifiedTime(), folderModified)) {
            folderModified = a.lastModifiedTime();
            rescan(changed);
        } else {
            folderModified = a.lastModifiedTime();
        }
        notified = false;
    }

    /**
     * Watches the folder of that name now, ending the watch of the one before. While there is none,
     * its nearest ancestor there is is watched instead, so that the watcher hears when it is made
     * again (by whoever writes a ledger next: the watcher makes no folder of a project removed).
     */
    private void watchFolder() throws IOException {
        while (true) {
            if (Files.isDirectory(directory)) {
                WatchKey old = key;
                key = directory.register(watch, StandardWatchEventKinds.ENTRY_CREATE,
                        StandardWatchEventKinds.ENTRY_MODIFY);
                if (old != null && old != key) {
                    old.cancel();
                }
                if (ancestorKey != null) {
                    ancestorKey.cancel();
                    ancestorKey = null;
                }
                BasicFileAttributes a = Files.readAttributes(directory, BasicFileAttributes.class);
                folderKey = a.fileKey();
                folderModified = a.lastModifiedTime();
                return;
            }
            if (key != null) {
                key.cancel();
                key = null;
            }
            folderKey = null;
            folderModified = null;
            Path ancestor = nearestAncestor();
            if (ancestor == null) {
                return;
            }
            beforeAncestorWatch.run();
            WatchKey k = ancestor.register(watch, StandardWatchEventKinds.ENTRY_CREATE);
            if (ancestorKey != null && ancestorKey != k) {
                ancestorKey.cancel();
            }
            ancestorKey = k;
            // a watch hears only what is made in it from when it began: if the folder, or the next
            // level down to it, was made meanwhile (a writer making the folders), nothing would
            // tell of it or of what is made below it, so the loop looks again and watches deeper
            if (!Files.isDirectory(directory) && ancestor.equals(nearestAncestor())) {
                return;
            }
        }
    }

    /** The nearest ancestor of the folder that exists, or null if none does. */
    private Path nearestAncestor() {
        Path ancestor = directory.toAbsolutePath().getParent();
        while (ancestor != null && !Files.isDirectory(ancestor)) {
            ancestor = ancestor.getParent();
        }
        return ancestor;
    }

    /** Compares the folder's ledgers with those seen: each new, changed or removed one goes to {@code changed}. */
    private void rescan(List<Integer> changed) {
        Map<Integer, ActiveLedgerIndex.Signature> now = scan();
        for (Map.Entry<Integer, ActiveLedgerIndex.Signature> e : now.entrySet()) {
            if (!e.getValue().equals(seen.get(e.getKey()))) {
                add(changed, e.getKey());
            }
        }
        for (Integer issue : seen.keySet()) {
            if (!now.containsKey(issue)) {
                add(changed, issue);
            }
        }
        seen = now;
    }

    /** Every ledger of the folder with its signature (none if the folder cannot be listed). */
    private Map<Integer, ActiveLedgerIndex.Signature> scan() {
        Map<Integer, ActiveLedgerIndex.Signature> out = new HashMap<>();
        try (Stream<Path> files = Files.list(directory)) {
            files.forEach(p -> ledgerOf(p.getFileName().toString()).ifPresent(issue -> {
                ActiveLedgerIndex.Signature s = signatureOf(issue);
                if (s != null) {
                    out.put(issue, s);
                }
            }));
        } catch (IOException | UncheckedIOException e) {
            LOG.debug("cannot list {}: {}", directory, e.toString());
        }
        return out;
    }

    /** The ledger's signature, or null if it has no file. */
    private ActiveLedgerIndex.Signature signatureOf(int issue) {
        try {
            return ActiveLedgerIndex.Signature.of(Files.readAttributes(directory.resolve("issue-" + issue + ".json"),
                    BasicFileAttributes.class));
        } catch (IOException e) {
            return null;
        }
    }

    /** The issue of a ledger's file name: {@code issue-N.json} exactly, as the store names it; nothing else. */
    private static java.util.OptionalInt ledgerOf(String fileName) {
        java.util.OptionalInt issue = FileLedgerStore.issueOf(fileName);
        return issue.isPresent() && fileName.equals("issue-" + issue.getAsInt() + ".json") ? issue
                : java.util.OptionalInt.empty();
    }

    private static void add(List<Integer> changed, int issue) {
        if (!changed.contains(issue)) {
            changed.add(issue);
        }
    }

    /** Counts the changes (waking the waiters) and tells the listeners. */
    private void publish(List<Integer> changed, boolean overflow) {
        if (changed.isEmpty() && !overflow) {
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
