package dev.agentx.clarify.reliability;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.agentx.clarify.app.LocalMode;
import dev.agentx.clarify.ledger.LedgerWorker;
import dev.agentx.clarify.protocol.ClarificationRecord;
import dev.agentx.clarify.protocol.Ledger;
import dev.agentx.clarify.routing.ClarifyCommand;
import dev.agentx.clarify.support.Jvm;
import dev.agentx.clarify.support.OnlyDocumentedState;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Clock;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * Group commit under SIGKILL: four processes ask on one issue without pause, so their changes are
 * carried out by whichever of them holds the lock, and one of them is killed at a random moment,
 * twenty times (a holder in the middle of its batch, between its ledger write and its replies, a
 * waiter whose change another carries out). Every question acknowledged is in the ledger with its
 * own id and its event in the event log once, and no question is there twice.
 */
@ExtendWith(OnlyDocumentedState.class)
class GroupCommitKillTest {
    @TempDir
    Path root;

    private record Worker(Process process, Thread reader) {
    }

    @Test
    void killedHoldersAndWaitersLoseNothingAcknowledgedAndDoubleNothing() throws Exception {
        Random random = new Random(20261126L);
        Map<String, String> acknowledged = new ConcurrentHashMap<>(); // question -> id
        List<Worker> workers = new ArrayList<>();
        int started = 0;
        try {
            for (; started < 4; started++) {
                workers.add(start("w" + started, acknowledged));
            }
            for (int kill = 0; kill < 20; kill++) {
                long until = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(300 + random.nextInt(500));
                while (System.nanoTime() < until) {
                    Thread.sleep(10);
                }
                Worker victim = workers.remove(random.nextInt(workers.size()));
                victim.process().toHandle().destroyForcibly(); // SIGKILL
                assertTrue(victim.process().waitFor(30, TimeUnit.SECONDS));
                victim.reader().join(10_000);
                workers.add(start("w" + started++, acknowledged));
            }
        } finally {
            for (Worker w : workers) {
                w.process().toHandle().destroyForcibly();
                w.process().waitFor(30, TimeUnit.SECONDS);
                w.reader().join(10_000);
            }
        }
        assertTrue(acknowledged.size() > 50, "too little happened to tell: " + acknowledged.size());

        // one more ask: its turn carries out or removes whatever the dead left in the queue
        LocalMode local = LocalMode.open(root, Clock.systemUTC());
        local.engine().execute(new ClarifyCommand.Ask(1, "engineer", "architect", null, "last", false, List.of(), null));
        Ledger ledger = local.ledgers().read(1).orElseThrow();
        Map<String, String> asked = new HashMap<>();
        for (ClarificationRecord r : ledger.clarifications()) {
            String q = r.thread().get(0).body();
            String twice = asked.put(q, r.id());
            assertEquals(null, twice, "asked twice: " + q + " as " + twice + " and " + r.id());
        }
        acknowledged.forEach((q, id) -> assertEquals(id, asked.get(q), "acknowledged " + q + " as " + id));
        // and its event recorded once, also when the holder that wrote it died before its reply
        Map<String, Integer> requested = new HashMap<>();
        com.fasterxml.jackson.databind.ObjectMapper json = new com.fasterxml.jackson.databind.ObjectMapper();
        for (String line : java.nio.file.Files.readAllLines(root.resolve(".agentx/state/events.jsonl"))) {
            com.fasterxml.jackson.databind.JsonNode e = json.readTree(line);
            if (e.get("event").asText().equals("clarification-requested")) {
                requested.merge(e.get("clarificationId").asText(), 1, Integer::sum);
            }
        }
        acknowledged.forEach((q, id) -> assertEquals(1, requested.getOrDefault(id, 0), "events of " + id + " (" + q + ")"));
        String[] left = root.resolve(".agentx/state/.runtime/changes").toFile().list();
        for (String name : left == null ? new String[0] : left) {
            assertTrue(name.endsWith(".out") || name.startsWith("."), "left in the queue: " + name);
        }
    }

    private Worker start(String name, Map<String, String> acknowledged) throws Exception {
        Process p = Jvm.builder(LedgerWorker.class, "loop", root.toString(), "1", name)
                .redirectError(ProcessBuilder.Redirect.DISCARD).start();
        Thread reader = new Thread(() -> {
            try (BufferedReader out = new BufferedReader(new InputStreamReader(p.getInputStream(),
                    StandardCharsets.UTF_8))) {
                for (String line = out.readLine(); line != null; line = out.readLine()) {
                    String[] f = line.split(" ");
                    if (f.length == 3 && f[0].equals("ACK")) {
                        acknowledged.put(f[2], f[1]);
                    }
                }
            } catch (java.io.IOException e) {
                // the process was killed: what it printed before counts
            }
        });
        reader.start();
        return new Worker(p, reader);
    }
}
