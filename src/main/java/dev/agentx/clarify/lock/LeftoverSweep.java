package dev.agentx.clarify.lock;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Instant;
import java.util.stream.Stream;
import org.slf4j.LoggerFactory;

/**
 * What killed processes left for a lock in the runtime folder of its state folder
 * (files/RuntimeFolder), removed in one look at that folder when a stale lock is taken over, which
 * is when such a crash shows. Runs under the take-over's guard while the stale lock is still in
 * place. (The last process to leave the runtime folder removes it with all it holds; this is for
 * the leftovers of a killed process while others go on.)
 * <ul>
 *   <li>The locked file's temp copies ({@code <file>.tmp-*}, see AtomicFiles): its holder was
 *   killed writing it. No other process can be writing the file now (its writers hold its
 *   lock); one that held it before and is only paused (another host's, judged stale by age)
 *   finds its temp file gone and its write fails, as it must.</li>
 *   <li>Lock content files ({@code <name>.lock.<token>}) of any lock of the state folder older
 *   than the stale time: a killed process's spares, or one it wrote and had not linked yet. A live
 *   process's idle spare may go too: it then writes a new one. One linked as a lock loses only its
 *   name in the runtime folder; the lock stays.</li>
 *   <li>Stale locks renamed away to be deleted ({@code <name>.lock.stale-<uuid>}) by a process
 *   killed before it deleted them, whatever their age: no lock is read under such a name.</li>
 * </ul>
 */
final class LeftoverSweep {
    private final Clock clock;
    private final LockSettings settings;

    LeftoverSweep(Clock clock, LockSettings settings) {
        this.clock = clock;
        this.settings = settings;
    }

    /** Removes the leftovers of {@code lockPath}'s lock from {@code runtime} (see the class comment). */
    void sweep(Path lockPath, Path runtime) {
        String lockName = lockPath.getFileName().toString();
        String tempPrefix = lockName.substring(0, lockName.length() - ".lock".length()) + ".tmp-";
        Instant cutoff = clock.instant().minus(settings.staleAfter());
        try (Stream<Path> files = Files.list(runtime)) {
            files.forEach(p -> {
                String name = p.getFileName().toString();
                boolean content = name.contains(".lock.");
                try {
                    if (name.startsWith(tempPrefix) || name.contains(".lock" + StaleLockTakeOver.STALE)
                            || content && Files.getLastModifiedTime(p).toInstant().isBefore(cutoff)) {
                        Files.deleteIfExists(p);
                    }
                } catch (IOException ignored) {
                    // gone already, or not ours to judge: left for the next take-over, harmless
                }
            });
        } catch (IOException e) {
            LoggerFactory.getLogger(FileLock.class).debug("could not sweep what killed processes left in {}: {}",
                    runtime, e.toString());
        }
    }
}
