package dev.agentx.clarify.status;

import dev.agentx.clarify.files.Directories;
import dev.agentx.clarify.files.IoErrors;
import dev.agentx.clarify.files.RuntimeFolder;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.FileTime;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.LoggerFactory;

/**
 * Mirrors left for whoever holds {@code agent-status.json}'s lock: a process that finds the lock
 * held by one of ours does not wait for it, it leaves a file in {@code
 * <state>/.runtime/agent-status.pending/} (see RuntimeFolder, which keeps them when it clears the
 * folder) naming the issue and the agents to mirror, and the holder applies it before it lets go, or
 * straight after (see FileAgentStatusStore). Each file is written under a temporary name and
 * renamed into place, so that a holder never reads half of one. Nothing here is fsynced: the
 * ledgers are the truth, and a lost file only leaves the statuses a step behind until the next
 * operation on that issue.
 */
final class StatusHandOff {
    private static final String TEMP = ".tmp";
    private static final Duration ABANDONED = Duration.ofMinutes(1);
    private static final AtomicLong SEQUENCE = new AtomicLong();
    private static final String PROCESS = Long.toString(ProcessHandle.current().pid());

    private final Path runtime;
    private final Path dir;

    /** One mirror left to do: {@code file} names it. */
    record Pending(Path file, int issue, Set<String> agents) {
    }

    StatusHandOff(Path stateDir) {
        this.runtime = RuntimeFolder.in(stateDir);
        this.dir = runtime.resolve(RuntimeFolder.PENDING_STATUSES);
    }

    Path directory() {
        return dir;
    }

    /** Leaves the mirror of {@code issue} for {@code agents} to the holder. */
    void leave(int issue, Set<String> agents) {
        String name = issue + "-" + PROCESS + "-" + SEQUENCE.incrementAndGet();
        byte[] content = (String.join("\n", agents) + "\n").getBytes(StandardCharsets.UTF_8);
        Path temp = dir.resolve(name + TEMP);
        RuntimeFolder.enter(runtime);
        try {
            try {
                Files.write(temp, content);
            } catch (NoSuchFileException e) {
                Directories.ensure(dir);
                Files.write(temp, content);
            }
            Files.move(temp, dir.resolve(name), StandardCopyOption.ATOMIC_MOVE);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot leave the statuses of issue " + issue + " in " + dir + ": "
                    + e.getMessage(), e);
        }
    }

    /** Whether any mirror is left to do. */
    boolean any() {
        for (String name : names()) {
            if (complete(name)) {
                return true;
            }
        }
        return false;
    }

    /**
     * The files in the directory: none when it does not exist. (Listed without an exception for a
     * missing directory, the usual case, since every operation looks.)
     */
    private String[] names() {
        String[] names = dir.toFile().list();
        return names == null ? new String[0] : names;
    }

    /** The mirrors left to do. A file that does not say an issue is removed with a warning. */
    List<Pending> list() {
        List<Pending> out = new ArrayList<>();
        for (String name : names()) {
            if (!complete(name)) {
                removeIfAbandoned(dir.resolve(name));
                continue;
            }
            Path f = dir.resolve(name);
            try {
                int issue;
                try {
                    issue = Integer.parseInt(name.substring(0, Math.max(0, name.indexOf('-'))));
                } catch (NumberFormatException e) {
                    LoggerFactory.getLogger(StatusHandOff.class).warn("removed {}: not a mirror this version left", f);
                    Files.deleteIfExists(f);
                    continue;
                }
                Set<String> agents = new LinkedHashSet<>();
                for (String line : Files.readAllLines(f, StandardCharsets.UTF_8)) {
                    if (!line.isBlank()) {
                        agents.add(line.strip());
                    }
                }
                out.add(new Pending(f, issue, agents));
            } catch (NoSuchFileException e) {
                // applied and removed by a holder that has since let go
            } catch (IOException e) {
                throw new UncheckedIOException("cannot read " + f + ": " + IoErrors.why(e), e);
            }
        }
        return out;
    }

    /** Removes mirrors that were applied. */
    void done(List<Pending> applied) {
        for (Pending p : applied) {
            try {
                Files.deleteIfExists(p.file());
            } catch (IOException e) {
                throw new UncheckedIOException("cannot remove " + p.file() + ": " + IoErrors.why(e), e);
            }
        }
    }

    /**
     * Removes a temporary file whose writer is gone (killed between its write and its rename, which
     * are microseconds apart): one older than a minute.
     */
    private static void removeIfAbandoned(Path temp) {
        try {
            FileTime modified = Files.getLastModifiedTime(temp);
            if (modified.toInstant().isBefore(Instant.now().minus(ABANDONED))) {
                Files.deleteIfExists(temp);
            }
        } catch (IOException e) {
            // gone already, or to be looked at again by the next holder
        }
    }

    private static boolean complete(String name) {
        return !name.endsWith(TEMP);
    }
}
