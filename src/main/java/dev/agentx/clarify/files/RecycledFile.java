package dev.agentx.clarify.files;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.FileTime;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Objects;
import org.slf4j.LoggerFactory;

/**
 * Atomic, not durable, replacement of a file that is replaced again and again (a mirror such as
 * {@code agent-status.json}) without allocating an inode each time. As with {@link AtomicFiles},
 * the new content is written to another file and renamed over it. Unlike it, the inode replaced is
 * kept for a later replacement: before the rename the file gets a second name, and after it that
 * inode becomes a spare, {@code <name>.spare.<k>} in the state folder's runtime folder
 * ({@link RuntimeFolder}: the same file system, so the links and renames between the two work),
 * which a later writer (of any process) writes over in place. On a file system that allocates
 * inodes slowly while many were freed recently (ext4 without a journal scans past them), the create
 * and the free were most of such a write's cost (bench/README.md).
 *
 * <p>A reader that opened the file before it was replaced may still be reading that inode when it
 * is a spare. So a spare is written over only once it has been a spare for {@link #GRACE} (its
 * change time says since when). A write that finds every spare younger makes a new file, and the
 * inode it replaces becomes one spare more, up to {@link #SPARES}: there are as many spares as
 * the busiest moment needed (one for a file written less often than the grace), each added at the
 * first free name, and writes as
 * often as one per {@code GRACE / SPARES} still allocate nothing. {@link #read} compares the
 * file's inode, modification time and size before and after reading it, and reads again when any
 * changed: an inode written over in place after the grace gets a modification time later than any
 * it had while it was the file, whatever the file system's timestamp granularity, so a read it
 * tore never passes for whole. A reader outside this class (a person's {@code cat}) reads the old
 * or the new content unless it holds the file open for longer than the grace while it is replaced
 * twice.
 *
 * <p>Call {@link #prepare} and {@link #commit} holding the file's lock: the spares are shared by
 * every process that writes the file. A process killed half-way leaves at worst {@code
 * <name>.spare-old}, a second name of an inode that the next writer removes; a process that
 * knows only the lock-file protocol replaces the file as usual and never sees the spares. Where
 * hard links or change times are not available, each write makes a new file.
 */
public final class RecycledFile {
    /**
     * How long an inode must have been a spare before it is written over: far longer than a
     * read of the file takes, and over the coarsest timestamp granularity of a file system's
     * clock (a jiffy, up to 10 ms), so that the write's modification time differs from any the
     * inode had as the file.
     */
    public static final Duration GRACE = Duration.ofMillis(50);
    /** The most spares a file keeps: writes every 1.6 ms or more seldom reuse one (see the class comment). */
    public static final int SPARES = 32;
    /** How often {@link #read} reads again a file that changed while it was read before it gives up. */
    static final int READS = 100;

    /**
     * A replacement written and not yet renamed over the target: {@code file} holds the content (a
     * spare written over, or a new file); after the rename, the inode replaced gets the name
     * {@code keepAs}, a spare's, or is freed ({@code keepAs} null).
     */
    public record Replacement(Path file, Path keepAs) {
        boolean reusesSpare() {
            return file.equals(keepAs);
        }
    }

    private final Path target;
    /** Where the spares and the new files are made: the runtime folder of the target's state folder. */
    private final Path runtime;
    private final Path[] spares = new Path[SPARES];
    private final Path replaced;
    private final Duration grace;
    /** The time a spare's change time is compared with: the system's, or a test's. */
    private final Clock clock;
    private volatile boolean hardLinks = true;
    /** Where {@link #prepare} looks first: the slot after the one it used last, whose spare has rested longest. */
    private volatile int next;
    private volatile Runnable afterRead = () -> { };

    public RecycledFile(Path target) {
        this(target, GRACE, Clock.systemUTC());
    }

    /** {@code grace} and {@code clock}: {@link #GRACE} and the system's, or others for tests. */
    RecycledFile(Path target, Duration grace, Clock clock) {
        this.target = target.toAbsolutePath();
        this.runtime = RuntimeFolder.of(this.target);
        for (int k = 0; k < SPARES; k++) {
            spares[k] = runtime.resolve(this.target.getFileName() + ".spare." + (k + 1));
        }
        this.replaced = runtime.resolve(this.target.getFileName() + ".spare-old");
        this.grace = grace;
        this.clock = clock;
    }

    /**
     * {@code content} in the file that {@link #commit} renames over the target: a spare that has
     * been one for {@link #GRACE}, written over in place; else a new file, and the inode it will
     * replace kept as a spare if there are fewer than {@link #SPARES}.
     */
    public Replacement prepare(byte[] content) {
        RuntimeFolder.enter(runtime);
        Path free = null;
        if (hardLinks) {
            Instant restedSince = clock.instant().minus(grace);
            // from the slot after the one used last to the end, then from the first slot to it; a
            // spare is added at the first free slot, so each part ends at its first missing name
            int first = next;
            scan:
            for (int[] part : new int[][] {{first, SPARES}, {0, first}}) {
                for (int k = part[0]; k < part[1] && hardLinks; k++) {
                    Path spare = spares[k];
                    Instant changed = changed(spare);
                    if (changed == null) {
                        free = free == null ? spare : free;
                        break;
                    }
                    if (changed.isBefore(restedSince)) {
                        try {
                            AtomicFiles.overwrite(spare, content, StandardOpenOption.CREATE);
                            next = (k + 1) % SPARES;
                            return new Replacement(spare, spare);
                        } catch (NoSuchFileException e) {
                            break scan; // no directory any more: AtomicFiles makes it
                        } catch (IOException e) {
                            throw new UncheckedIOException("cannot write " + target + ": " + IoErrors.why(e), e);
                        }
                    }
                }
            }
        }
        return new Replacement(AtomicFiles.prepare(target, runtime, content, false), hardLinks ? free : null);
    }

    /** When {@code spare} became a spare (its change time), or null if there is none by that name. */
    private Instant changed(Path spare) {
        try {
            return ((FileTime) Files.getAttribute(spare, "unix:ctime")).toInstant();
        } catch (NoSuchFileException e) {
            return null;
        } catch (IOException e) {
            throw new UncheckedIOException("cannot look at " + spare + ": " + IoErrors.why(e), e);
        } catch (UnsupportedOperationException | IllegalArgumentException e) {
            hardLinks = false; // no change times here: a new file each time
            return null;
        }
    }

    /**
     * The target's content as one replacement left it, read again if the file was replaced or
     * written while it was read (see the class comment).
     *
     * @throws NoSuchFileException when there is no file
     */
    public byte[] read() throws IOException {
        for (int look = 1; ; look++) {
            BasicFileAttributes before = Files.readAttributes(target, BasicFileAttributes.class);
            byte[] bytes = Files.readAllBytes(target);
            afterRead.run();
            BasicFileAttributes after = Files.readAttributes(target, BasicFileAttributes.class);
            boolean unchanged = Objects.equals(before.fileKey(), after.fileKey())
                    && before.lastModifiedTime().equals(after.lastModifiedTime()) && before.size() == after.size()
                    && bytes.length == after.size();
            // without inode numbers there is no spare either: every write makes a new file
            if (unchanged || before.fileKey() == null) {
                return bytes;
            }
            if (look == READS) {
                throw new IOException(target + " was replaced each of the " + READS + " times it was read");
            }
        }
    }

    /** Has {@code hook} run between {@link #read}'s reading and its second look at the file. For tests. */
    void afterRead(Runnable hook) {
        this.afterRead = hook;
    }

    /**
     * Renames the prepared file over the target atomically (without a directory fsync); the inode
     * it replaces becomes the spare {@link Replacement#keepAs} names, or is freed.
     */
    public void commit(Replacement prepared) {
        if (prepared.keepAs() == null) {
            AtomicFiles.commit(prepared.file(), target, false);
            return;
        }
        boolean kept = keepReplaced();
        try {
            try {
                Files.move(prepared.file(), target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
            } catch (AtomicMoveNotSupportedException e) {
                throw new IOException("the file system of " + target.getParent() + " cannot rename atomically", e);
            }
            if (kept) {
                Files.move(replaced, prepared.keepAs(), StandardCopyOption.ATOMIC_MOVE);
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write " + target + ": " + IoErrors.why(e), e);
        }
    }

    /**
     * Drops a replacement that was not committed: a spare stays one (nobody reads it), a new file is
     * deleted. After a commit there is nothing to drop, and this does nothing.
     */
    public void discard(Replacement prepared) {
        if (prepared != null && !prepared.reusesSpare()) {
            AtomicFiles.discard(prepared.file());
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
