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
 * sees either the old or the new content, never a torn file.
 */
public final class AtomicFiles {
    private AtomicFiles() {
    }

    public static void write(Path target, byte[] content) {
        Path dir = target.toAbsolutePath().getParent();
        // unique enough with CREATE_NEW (a clash fails the write, never mixes two); UUID.randomUUID
        // would ask SecureRandom, which showed in the webhook's profile
        Path temp = dir.resolve("." + target.getFileName() + ".tmp-" + Long.toHexString(ThreadLocalRandom.current()
                .nextLong()));
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
                ch.force(true);
            }
            try {
                Files.move(temp, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
            } catch (AtomicMoveNotSupportedException e) {
                throw new IOException("the file system of " + dir + " cannot rename atomically", e);
            }
            fsyncDirectory(dir);
        } catch (IOException e) {
            try {
                Files.deleteIfExists(temp);
            } catch (IOException ignored) {
                // the temp file is hidden and harmless; the original error matters
            }
            throw new UncheckedIOException("cannot write " + target + ": " + e.getMessage(), e);
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
