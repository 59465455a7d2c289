package dev.agentx.clarify.files;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.file.DirectoryNotEmptyException;
import java.nio.file.DirectoryStream;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.LoggerFactory;

/**
 * {@code <state>/.runtime/}: the one hidden folder of a state folder where our processes keep what
 * the lock and status machinery shares between them while they run. The files beside it are the
 * state (docs/protocol.md lists them); nothing in here is, and the folder goes when the last
 * process that used it ends. Its names are not hidden: the folder is.
 * <ul>
 *   <li>{@code in-use}: every process that uses the folder holds a shared OS advisory lock on it
 *   (see below);</li>
 *   <li>{@code <file>.queue} and {@code <file>.guard}: the OS locks our processes queue and take
 *   over a lock under (lock/Turnstile, lock/StaleLockTakeOver);</li>
 *   <li>{@code <file>.lock.<token>}: lock content files, hard-linked as {@code <file>.lock}
 *   (lock/LockContentFiles), and {@code <file>.lock.stale-<uuid>}, a stale lock being removed;</li>
 *   <li>{@code <file>.tmp-<hex>}: a file being written, renamed over it when done
 *   ({@link AtomicFiles#prepare(Path, Path, byte[], boolean)});</li>
 *   <li>{@code agent-status.json.spare.K}: inodes the status file replaced, reused by later writes
 *   ({@link RecycledFile});</li>
 *   <li>{@code agent-status.pending/}: status mirrors left for the status file's lock holder;</li>
 *   <li>{@code mark}: the empty file the ledger folder's marks are hard links of ({@link MarkFiles});</li>
 *   <li>{@code changes/}: ledger changes waiting for an issue's lock (group commit).</li>
 * </ul>
 *
 * <p>The lock protocol links and renames these files into the state folder and back: they are made
 * in the same file system as the files they become, which a folder inside the state folder is.
 * A durable write fsyncs the folder its file ends up in, not this one. Clearing the folder removes
 * names in it only: a lock or a status file linked from here keeps its own name.
 *
 * <p>Who is last: a process enters the folder ({@link #enter}) before it makes anything in it,
 * taking a shared OS lock on {@code in-use} that it holds until it exits. Leaving, it lets go and
 * tries for the exclusive lock: the process that gets it, and finds that the file it locked is
 * still {@code in-use}, is the last one out, and clears the folder (status mirrors still waiting
 * for a holder excepted: the next process applies them), then removes {@code in-use} and the
 * folder. A process that arrives meanwhile waits for its shared lock until the clearing is done,
 * finds that the file it locked is no longer {@code in-use} (the JVM tells whether two channels
 * are of one file: {@link #sameFileAt}), and makes the folder again; one whose folder is removed
 * between making it and opening {@code in-use} makes it again too. Only the holder of a file's
 * exclusive lock removes it, and only while the file is {@code in-use}, so a file found to be
 * {@code in-use} while its shared lock is held stays so. The exclusive lock alone does not make a
 * process last: between letting go and locking it is not in, so another may leave last meanwhile
 * and remove the file, and others enter a new one; its lock is then on a removed file, and the
 * folder is theirs. The kernel drops a killed process's lock, so the next process that leaves
 * last sweeps what a killed one left, a last one out killed half-way included.
 * Across hosts on a shared file system this counts only the processes of hosts whose OS locks the
 * file system passes between them, as the lock's queue does.
 */
public final class RuntimeFolder {
    /** The folder's name in the state folder. */
    public static final String NAME = ".runtime";
    /** The folder of status mirrors left for the status file's lock holder: kept when the folder is cleared. */
    public static final String PENDING_STATUSES = "agent-status.pending";
    /** The folder of ledger changes waiting for an issue's lock. */
    public static final String CHANGES = "changes";
    /** The ledgers' folder in a state folder: its files' runtime folder is the state folder's. */
    private static final String LEDGERS = "clarifications";
    private static final String IN_USE = "in-use";
    /** How often entering goes again after finding the folder cleared under it before it gives up. */
    private static final int ENTRIES = 1000;

    /**
     * This process's hold on a folder: the channel of its {@code in-use}, the shared lock on it (null
     * if the process holds that lock through the folder's other name), and a second channel of the
     * file, which told that it is still the file of that name (see {@link #sameFileAt}).
     */
    private record Presence(FileChannel channel, FileLock shared, FileChannel probe) {
    }

    private static final Map<Path, Presence> PRESENT = new ConcurrentHashMap<>();
    /** How often {@link #join} found the folder cleared under it and went again (for tests). */
    private static final AtomicInteger ENTERED_AGAIN = new AtomicInteger();
    private static final List<Runnable> AT_EXIT = new ArrayList<>();
    private static final List<Runnable> ON_LEAVING = new ArrayList<>();
    private static boolean hooked;

    private RuntimeFolder() {
    }

    /** The runtime folder of the state folder {@code stateDir}. A path only: nothing is made. */
    public static Path in(Path stateDir) {
        return stateDir.resolve(NAME);
    }

    /**
     * The runtime folder of the state folder that holds {@code file}: its own folder's, or for a
     * ledger (a file of {@code clarifications/}) the folder above's. A path only: nothing is made.
     */
    public static Path of(Path file) {
        Path dir = file.toAbsolutePath().getParent();
        Path name = dir.getFileName();
        if (name != null && name.toString().equals(LEDGERS) && dir.getParent() != null) {
            dir = dir.getParent();
        }
        return dir.resolve(NAME);
    }

    /**
     * Enters {@code folder} (a runtime folder) for this process, making it if it is missing, and
     * returns it: call before making anything in it. The process stays in it until it exits
     * ({@link #leave}); entering again costs a look-up.
     */
    public static Path enter(Path folder) {
        Path key = folder.toAbsolutePath().normalize();
        if (PRESENT.containsKey(key)) {
            return folder;
        }
        synchronized (RuntimeFolder.class) {
            if (!PRESENT.containsKey(key)) {
                hook();
                try {
                    PRESENT.put(key, join(key));
                } catch (IOException e) {
                    throw new java.io.UncheckedIOException("cannot use " + key + ": " + IoErrors.why(e), e);
                }
            }
        }
        return folder;
    }

    /**
     * Runs {@code task} when the JVM exits, before the process leaves its runtime folders: what
     * still writes state at exit (the status writer, a server's workers) registers here, so that
     * the last process out clears the folder after it. Tasks run one after another, in the order
     * they were registered.
     */
    public static void atExit(Runnable task) {
        synchronized (RuntimeFolder.class) {
            hook();
            AT_EXIT.add(task);
        }
    }

    /**
     * Runs {@code cleanup} when the JVM exits, after every {@link #atExit} task and before the
     * process leaves its runtime folders: for what a process keeps there for itself (the content
     * files of its next locks), which it removes whether or not it is the last one out.
     */
    public static void onLeaving(Runnable cleanup) {
        synchronized (RuntimeFolder.class) {
            hook();
            ON_LEAVING.add(cleanup);
        }
    }

    /** Forgets a {@link #onLeaving} task that its owner ran itself (a command in a long-lived process, at its end). */
    public static void cancel(Runnable cleanup) {
        synchronized (RuntimeFolder.class) {
            ON_LEAVING.remove(cleanup);
        }
    }

    /**
     * Leaves every folder this process entered, as it does when it exits: for a process that runs
     * one command after another (the CLI's daemon) while none runs, so that it is in a folder only
     * while it works in it, as a process of its own would be. The next use enters again.
     */
    public static void leaveAll() {
        for (Path folder : new ArrayList<>(PRESENT.keySet())) {
            leave(folder);
        }
    }

    /** Registers the one shutdown hook: it runs the tasks and leaves the folders. Call holding the class's monitor. */
    private static void hook() {
        if (!hooked) {
            hooked = true;
            // a class rather than a method reference: its bootstrap would cost every CLI start
            try {
                Runtime.getRuntime().addShutdownHook(new Thread(new Runnable() {
                    @Override
                    public void run() {
                        exit();
                    }
                }, "agentx-runtime-folder"));
            } catch (IllegalStateException e) {
                // first used while the JVM exits: what it leaves goes with the next last process out
            }
        }
    }

    /**
     * Leaves {@code folder}: the last process out clears and removes it (see the class comment).
     * Call only when no thread of this process uses it; the process does it for every folder it
     * entered when it exits.
     */
    public static void leave(Path folder) {
        Path key = folder.toAbsolutePath().normalize();
        Presence p;
        synchronized (RuntimeFolder.class) {
            p = PRESENT.remove(key);
        }
        if (p == null || p.shared() == null) {
            return; // entered under another name as well: left under that one
        }
        try (FileChannel ch = p.channel(); FileChannel probe = p.probe()) {
            p.shared().release();
            FileLock alone = ch.tryLock();
            if (alone == null) {
                return; // others are in
            }
            // Between letting go and the exclusive lock, another process may have been last out
            // and removed this in-use, and others entered a new one: the lock is then on a
            // removed file, and says nothing of who is in now. Last only if it is still in-use.
            try (FileChannel still = sameFileAt(key.resolve(IN_USE))) {
                if (still == null) {
                    return; // cleared by another last one out; the folder is theirs now
                }
                clear(key);
                Files.delete(key.resolve(IN_USE)); // closing still lets go of the lock: removed first
            }
            try {
                Files.delete(key);
            } catch (DirectoryNotEmptyException | NoSuchFileException e) {
                // status mirrors kept, or a process that came meanwhile made its in-use: theirs now
            }
        } catch (IOException | OverlappingFileLockException e) {
            LoggerFactory.getLogger(RuntimeFolder.class).debug("could not clear {}: {}", key, e.toString());
        }
    }

    /** How often this process found a folder it entered cleared under it, and made it again (for tests). */
    static int enteredAgain() {
        return ENTERED_AGAIN.get();
    }

    private static void exit() {
        List<Runnable> tasks;
        synchronized (RuntimeFolder.class) {
            tasks = new ArrayList<>(AT_EXIT);
            tasks.addAll(ON_LEAVING);
        }
        for (Runnable t : tasks) {
            try {
                t.run();
            } catch (RuntimeException e) {
                LoggerFactory.getLogger(RuntimeFolder.class).warn("at exit: {}", e.toString());
            }
        }
        leaveAll();
    }

    /** Takes the shared lock on {@code folder}'s {@code in-use}, making both if missing (see the class comment). */
    private static Presence join(Path folder) throws IOException {
        Path inUse = folder.resolve(IN_USE);
        for (int attempt = 1; ; attempt++) {
            if (attempt > ENTRIES) {
                throw new IOException(folder + " was cleared each of the " + ENTRIES
                        + " times this process entered it");
            }
            FileChannel ch;
            try {
                Directories.ensure(folder);
                ch = FileChannel.open(inUse, StandardOpenOption.CREATE, StandardOpenOption.READ,
                        StandardOpenOption.WRITE);
            } catch (NoSuchFileException | FileAlreadyExistsException e) {
                // the last process out removed the folder after it was made here (FileAlreadyExists:
                // the JDK's mkdir found it, and it was gone when the JDK looked again): again
                ENTERED_AGAIN.incrementAndGet();
                continue;
            }
            try {
                FileLock shared;
                try {
                    shared = lockShared(ch);
                } catch (OverlappingFileLockException e) {
                    // this process holds it already, by another name (the folder moved, or reached
                    // through a link): in it. The channel stays open: closing it would let go of the
                    // lock taken through the other
                    return new Presence(ch, null, null);
                }
                FileChannel probe = sameFileAt(inUse);
                if (probe != null) {
                    return new Presence(ch, shared, probe);
                }
            } catch (IOException | RuntimeException e) {
                ch.close();
                throw e;
            }
            ch.close(); // removed by the last process out while we waited for the lock: again
            ENTERED_AGAIN.incrementAndGet();
        }
    }

    /**
     * The file at {@code path}, opened, if it is the one this process holds an OS lock on through
     * another channel; null if it is another file, or there is none. The JVM tells: a lock on the
     * same file through a second channel overlaps the one it holds, whatever the file's name. The
     * caller keeps the channel open while it holds that lock: closing any channel of a file lets
     * go of the process's OS locks on it.
     */
    private static FileChannel sameFileAt(Path path) throws IOException {
        FileChannel probe;
        try {
            probe = FileChannel.open(path, StandardOpenOption.READ);
        } catch (NoSuchFileException e) {
            return null;
        }
        try {
            FileLock other = probe.tryLock(0, Long.MAX_VALUE, true);
            if (other != null) {
                other.release();
            }
        } catch (OverlappingFileLockException e) {
            return probe;
        } catch (IOException | RuntimeException e) {
            probe.close();
            throw e;
        }
        probe.close(); // another file: closing it lets go of nothing of ours
        return null;
    }

    /**
     * The shared lock, waiting while the last process out clears the folder (moments); polled where
     * the kernel refuses the wait as a deadlock (a process's OS locks count as one owner's).
     */
    private static FileLock lockShared(FileChannel ch) throws IOException {
        try {
            return ch.lock(0, Long.MAX_VALUE, true);
        } catch (IOException e) {
            if (!ch.isOpen()) {
                throw e;
            }
        }
        while (true) {
            FileLock held = ch.tryLock(0, Long.MAX_VALUE, true);
            if (held != null) {
                return held;
            }
            try {
                Thread.sleep(1 + ThreadLocalRandom.current().nextInt(2));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IOException("interrupted while entering " + ch, e);
            }
        }
    }

    /** Removes everything in {@code folder} but {@code in-use} and the status mirrors left: nobody else uses it. */
    private static void clear(Path folder) throws IOException {
        try (DirectoryStream<Path> all = Files.newDirectoryStream(folder)) {
            for (Path p : all) {
                String name = p.getFileName().toString();
                if (name.equals(IN_USE)) {
                    continue;
                }
                if (Files.isDirectory(p)) {
                    if (!name.equals(PENDING_STATUSES)) {
                        try (DirectoryStream<Path> inner = Files.newDirectoryStream(p)) {
                            for (Path q : inner) {
                                Files.deleteIfExists(q);
                            }
                        }
                    }
                    try {
                        Files.deleteIfExists(p);
                    } catch (DirectoryNotEmptyException e) {
                        // status mirrors no holder applied yet: the next process to take the lock does
                    }
                } else {
                    Files.deleteIfExists(p);
                }
            }
        }
    }
}
