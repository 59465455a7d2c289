package dev.agentx.clarify.ledger;

import dev.agentx.clarify.files.IoErrors;
import dev.agentx.clarify.files.MarkFiles;
import dev.agentx.clarify.files.RuntimeFolder;
import dev.agentx.clarify.protocol.ClarificationRecord;
import dev.agentx.clarify.protocol.Ledger;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;

/**
 * Which issues hold a record open for an agent ({@link ClarificationRecord#holdsOpen}: a question
 * it is asked and has not answered, or one it blocks on), as {@code <state>/open-records/<agent>/<N>},
 * an empty file per issue (a link of one file: files/MarkFiles). The agent statuses read it when an agent's clarification on one issue
 * ends, to find what it still waits on elsewhere: the look-up lists the agent's own folder and
 * reads those ledgers, whatever the number of ledgers in the repository.
 *
 * <p>The ledger writes keep it, each under its issue's lock ({@link FileLedgerStore}): before the
 * ledger is renamed into place, a mark for every agent the new ledger holds open (made if it is
 * missing); after the rename, the marks of the agents the old ledger held open and the new one no
 * longer does are removed. So every agent a ledger on disk holds open has its mark; a mark can
 * outlive its record (a writer that died between the two steps), which costs a look-up one more
 * ledger read and changes nothing, since the look-up judges each ledger it reads. The marks are not
 * synced to the disk: like {@code agent-status.json}, they follow the ledgers, and a mark lost to
 * a power cut is made again by the issue's next write. A ledger put in place by other means (a
 * restore from a backup) gets its marks at its next write, as the statuses follow it then.
 *
 * <p>An agent's folder name is its name with every character but {@code a-z 0-9 _ -} (and a dot
 * not in front) written as {@code %XX} of its UTF-8 bytes: no name escapes the folder, and names
 * that differ only in case never share a folder, also on a file system that ignores case.
 */
final class OpenRecordMarks {
    private final Path dir;
    private final Path runtime;

    /** @param stateDir the {@code .agentx/state} folder */
    OpenRecordMarks(Path stateDir) {
        this.dir = stateDir.resolve(FileLedgerStore.OPEN_RECORDS);
        this.runtime = RuntimeFolder.in(stateDir);
    }

    /** The agents {@code ledger} holds open (none for null: no ledger). */
    static Set<String> agentsHeldOpen(Ledger ledger) {
        Set<String> out = new TreeSet<>();
        if (ledger == null) {
            return out;
        }
        for (ClarificationRecord r : ledger.clarifications()) {
            if (r.holdsOpen(r.to())) {
                out.add(r.to());
            }
            if (r.holdsOpen(r.from())) {
                out.add(r.from());
            }
        }
        return out;
    }

    /** Makes the issue's mark of each agent that lacks one; a failure is thrown (the ledger is not written then). */
    void mark(int issue, Set<String> agents) {
        for (String agent : agents) {
            Path mark = dir.resolve(folderOf(agent)).resolve(Integer.toString(issue));
            try {
                MarkFiles.make(mark, runtime);
            } catch (IOException e) {
                throw new UncheckedIOException("cannot mark " + mark + ": " + IoErrors.why(e), e);
            }
        }
    }

    /** Removes the issue's marks of {@code agents}; a mark left behind only costs a look-up a read, so a failure is logged. */
    void unmark(int issue, Set<String> agents) {
        for (String agent : agents) {
            java.io.File mark = dir.resolve(folderOf(agent)).resolve(Integer.toString(issue)).toFile();
            // File.delete: one unlink (Files.deleteIfExists looks at the file first)
            if (!mark.delete() && mark.exists()) {
                org.slf4j.LoggerFactory.getLogger(OpenRecordMarks.class).warn("{} not removed", mark);
            }
        }
    }

    /** The issues marked for {@code agent}, in no particular order. */
    List<Integer> issuesOf(String agent) {
        List<Integer> out = new ArrayList<>();
        Path folder = dir.resolve(folderOf(agent));
        // File.list: open, read and close the folder (a DirectoryStream also dups and fstats it)
        String[] names = folder.toFile().list();
        if (names == null) {
            if (Files.isDirectory(folder)) {
                throw new UncheckedIOException("cannot list " + folder, new IOException("unreadable folder"));
            }
            return out; // no folder: nothing open for it
        }
        for (String name : names) {
            if (!name.isEmpty() && name.length() < 10 && name.chars().allMatch(c -> c >= '0' && c <= '9')) {
                out.add(Integer.parseInt(name));
            }
        }
        return out;
    }

    /** The agent's folder name: see the class comment. */
    static String folderOf(String agent) {
        if (agent.isEmpty()) {
            return "%"; // no encoded name is a lone %
        }
        StringBuilder b = new StringBuilder(agent.length() + 8);
        byte[] bytes = agent.getBytes(StandardCharsets.UTF_8);
        for (int i = 0; i < bytes.length; i++) {
            int c = bytes[i] & 0xff;
            boolean plain = c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '.' && i > 0;
            if (plain) {
                b.append((char) c);
            } else {
                b.append('%').append(Character.toUpperCase(Character.forDigit(c >> 4, 16)))
                        .append(Character.toUpperCase(Character.forDigit(c & 0xf, 16)));
            }
        }
        return b.toString();
    }
}
