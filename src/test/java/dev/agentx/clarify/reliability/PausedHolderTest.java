package dev.agentx.clarify.reliability;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.agentx.clarify.app.LocalMode;
import dev.agentx.clarify.protocol.ClarificationRecord;
import dev.agentx.clarify.protocol.Ledger;
import dev.agentx.clarify.support.Jvm;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Clock;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A process is stopped (SIGSTOP) while it holds the ledger's lock, for longer than the stale
 * time (1 s here, by the test property), then resumed (SIGCONT); another process asks meanwhile.
 * A live owner on this host is never taken over, so every acknowledged question of both is in the
 * ledger with its own text, and no id was given twice.
 */
class PausedHolderTest {
    private static final List<String> SHORT_STALE = List.of("-Dagentx.lock.stale-seconds=1");

    @TempDir
    Path dir;

    @Test
    void aHolderPausedPastTheStaleTimeLosesNothing() throws Exception {
        Path root = dir.resolve("project");
        Files.createDirectories(root.resolve(".agentx"));
        Process paused = Jvm.builder(SHORT_STALE, AskWorker.class, root.toString(), "paused", "60")
                .redirectError(ProcessBuilder.Redirect.INHERIT).start();
        Process other = Jvm.builder(SHORT_STALE, AskWorker.class, root.toString(), "other", "60")
                .redirectError(ProcessBuilder.Redirect.INHERIT).start();
        Map<String, String> acked = new ConcurrentHashMap<>();
        Thread a = reader(paused, acked);
        Thread b = reader(other, acked);
        Path lock = root.resolve(".agentx/state/clarifications/issue-1.json.lock");
        int caught = 0;
        long giveUp = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (caught < 2 && paused.isAlive() && System.nanoTime() < giveUp) {
            if (!holds(lock, paused.pid())) {
                Thread.onSpinWait();
                continue;
            }
            signal("-STOP", paused.pid());
            if (holds(lock, paused.pid())) {
                caught++;
                Thread.sleep(2500); // past the stale time, while the other process waits for the lock
            }
            signal("-CONT", paused.pid());
        }
        assertEquals(2, caught, "the process was stopped while holding the lock twice");
        assertTrue(paused.waitFor(120, TimeUnit.SECONDS) && other.waitFor(120, TimeUnit.SECONDS));
        a.join();
        b.join();
        assertEquals(0, paused.exitValue());
        assertEquals(0, other.exitValue());
        assertEquals(120, acked.size(), "every question acknowledged once, each id once");

        Ledger ledger = LocalMode.open(root, Clock.systemUTC()).ledgers().read(1).orElseThrow();
        Map<String, String> inLedger = new HashMap<>();
        for (ClarificationRecord r : ledger.clarifications()) {
            inLedger.put(r.id(), r.thread().get(0).body());
        }
        assertEquals(new HashMap<>(acked), inLedger, "every acknowledged id in the ledger with its own question");
    }

    private static boolean holds(Path lock, long pid) {
        try {
            return new String(Files.readAllBytes(lock), StandardCharsets.UTF_8).startsWith("{\"pid\":" + pid + ",");
        } catch (NoSuchFileException e) {
            return false;
        } catch (IOException e) {
            return false;
        }
    }

    private static void signal(String signal, long pid) throws IOException, InterruptedException {
        assertEquals(0, new ProcessBuilder("kill", signal, String.valueOf(pid)).start().waitFor());
    }

    private static Thread reader(Process p, Map<String, String> acked) {
        Thread t = new Thread(() -> {
            try (BufferedReader r = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
                for (String line = r.readLine(); line != null; line = r.readLine()) {
                    if (line.startsWith("ACK ")) {
                        String[] f = line.split(" ", 3);
                        if (acked.put(f[1], f[2]) != null) {
                            throw new AssertionError("id acknowledged twice: " + f[1]);
                        }
                    }
                }
            } catch (IOException e) {
                throw new java.io.UncheckedIOException(e);
            }
        });
        t.start();
        return t;
    }
}
