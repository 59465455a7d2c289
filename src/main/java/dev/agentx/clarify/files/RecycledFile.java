package dev.agentx.clarify.files;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import org.slf4j.LoggerFactory;

/**
 * Atomic, not durable, replacement of a file that is replaced again and again (a mirror such as
 * {@code agent-status.json}) without allocating an inode each time. As with {@link AtomicFiles},
 * the new content is written beside the file and renamed over it, so a reader sees the old or the
 * new content, never a torn file. Unlike it, the inode replaced is kept for the next replacement:
 * before the rename the file gets a second name, and after it that inode becomes the spare,
 * {@code .<name>.spare}, which the next writer (of any process) writes over in place. On a file
 * system that allocates inodes slowly while many were freed recently (ext4 without a journal scans
 * past them), the create and the free were most of such a write's cost (bench/README.md).
 *
 * <p>Call {@link #prepare} and {@link #commit} holding the file's lock: the spare is shared by
 * every process that writes the file. Nobody reads the spare. A process killed half-way leaves at
 * worst {@code .<name>.spare-old}, a second name of an inode that the next writer removes; a
 * process that knows only the lock-file protocol replaces the file as usual and never sees the
 * spare. Where hard links fail, each write makes a new file.
 */
public final class RecycledFile {
    private final Path target;
    private final Path spare;
    private final Path replaced;
    private volatile boolean hardLinks = true;

    public RecycledFile(Path target) {
        this.target = target.toAbsolutePath();
        this.spare = this.target.resolveSibling("." + this.target.getFileName() + ".spare");
        this.replaced = this.target.resolveSibling("." + this.target.getFileName() + ".spare-old");
    }

    /** {@code content} in the file that {@link #commit} renames over the target: the spare, written over in place. */
    public Path prepare(byte[] content) {
        if (hardLinks) {
            try {
                AtomicFiles.overwrite(spare, content, StandardOpenOption.CREATE);
                return spare;
            } catch (NoSuchFileException e) {
                // no directory yet: AtomicFiles makes it
            } catch (IOException e) {
                throw new UncheckedIOException("cannot write " + target + ": " + e.getMessage(), e);
            }
        }
        return AtomicFiles.prepare(target, content, false);
    }

    /**
     * Renames the {@code prepared} file over the target atomically (without a directory fsync); the
     * inode it replaces becomes the spare.
     */
    public void commit(Path prepared) {
        if (!prepared.equals(spare)) {
            AtomicFiles.commit(prepared, target, false);
            return;
        }
        boolean kept = keepReplaced();
        try {
            try {
                Files.move(spare, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
            } catch (AtomicMoveNotSupportedException e) {
                throw new IOException("the file system of " + target.getParent() + " cannot rename atomically", e);
            }
            if (kept) {
                Files.move(replaced, spare, StandardCopyOption.ATOMIC_MOVE);
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write " + target + ": " + e.getMessage(), e);
        }
    }

    /**
     * Drops a prepared file that was not committed: the spare stays (nobody reads it), a new file is
     * deleted. After a commit there is nothing to drop, and this does nothing.
     */
    public void discard(Path prepared) {
        if (prepared != null && !prepared.equals(spare)) {
            AtomicFiles.discard(prepared);
        }
    }

    /** Gives the target's inode the name {@link #replaced}; false if there is no target or links fail. */
    private boolean keepReplaced() {
        try {
            Files.deleteIfExists(replaced); // what a writer killed half-way left
            Files.createLink(replaced, target);
            return true;
        } catch (NoSuchFileException e) {
            return false; // no file yet: nothing is replaced
        } catch (UnsupportedOperationException | IOException e) {
            hardLinks = false; // e.g. a file system without hard links: a new file each time
            LoggerFactory.getLogger(RecycledFile.class).debug("hard links unavailable for {} ({}); writing new files",
                    target, e.toString());
            return false;
        }
    }
}
