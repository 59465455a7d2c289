package dev.agentx.clarify.lock;

import java.time.Duration;

/** Waits between lock attempts; tests pass one that advances a fake clock instead. */
@FunctionalInterface
public interface Sleeper {
    void sleep(Duration d) throws InterruptedException;

    static Sleeper real() {
        return d -> Thread.sleep(Math.max(0, d.toMillis()));
    }
}
