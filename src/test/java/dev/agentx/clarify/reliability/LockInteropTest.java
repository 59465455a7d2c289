package dev.agentx.clarify.reliability;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.agentx.clarify.app.LocalMode;
import dev.agentx.clarify.protocol.ClarificationRecord;
import dev.agentx.clarify.protocol.Ledger;
import dev.agentx.clarify.support.Jvm;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Our processes (asking through the engine, and holding the ledger's lock bare) side by side with
 * processes that know only the documented lock-file protocol and rewrite the ledger under it, as
 * the AgentX scripts do. A log of every hold shows no two holders overlapping, the scripts never
 * see the ledger change under their lock, and every acknowledged question is in the ledger.
 */
class LockInteropTest {
    @TempDir
    Path dir;

    record Hold(long pid, long start, long end) {
    }

    @Test
    void ourLockAndThePlainLockFileProtocolExcludeEachOther() throws Exception {
        Path root = dir.resolve("project");
        Path state = root.resolve(".agentx/state/clarifications");
        Files.createDirectories(state);
        Path holds = dir.resolve("holds.log");
        List<Process> ours = new ArrayList<>();
        List<Process> plain = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            ours.add(Jvm.builder(AskWorker.class, root.toString(), "agent" + i, "15", holds.toString())
                    .redirectError(ProcessBuilder.Redirect.INHERIT).start());
        }
        for (int i = 0; i < 2; i++) {
            plain.add(Jvm.builder(PlainLockHolder.class, state.toString(), "25", holds.toString())
                    .redirectError(ProcessBuilder.Redirect.INHERIT).start());
        }
        Map<String, String> acked = new HashMap<>();
        for (Process p : ours) {
            String out = finish(p);
            for (String line : out.lines().toList()) {
                if (line.startsWith("ACK ")) {
                    String[] f = line.split(" ", 3);
                    assertEquals(null, acked.put(f[1], f[2]), "one id acknowledged twice: " + line);
                }
            }
            assertTrue(out.contains("DONE "), out);
        }
        for (Process p : plain) {
            String out = finish(p);
            assertTrue(out.contains("DONE violations=0"), "the ledger changed under a script's lock: " + out);
        }
        assertEquals(45, acked.size());

        List<Hold> log = new ArrayList<>();
        for (String line : Files.readAllLines(holds, StandardCharsets.UTF_8)) {
            String[] f = line.split(" ");
            log.add(new Hold(Long.parseLong(f[0]), Long.parseLong(f[1]), Long.parseLong(f[2])));
        }
        assertEquals(45 + 50, log.size(), "every hold logged");
        log.sort(Comparator.comparingLong(Hold::start));
        for (int i = 1; i < log.size(); i++) {
            assertTrue(log.get(i).start() >= log.get(i - 1).end(), "overlap: " + log.get(i - 1) + " and " + log.get(i));
        }

        Ledger ledger = LocalMode.open(root, Clock.systemUTC()).ledgers().read(1).orElseThrow();
        Map<String, String> inLedger = new HashMap<>();
        for (ClarificationRecord r : ledger.clarifications()) {
            inLedger.put(r.id(), r.thread().get(0).body());
        }
        assertEquals(acked, inLedger, "every acknowledged question in the ledger with its own text");
        Path runtime = root.resolve(".agentx/state/.runtime");
        try (java.util.stream.Stream<Path> files = Files.exists(runtime) ? Files.list(runtime)
                : java.util.stream.Stream.empty()) {
            assertEquals(List.of(), files.filter(p -> p.getFileName().toString().startsWith("issue-1.json.lock."))
                    .toList(), "the lock content files our processes reused are gone when they exit");
        }
    }

    private static String finish(Process p) throws IOException, InterruptedException {
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(120, TimeUnit.SECONDS), out);
        assertEquals(0, p.exitValue(), out);
        return out;
    }
}
