package dev.agentx.clarify.monitor;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.agentx.clarify.app.LocalMode;
import dev.agentx.clarify.protocol.ClarificationRecord;
import dev.agentx.clarify.protocol.EntryType;
import dev.agentx.clarify.protocol.Ledger;
import dev.agentx.clarify.protocol.Status;
import dev.agentx.clarify.routing.ClarifyCommand;
import dev.agentx.clarify.support.Jvm;
import dev.agentx.clarify.support.MutableClock;
import dev.agentx.clarify.support.TestRoot;
import dev.agentx.clarify.support.Workflows;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Three monitor processes run their pass at the same moment: every action is taken exactly once. */
class MultiProcessMonitorTest {
    @TempDir
    Path dir;

    @Test
    void concurrentMonitorsDoNotDoubleAct() throws Exception {
        MutableClock clock = MutableClock.at("2026-02-26T08:00:00Z");
        TestRoot root = new TestRoot(dir, clock);
        Workflows.mesh(root);
        LocalMode local = root.local();
        // Issues 1-3: stale since 08:31, second timeout at 09:00.
        for (int i = 1; i <= 3; i++) {
            ask(local, i, "engineer", "architect", "Old " + i, "Old question " + i + "?", true);
        }
        clock.set(clock.instant().plus(Duration.ofMinutes(31)));
        assertEquals(3, local.monitor().run().actions().size());
        // Issues 4-9: overdue at 09:30.
        clock.set(java.time.Instant.parse("2026-02-26T09:00:00Z"));
        for (int i = 4; i <= 9; i++) {
            ask(local, i, "reviewer", "engineer", "Topic " + i, "Question " + i + "?", false);
        }
        // Issues 10-12 at 09:45: a deadlock across two issues and a stuck pair, not yet overdue at 10:00.
        clock.set(java.time.Instant.parse("2026-02-26T09:45:00Z"));
        ask(local, 10, "engineer", "architect", "API", "REST or gRPC?", true);
        ask(local, 11, "architect", "engineer", "Skills", "Do you know protobuf?", true);
        ask(local, 12, "product-manager", "reviewer", "Scope", "Is the export in scope?", false);
        ask(local, 12, "reviewer", "product-manager", "Scope", "Should I review the export?", false);

        int workers = 3;
        List<Process> procs = new ArrayList<>();
        for (int w = 0; w < workers; w++) {
            procs.add(Jvm.start(MonitorWorker.class, dir.toString(), "2026-02-26T10:00:00Z"));
        }
        List<BufferedReader> outs = new ArrayList<>();
        for (Process p : procs) {
            BufferedReader r = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
            assertEquals("READY", r.readLine());
            outs.add(r);
        }
        for (Process p : procs) { // all at once
            Writer in = new OutputStreamWriter(p.getOutputStream(), StandardCharsets.UTF_8);
            in.write("go\n");
            in.flush();
        }
        List<String> actions = new ArrayList<>();
        for (int w = 0; w < workers; w++) {
            for (String line = outs.get(w).readLine(); !"DONE".equals(line); line = outs.get(w).readLine()) {
                assertTrue(line != null && line.startsWith("ACTION "), "worker " + w + ": " + line);
                actions.add(line.substring("ACTION ".length()));
            }
            assertTrue(procs.get(w).waitFor(60, TimeUnit.SECONDS));
            assertEquals(0, procs.get(w).exitValue());
        }

        Map<String, Long> perAction = actions.stream().collect(Collectors.groupingBy(a -> a, TreeMap::new,
                Collectors.counting()));
        assertTrue(perAction.values().stream().allMatch(n -> n == 1), "each action once: " + perAction);
        assertEquals(List.of("escalated CLR-1-001", "escalated CLR-10-001", "escalated CLR-12-001",
                "escalated CLR-12-002", "escalated CLR-2-001", "escalated CLR-3-001", "stale CLR-4-001",
                "stale CLR-5-001", "stale CLR-6-001", "stale CLR-7-001", "stale CLR-8-001", "stale CLR-9-001"),
                List.copyOf(perAction.keySet()));

        List<String> asked = Files.readAllLines(dir.resolve("asked.log")).stream().sorted().toList();
        assertEquals(List.of("ASKED CLR-4-001", "ASKED CLR-5-001", "ASKED CLR-6-001", "ASKED CLR-7-001",
                "ASKED CLR-8-001", "ASKED CLR-9-001"), asked, "each stale target asked again exactly once");
        long staleEvents = Files.readAllLines(root.state().resolve("events.jsonl")).stream()
                .filter(l -> l.contains("\"clarification-stale\"")).count();
        assertEquals(3 + 6, staleEvents, "one clarification-stale event per record");
        for (int issue : local.ledgers().issues()) {
            Ledger l = local.ledgers().read(issue).orElseThrow();
            for (ClarificationRecord r : l.clarifications()) {
                long escalations = r.thread().stream().filter(e -> e.type() == EntryType.ESCALATION).count();
                assertEquals(r.status() == Status.ESCALATED ? 1 : 0, escalations, r.id());
            }
        }
        assertEquals(Status.PENDING, local.ledgers().read(11).orElseThrow().clarifications().get(0).status(),
                "the upstream side of the deadlock continues");
    }

    private static void ask(LocalMode local, int issue, String from, String to, String topic, String q, boolean blocking) {
        local.engine().execute(new ClarifyCommand.Ask(issue, from, to, topic, q, blocking, List.of(), null));
    }
}
