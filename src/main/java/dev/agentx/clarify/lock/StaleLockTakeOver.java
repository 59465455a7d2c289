package dev.agentx.clarify.lock;

import dev.agentx.clarify.files.Directories;
import dev.agentx.clarify.files.IoErrors;
import dev.agentx.clarify.protocol.ClarifyException;
import dev.agentx.clarify.protocol.ErrorCode;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.channels.FileChannel;
import java.nio.channels.OverlappingFileLockException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import org.slf4j.LoggerFactory;

/**
 * Judges whether a lock's holder is gone, and takes a stale lock over: it is renamed away to a
 * unique name, never deleted and created again (two processes that both judged it stale could
 * each delete the other's fresh lock).
 *
 * <p>Take-over runs under a short guard: an OS advisory lock on {@code <file>.guard} in the state
 * folder's runtime folder (files/RuntimeFolder), where the lock is renamed to as well. The kernel
 * drops it when its process dies, so the guard itself can never be stale. Without it, a process
 * that judged lock A stale could rename away the fresh lock B another process had just created in
 * its place; under the guard, the lock is read again and renamed only if it is still the one that
 * was judged. What killed processes left for the lock goes at the same moment ({@link LeftoverSweep}).
 */
final class StaleLockTakeOver {
    /** How a stale lock renamed away to be deleted is named: {@code <name>.lock.stale-<uuid>}. */
    static final String STALE = ".stale-";

    private final Clock clock;
    private final LockSettings settings;
    private final ProcessIdentity self;
    private final LeftoverSweep leftovers;

    StaleLockTakeOver(Clock clock, LockSettings settings, ProcessIdentity self) {
        this.clock = clock;
        this.settings = settings;
        this.self = self;
        this.leftovers = new LeftoverSweep(clock, settings);
    }

    /**
     * Whether {@code seen}'s holder is gone. On this host liveness is known: a dead owner's lock
     * goes at once, a live owner's never, however old (a paused process resumes and finishes its
     * write). A lock of another host, or one that says nothing of its holder, goes by its age.
     */
    boolean isStale(ObservedLock seen) {
        Instant now = clock.instant();
        if (seen.info() == null) {
            return Duration.between(seen.modified(), now).compareTo(settings.staleAfter()) > 0;
        }
        LockInfo info = seen.info();
        if (self.host().equals(info.host())) {
            return !self.isAlive(info.pid(), info.processStart());
        }
        Instant taken = info.timestamp() == null ? seen.modified() : info.timestamp();
        return Duration.between(taken, now).compareTo(settings.staleAfter()) > 0;
    }

    /**
     * Takes over the stale lock {@code judged}, if it is still the one at {@code lockPath}: true
     * when the lock is gone now (taken over here, or by someone else), false when a fresh lock
     * replaced it since it was judged. {@code runtime} is its state folder's runtime folder.
     */
    boolean takeOver(Path lockPath, Path runtime, ObservedLock judged) {
        return underGuard(lockPath, runtime, () -> {
            Optional<ObservedLock> now = ObservedLock.observe(lockPath);
            if (now.isEmpty()) {
                return true;
            }
            if (!now.get().sameLockAs(judged)) {
                return false; // replaced by a fresh lock since we looked
            }
            leftovers.sweep(lockPath, runtime);
            // renamed into the runtime folder: the same file system (files/RuntimeFolder)
            Path away = runtime.resolve(lockPath.getFileName() + STALE + LockTokens.next());
            try {
                Files.move(lockPath, away, StandardCopyOption.ATOMIC_MOVE);
            } catch (NoSuchFileException e) {
                return true;
            }
            LockInfo old = judged.info();
            LoggerFactory.getLogger(FileLock.class).warn("took over stale lock {} (was {})", lockPath.getFileName(),
                    old == null ? "empty" : "held by " + old.holder());
            Files.deleteIfExists(away);
            return true;
        });
    }

    private static FileChannel open(Path guard) throws IOException {
        try {
            return FileChannel.open(guard, StandardOpenOption.CREATE, StandardOpenOption.WRITE);
        } catch (NoSuchFileException e) {
            Directories.ensure(guard.getParent()); // the runtime folder was removed since it was entered
            return FileChannel.open(guard, StandardOpenOption.CREATE, StandardOpenOption.WRITE);
        }
    }

    @FunctionalInterface
    private interface GuardedAction {
        boolean run() throws IOException;
    }

    private boolean underGuard(Path lockPath, Path runtime, GuardedAction action) {
        String name = lockPath.getFileName().toString();
        Path guard = runtime.resolve(name.substring(0, name.length() - ".lock".length()) + ".guard");
        try (FileChannel ch = open(guard)) {
            java.nio.channels.FileLock os = null;
            while (os == null) {
                try {
                    os = Turnstile.lockOrPoll(ch);
                } catch (OverlappingFileLockException e) {
                    // another lock object of this same JVM holds the guard for a moment
                    Thread.onSpinWait();
                    Thread.sleep(1);
                }
            }
            try {
                return action.run();
            } finally {
                os.release();
            }
        } catch (IOException e) {
            throw new UncheckedIOException("lock guard " + guard + ": " + IoErrors.why(e), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new ClarifyException(ErrorCode.LOCK_TIMEOUT, "Interrupted while waiting for " + guard, e);
        }
    }
}
