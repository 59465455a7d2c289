package dev.agentx.clarify.lock;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.agentx.clarify.support.Jvm;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

class TurnstileTest {
    @TempDir
    Path dir;

    /**
     * A queue that moves is waited out: the waiter looks at the holder once per budget, and an
     * alarm that ended one wait never cuts the next one short (which would judge "no progress"
     * over a few milliseconds and end a moving queue's wait with LOCK_TIMEOUT).
     */
    @Test
    @Timeout(60)
    void aWaiterLooksOncePerBudgetAndWaitsOutAHolderThatMoves() throws Exception {
        Path lock = dir.resolve("issue-1.json.lock");
        Process holder = Jvm.builder(QueueHolder.class, Turnstile.queuePathOf(lock).toString(), "2500")
                .redirectError(ProcessBuilder.Redirect.INHERIT).start();
        try {
            BufferedReader out = new BufferedReader(new InputStreamReader(holder.getInputStream(),
                    StandardCharsets.UTF_8));
            assertEquals("held", out.readLine());
            AtomicInteger looks = new AtomicInteger();
            long started = System.nanoTime();
            // the lock file's holder is someone else at every look: the queue moves
            try (Turnstile.Turn turn = Turnstile.enter(lock, dir.resolve("issue-1.json"), Duration.ofMillis(200),
                    looks::incrementAndGet)) {
                long waited = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started);
                assertTrue(holder.waitFor(10, TimeUnit.SECONDS), "the holder exited");
                // one look to start, then one per 200 ms budget: about 12 in 2.5 s; a wait cut
                // short by a stale interrupt looks again at once, hundreds of times
                assertTrue(looks.get() <= 2 + waited / 150, looks.get() + " looks in " + waited + " ms");
            }
        } finally {
            holder.destroyForcibly();
        }
    }
}
