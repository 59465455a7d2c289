package dev.agentx.clarify.lock;

import java.nio.file.Path;
import java.time.Duration;

/** Told how long each lock took to acquire (for logs and metrics). */
@FunctionalInterface
public interface LockObserver {
    LockObserver NONE = (file, waited) -> { };

    void acquired(Path file, Duration waited);
}
