package dev.agentx.clarify.files;

import java.io.FileOutputStream;
import java.io.IOException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Empty files whose name is all they say (the ledger folder's marks: ledger/OpenRecordMarks,
 * ledger/ActiveMarks), each made as a hard link of one empty file of the state folder's runtime
 * folder ({@code .runtime/mark}), so that making a mark allocates no inode: on a file system that
 * allocates inodes slowly while many were freed recently (ext4 without a journal scans past them),
 * a new file cost about 100 microseconds where a link costs 20, and a request made up to three
 * marks (bench/README.md). Nothing reads or writes a mark's content, times or identity, so marks
 * sharing one inode is invisible. The runtime folder's removal by the last process out takes only
 * the name {@code mark}: the marks stay, and the next process makes the file again. Where links
 * fail (a file system without hard links, or the file's link count at its limit, about 65,000 on
 * ext4), a new {@code mark} file replaces it, and if linking still fails the mark, and every
 * later one of the process, is made as a file of its own.
 */
public final class MarkFiles {
    /** The empty file every mark of a state folder is linked to, in its runtime folder. */
    public static final String SOURCE = "mark";

    /** False once linking failed after a new {@code mark}: a file system without hard links; files from then on. */
    private static volatile boolean links = true;

    private MarkFiles() {
    }

    /**
     * Makes {@code mark} if it is missing (its folder too), linked to the {@code mark} file of
     * {@code runtime}, which this process enters (see RuntimeFolder).
     */
    public static void make(Path mark, Path runtime) throws IOException {
        if (Files.exists(mark, LinkOption.NOFOLLOW_LINKS)) {
            return;
        }
        Path source = RuntimeFolder.enter(runtime).resolve(SOURCE);
        for (int attempt = 1; links && attempt <= 3; attempt++) {
            try {
                Files.createLink(mark, source);
                return;
            } catch (FileAlreadyExistsException e) {
                return; // made meanwhile by another writer of the folder
            } catch (NoSuchFileException e) {
                if (!Files.isDirectory(mark.getParent())) {
                    Files.createDirectories(mark.getParent());
                } else {
                    renew(source); // the first mark since the runtime folder was made
                }
            } catch (UnsupportedOperationException | FileSystemException e) {
                if (attempt > 1) {
                    links = false; // a new file would not take a link either: not tried again
                    break;
                }
                renew(source); // at the link limit: a new file takes the next marks
            }
        }
        new FileOutputStream(mark.toFile(), true).close();
    }

    /** Puts a new empty file in place as {@code source} (an atomic replace: other processes link to either). */
    private static void renew(Path source) throws IOException {
        Path fresh = source.resolveSibling(SOURCE + ".tmp-" + Long.toHexString(ThreadLocalRandom.current().nextLong()));
        Files.createFile(fresh);
        try {
            Files.move(fresh, source, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        } catch (IOException e) {
            Files.deleteIfExists(fresh);
            throw e;
        }
    }
}
