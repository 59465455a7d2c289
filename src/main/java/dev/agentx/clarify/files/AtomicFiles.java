package dev.agentx.clarify.files;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Durable replacement of a file: write a temp file beside it, fsync it, rename it over the
 * target atomically, then fsync the directory so the rename itself survives a crash. A reader
 * sees either the old or the new content, never a torn file. A state folder's files are written
 * through its runtime folder instead ({@link RuntimeFolder}): the temp file is made there, in the
 * same file system, and renamed into the target's folder, which is the one fsynced.
 */
public final class AtomicFiles {
    private AtomicFiles() {
    }

    /** Writes {@code target} whole: a temp file, fsynced, renamed over it, the directory fsynced. */
    public static void write(Path target, byte[] content) {
        commit(prepare(target, content), target);
    }

    /**
     * As {@link #write(Path, byte[])}, the temp file made in {@code tempDir} (see {@link
     * #prepare(Path, Path, byte[], boolean)}).
     */
    public static void write(Path target, Path tempDir, byte[] content) {
        commit(prepare(target, tempDir, content, true), target);
    }

    /**
     * The first half of {@link #write}: {@code content} in a hidden temp file beside {@code target},
     * fsynced; {@link #commit} publishes it. Lets a caller check, right before the rename, that it
     * may still write (see {@code LockManager.commit}); {@link #discard} drops it otherwise.
     */
    public static Path prepare(Path target, byte[] content) {
        return prepare(target, content, true);
    }

    /**
     * As {@link #prepare(Path, byte[])}; without {@code durable} the temp file is not fsynced: for a
     * file that only mirrors others and is rebuilt from them, where a crash of the machine may
     * lose the last change but a reader still never sees a torn file (the rename is atomic).
     */
    public static Path prepare(Path target, byte[] content, boolean durable) {
        return prepare(target, null, content, durable);
    }

    /**
     * As {@link #prepare(Path, byte[], boolean)}, the temp file ({@code <name>.tmp-<hex>}) made in
     * {@code tempDir}, a folder of the same file system as the target's (a runtime folder): the
     * rename moves it into the target's folder, which must exist. Null: beside the target, hidden.
     */
    public static Path prepare(Path target, Path tempDir, byte[] content, boolean durable) {
        Path dir = tempDir != null ? tempDir : target.toAbsolutePath().getParent();
        // unique enough with CREATE_NEW (a clash fails the write, never mixes two); UUID.randomUUID
        // would ask SecureRandom, which showed in the webhook's profile
        Path temp = dir.resolve((tempDir != null ? "" : ".") + target.getFileName() + ".tmp-"
                + Long.toHexString(ThreadLocalRandom.current().nextLong()));
        try {
            FileChannel opened;
            try {
                opened = FileChannel.open(temp, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE);
            } catch (NoSuchFileException e) {
                Files.createDirectories(dir); // only when missing: the JDK's call throws twice for an existing one
                opened = FileChannel.open(temp, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE);
            }
            try (FileChannel ch = opened) {
                ByteBuffer buf = ByteBuffer.wrap(content);
                while (buf.hasRemaining()) {
                    ch.write(buf);
                }
                if (durable) {
                    ch.force(true);
                }
            }
            return temp;
        } catch (IOException e) {
            discard(temp);
            throw new UncheckedIOException("cannot write " + target + ": " + IoErrors.why(e), e);
        }
    }

    /**
     * The second half of {@link #write}: renames the prepared {@code temp} over {@code target}
     * atomically, durably: the target's folder is fsynced, wherever the temp file was made.
     */
    public static void commit(Path temp, Path target) {
        commit(temp, target, true);
    }

    /** As {@link #commit(Path, Path)}; without {@code durable} the directory is not fsynced (see the durable-less prepare). */
    public static void commit(Path temp, Path target, boolean durable) {
        Path dir = target.toAbsolutePath().getParent();
        try {
            try {
                Files.move(temp, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
            } catch (AtomicMoveNotSupportedException e) {
                throw new IOException("the file system of " + dir + " cannot rename atomically", e);
            }
            if (durable) {
                fsyncDirectory(dir);
            }
        } catch (IOException e) {
            discard(temp);
            throw new UncheckedIOException("cannot write " + target + ": " + IoErrors.why(e), e);
        }
    }

    /**
     * Writes {@code content} over a file in place, from the start, then cuts it to that length: for
     * a hidden file nobody reads while it is written (a spare kept to save an inode). Never
     * truncated to empty first, which ext4 answers by writing the file out at close.
     */
    public static void overwrite(Path file, byte[] content, java.nio.file.OpenOption... options) throws IOException {
        java.util.Set<java.nio.file.OpenOption> opts = new java.util.HashSet<>(java.util.Arrays.asList(options));
        opts.add(StandardOpenOption.WRITE);
        try (FileChannel ch = FileChannel.open(file, opts)) {
            ByteBuffer buf = ByteBuffer.wrap(content);
            long at = 0;
            while (buf.hasRemaining()) {
                at += ch.write(buf, at);
            }
            ch.truncate(content.length);
        }
    }

    /** Drops a prepared temp file that will not be committed. */
    public static void discard(Path temp) {
        try {
            Files.deleteIfExists(temp);
        } catch (IOException ignored) {
            // the temp file is hidden and harmless; the original error matters
        }
    }

    /** Makes a rename or create in {@code dir} durable. Some platforms cannot open a directory; that is not an error. */
    public static void fsyncDirectory(Path dir) {
        try (FileChannel ch = FileChannel.open(dir, StandardOpenOption.READ)) {
            ch.force(true);
        } catch (IOException | UnsupportedOperationException e) {
            // Not supported on this platform (e.g. Windows); the rename is still atomic.
        }
    }
}
