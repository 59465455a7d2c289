package dev.agentx.clarify.lock;

import dev.agentx.clarify.files.IoErrors;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.time.Instant;
import java.util.Objects;
import java.util.Optional;

/** What was seen of an existing lock file: its content (null if empty or torn) and the file's identity. */
record ObservedLock(LockInfo info, Object fileKey, Instant modified) {
    /** The lock file at {@code lockPath} as it is now; empty when there is none. */
    static Optional<ObservedLock> observe(Path lockPath) {
        try {
            BasicFileAttributes attrs = Files.readAttributes(lockPath, BasicFileAttributes.class);
            byte[] bytes = Files.readAllBytes(lockPath);
            // null if being written right now, or torn by a crash: then it is judged by its age
            LockInfo info = LockInfo.parse(bytes);
            return Optional.of(new ObservedLock(info, attrs.fileKey(), attrs.lastModifiedTime().toInstant()));
        } catch (NoSuchFileException e) {
            return Optional.empty();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read lock " + lockPath + ": " + IoErrors.why(e), e);
        }
    }

    /** Who holds it: its token, or for a lock without one the file and its time. */
    Object holder() {
        return info != null ? info.token() : fileKey + "@" + modified;
    }

    /** Whether it carries {@code token}: it is the lock that token's holder made. */
    boolean carries(String token) {
        return info != null && token.equals(info.token());
    }

    boolean sameLockAs(ObservedLock other) {
        if (info != null && other.info != null) {
            return Objects.equals(info.token(), other.info.token());
        }
        return info == null && other.info == null && Objects.equals(fileKey, other.fileKey)
                && Objects.equals(modified, other.modified);
    }
}
