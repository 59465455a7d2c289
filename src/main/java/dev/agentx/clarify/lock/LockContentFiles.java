package dev.agentx.clarify.lock;

import dev.agentx.clarify.files.Directories;
import dev.agentx.clarify.files.IoErrors;
import dev.agentx.clarify.files.RuntimeFolder;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.FileTime;
import java.util.Deque;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedDeque;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.LoggerFactory;

/**
 * How a lock file is made with its content in one step, and the content files a process keeps for
 * its next locks.
 *
 * <p>The content is written to a file of the state folder's runtime folder ({@code
 * <file>.lock.<token>}, see files/RuntimeFolder: the same file system), then hard-linked to the lock
 * path. link(2) fails if
 * the lock exists (the same exclusivity as O_CREAT|O_EXCL), and a lock so created is never seen
 * empty, even if its creator is killed half-way; a process killed between a plain create and its
 * write would leave an empty lock that could only be judged by its age. Where the file system has
 * no hard links, the lock is created with CREATE_NEW and written.
 *
 * <p>The content file keeps its name while the lock is held, and after the release (which unlinks
 * only the lock path) it is written again for the next lock of its state folder. So a long-lived
 * process (the server, an agent's MCP session) takes a lock without allocating an inode: on a file
 * system that allocates inodes slowly while many were freed recently (ext4 without a journal scans
 * past them), the inodes of the lock files were the larger part of a ledger write's cost
 * (bench/README.md). Nobody reads the content file while it is not linked as a lock, so writing it
 * again in place is safe. The spares are deleted when the process exits; one a killed process left
 * goes with the leftovers ({@link LeftoverSweep}).
 *
 * <p>A content file stays open while the process keeps it, and is written again with one pwrite:
 * the JSON is padded with spaces to the file's length (at least {@link #PADDED} bytes), so it is
 * never cut shorter. A lock's JSON may so end in spaces, which every JSON reader skips.
 */
final class LockContentFiles {
    private volatile boolean hardLinks = true;
    /**
     * Lock content files ({@code <name>.lock.<token>}) of released locks, per runtime folder,
     * written again and linked for the next lock of that state folder.
     */
    private final Map<Path, Deque<Content>> spare = new ConcurrentHashMap<>();
    /** The length a new content file is padded to: room for any of our locks' JSON (about 180 bytes). */
    static final int PADDED = 256;

    /**
     * A content file: its name in the runtime folder, the channel it is written through while the
     * process keeps it, and its length (its JSON padded with spaces).
     */
    static final class Content {
        final Path path;
        private final FileChannel channel;
        private long length;

        private Content(Path path, FileChannel channel, long length) {
            this.path = path;
            this.channel = channel;
            this.length = length;
        }

        /** A new content file at {@code path} holding {@code json}, padded. */
        static Content create(Path path, byte[] json) throws IOException {
            FileChannel ch = FileChannel.open(path, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE);
            Content c = new Content(path, ch, 0);
            try {
                c.write(json);
            } catch (IOException e) {
                c.discard();
                throw e;
            }
            return c;
        }

        /** Writes {@code json} from the start, padded with spaces to the file's length: never shorter. */
        void write(byte[] json) throws IOException {
            int len = (int) Math.max(json.length, Math.max(length, PADDED));
            ByteBuffer buf = ByteBuffer.allocate(len);
            buf.put(json);
            while (buf.hasRemaining()) {
                buf.put((byte) ' ');
            }
            buf.flip();
            long at = 0;
            while (buf.hasRemaining()) {
                at += channel.write(buf, at);
            }
            length = len;
        }

        /** Closes the file and deletes its name. */
        void discard() {
            try {
                channel.close();
            } catch (IOException ignored) {
                // the name goes below all the same
            }
            deleteQuietly(path);
        }
    }
    private final AtomicBoolean cleanupRegistered = new AtomicBoolean();

    /**
     * Whether {@link #tryCreate} took the lock, the content file linked as it and the lock file as
     * it was made; both null without hard links.
     */
    record Created(boolean held, Content content, Made made) {
        static final Created TAKEN = new Created(false, null, null);
    }

    /**
     * A lock file as its holder made it: the file (device and inode: a name of the holder's content
     * file, which nobody else links), its size and its time. A take-over renames the name away and
     * makes a file of its own, and a tool that knows only the lock file deletes it and creates
     * another: either way the name then has another file. Comparing this with one look at the
     * lock's name tells the holder that the lock is still its own, without reading it.
     */
    record Made(Object key, long size, FileTime modified) {
        /** The lock file at {@code lockPath} as it is now; null if there is none, or the file system gives files no key. */
        static Made of(Path lockPath) throws IOException {
            try {
                BasicFileAttributes a = Files.readAttributes(lockPath, BasicFileAttributes.class,
                        LinkOption.NOFOLLOW_LINKS);
                return a.fileKey() == null ? null : new Made(a.fileKey(), a.size(), a.lastModifiedTime());
            } catch (NoSuchFileException e) {
                return null;
            }
        }
    }

    /**
     * Creates the lock file {@code lockPath} holding {@code info}, if there is none, its content
     * file in {@code runtime} (see the class comment).
     */
    Created tryCreate(Path lockPath, Path runtime, LockInfo info) {
        byte[] bytes = info.toJson();
        Path dir = lockPath.getParent();
        for (int attempt = 1; hardLinks; attempt++) {
            Content content = null;
            try {
                content = reuseSpare(runtime, bytes);
                if (content == null) {
                    content = Content.create(runtime.resolve(lockPath.getFileName() + "." + info.token()), bytes);
                }
                Files.createLink(lockPath, content.path);
                return new Created(true, content, Made.of(lockPath));
            } catch (FileAlreadyExistsException e) {
                keepSpare(content);
                return Created.TAKEN;
            } catch (NoSuchFileException e) {
                // the lock's folder is missing (looked at only now: it nearly always exists), or a
                // sweep of leftovers removed the content file, or the runtime folder went away
                if (attempt >= 3) {
                    discardQuietly(content);
                    throw new UncheckedIOException("cannot create lock " + lockPath + ": " + IoErrors.why(e), e);
                }
                try {
                    if (!Files.isDirectory(dir)) {
                        Directories.ensure(dir);
                        keepSpare(content);
                    } else {
                        discardQuietly(content);
                        Directories.ensure(runtime);
                    }
                } catch (IOException again) {
                    discardQuietly(content);
                    throw new UncheckedIOException("cannot create lock " + lockPath + ": " + IoErrors.why(again), again);
                }
            } catch (UnsupportedOperationException | IOException e) {
                discardQuietly(content);
                hardLinks = false; // e.g. a file system without hard links: fall back to CREATE_NEW
                LoggerFactory.getLogger(FileLock.class).debug("hard links unavailable in {} ({}); creating locks with "
                        + "CREATE_NEW", dir, e.toString());
            }
        }
        try {
            Directories.ensure(dir);
            writeNew(lockPath, bytes);
            return new Created(true, null, null);
        } catch (FileAlreadyExistsException e) {
            return Created.TAKEN;
        } catch (IOException e) {
            throw new UncheckedIOException("cannot create lock " + lockPath + ": " + IoErrors.why(e), e);
        }
    }

    /**
     * After a release: the content file is kept for the next lock if the lock file is gone ({@code
     * removed}), so that it is linked nowhere; else (the lock was taken over) it is given up.
     */
    void released(Content content, boolean removed) {
        if (content == null) {
            return;
        }
        if (removed) {
            keepSpare(content);
        } else {
            content.discard();
        }
    }

    /**
     * A spare content file of {@code runtime} written with {@code bytes}; null if there is none.
     * One swept as a leftover meanwhile is written all the same (its file has no name left): the
     * link then fails, and a new one is made.
     */
    private Content reuseSpare(Path runtime, byte[] bytes) {
        Deque<Content> kept = spare.get(runtime);
        for (Content c = kept == null ? null : kept.pollFirst(); c != null; c = kept.pollFirst()) {
            try {
                c.write(bytes);
                return c;
            } catch (IOException e) {
                c.discard(); // unwritable: not reused
            }
        }
        return null;
    }

    /** Keeps a lock content file for the next lock of its state folder; all are deleted when the process exits. */
    private void keepSpare(Content content) {
        if (content == null) {
            return;
        }
        if (cleanupRegistered.compareAndSet(false, true)) {
            RuntimeFolder.onLeaving(cleanup);
        }
        spare.computeIfAbsent(content.path.getParent(), d -> new ConcurrentLinkedDeque<>()).offerFirst(content);
    }

    /** {@link #deleteSpares}, run when the process leaves its runtime folders. */
    private final Runnable cleanup = new Runnable() {
        @Override
        public void run() {
            deleteSpares();
        }
    };

    /**
     * Deletes the spare content files now and forgets the task that would at exit: for a lock
     * manager that a command of a long-lived process (the CLI's daemon) is done with.
     */
    void close() {
        deleteSpares();
        if (cleanupRegistered.compareAndSet(true, false)) {
            RuntimeFolder.cancel(cleanup);
        }
    }

    /** Deletes the spare content files (at exit; one a process killed leaves is swept as a leftover). */
    void deleteSpares() {
        for (Deque<Content> kept : spare.values()) {
            for (Content c = kept.pollFirst(); c != null; c = kept.pollFirst()) {
                c.discard();
            }
        }
    }

    private static void discardQuietly(Content c) {
        if (c != null) {
            c.discard();
        }
    }

    private static void deleteQuietly(Path p) {
        if (p == null) {
            return;
        }
        try {
            Files.deleteIfExists(p);
        } catch (IOException ignored) {
            // a leftover of a few bytes in the runtime folder; harmless, and swept with the others
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
}
