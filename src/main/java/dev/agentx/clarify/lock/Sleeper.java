package dev.agentx.clarify.lock;

import java.time.Duration;

/** Waits between lock attempts; tests pass one that advances a fake clock instead. */
@FunctionalInterface
public interface Sleeper {
    void sleep(Duration d) throws InterruptedException;

    /** Thread.sleep. An anonymous class rather than a lambda, like the other objects every CLI start makes. */
    static Sleeper real() {
        return new Sleeper() {
            @Override
            public void sleep(Duration d) throws InterruptedException {
                Thread.sleep(Math.max(0, d.toMillis()));
            }
        };
    }
}
