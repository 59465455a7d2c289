package dev.agentx.clarify.ledger;

import dev.agentx.clarify.files.IoErrors;
import dev.agentx.clarify.files.MarkFiles;
import dev.agentx.clarify.files.RuntimeFolder;
import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Which issues' ledgers can change what the monitor finds, as {@code <state>/monitor-active/<N>},
 * an empty file per issue (a link of one file: files/MarkFiles): a ledger with an active record (kept by the ledger writes), or one the
 * monitor's full check found damaged or active without a mark. A monitor pass lists this folder
 * and reads those ledgers only ({@link ActiveLedgerIndex}), whatever the number of ledgers.
 *
 * <p>The ledger writes keep it, each under its issue's lock ({@link FileLedgerStore}): before a
 * ledger with an active record is renamed into place, its mark is made (if missing); after a
 * ledger with none is renamed into place, its mark is removed. So every active ledger on disk that
 * agentx wrote has its mark. A mark can outlive its reason (a writer that died between the two
 * steps, a damaged ledger mended by hand): that costs each pass one more ledger read and changes
 * nothing, since the pass judges each ledger it reads; the issue's next write removes it. A pass
 * never removes a mark: it cannot tell a stale mark from one a writer has just made for a ledger
 * it is about to put in place. The marks are not synced to the disk: a mark lost to a power cut is
 * made again by the issue's next write or the monitor's next full check.
 */
final class ActiveMarks {
    private final Path dir;
    private final Path runtime;

    /** @param stateDir the {@code .agentx/state} folder */
    ActiveMarks(Path stateDir) {
        this.dir = stateDir.resolve(FileLedgerStore.MONITOR_ACTIVE);
        this.runtime = RuntimeFolder.in(stateDir);
    }

    /** Makes the issue's mark if it lacks one (a link of one file: files/MarkFiles); a failure is thrown (a ledger write is not made then). */
    void mark(int issue) {
        Path mark = dir.resolve(Integer.toString(issue));
        try {
            MarkFiles.make(mark, runtime);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot mark " + mark + ": " + IoErrors.why(e), e);
        }
    }

    /** Removes the issue's mark, if there is one; a mark left behind only costs a pass a read, so a failure is logged. */
    void unmark(int issue) {
        File mark = dir.resolve(Integer.toString(issue)).toFile();
        // File.delete: one unlink (Files.deleteIfExists looks at the file first)
        if (!mark.delete() && mark.exists()) {
            org.slf4j.LoggerFactory.getLogger(ActiveMarks.class).warn("{} not removed", mark);
        }
    }

    /** The marked issues, in no particular order; none if the folder is missing. */
    int[] issues() {
        // File.list: names only, no Path object per entry
        String[] names = dir.toFile().list();
        if (names == null) {
            if (Files.exists(dir)) {
                throw new UncheckedIOException(new IOException("cannot list " + dir));
            }
            return new int[0];
        }
        int[] out = new int[names.length];
        int n = 0;
        for (String name : names) {
            int issue = issueOf(name);
            if (issue > 0) {
                out[n++] = issue;
            }
        }
        return n == out.length ? out : java.util.Arrays.copyOf(out, n);
    }

    /** The issue number a mark's name is, or 0 if it is none (only digits, no leading zero, fits an int). */
    private static int issueOf(String name) {
        if (name.isEmpty() || name.length() > 9 || name.charAt(0) == '0') {
            return 0;
        }
        int n = 0;
        for (int i = 0; i < name.length(); i++) {
            char c = name.charAt(i);
            if (c < '0' || c > '9') {
                return 0;
            }
            n = n * 10 + (c - '0');
        }
        return n;
    }
}
