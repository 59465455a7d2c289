package dev.agentx.clarify.lock;

import java.nio.file.Path;
import java.time.Duration;

/** Told how long each lock took to acquire (for logs and metrics). */
@FunctionalInterface
public interface LockObserver {
    /** Tells no one (an anonymous class rather than a lambda: every CLI start makes it). */
    LockObserver NONE = new LockObserver() {
        @Override
        public void acquired(Path file, Duration waited) {
            // nothing
        }
    };

    void acquired(Path file, Duration waited);
}
