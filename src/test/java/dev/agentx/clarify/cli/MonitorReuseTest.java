package dev.agentx.clarify.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.agentx.clarify.app.LocalMode;
import dev.agentx.clarify.channel.HumanChannel;
import dev.agentx.clarify.support.MutableClock;
import dev.agentx.clarify.support.OnlyDocumentedState;
import dev.agentx.clarify.support.TestRoot;
import dev.agentx.clarify.support.Workflows;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * The monitor pass after a read-only command works on the ledgers that command read (one scan per
 * command), and acts exactly as a pass that reads them itself.
 */
@ExtendWith(OnlyDocumentedState.class)
class MonitorReuseTest {
    @TempDir
    Path dir;
    final MutableClock clock = MutableClock.at("2026-02-26T10:00:00Z");

    /** One in-process run; {@code opened} receives the Local Mode it used. */
    private String[] run(TestRoot r, List<LocalMode> opened, String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        CliContext ctx = new CliContext(new PrintWriter(out), new PrintWriter(err), Map.of(), r.root, clock, false, c -> {
            LocalMode local = new LocalMode(c.resolvedRoot(), clock, r.locks(), new HumanChannel());
            opened.add(local);
            return local;
        });
        int code = Main.run(args, ctx, true);
        assertEquals(0, code, String.join(" ", args) + "\n" + err);
        return new String[] {out.toString(), err.toString()};
    }

    private TestRoot root(String name) {
        TestRoot r = new TestRoot(dir.resolve(name), clock);
        Workflows.mesh(r);
        List<LocalMode> ignored = new ArrayList<>();
        run(r, ignored, "clarify", "ask", "--issue", "1", "--from", "engineer", "--to", "architect", "Q1");
        run(r, ignored, "clarify", "ask", "--issue", "2", "--from", "architect", "--to", "reviewer", "Q2");
        run(r, ignored, "clarify", "ask", "--issue", "3", "--from", "reviewer", "--to", "product-manager", "Q3");
        run(r, ignored, "clarify", "ask", "--issue", "4", "--from", "engineer", "--to", "reviewer", "Q4");
        run(r, ignored, "clarify", "resolve", "CLR-4-001");
        return r;
    }

    @Test
    void theListAndTheFollowingPassReadEachLedgerOnce() {
        TestRoot r = root("once");
        for (String[] args : List.of(new String[] {"clarify"}, new String[] {"--json", "clarify"},
                new String[] {"clarify", "stale"}, new String[] {"ready"})) {
            List<LocalMode> opened = new ArrayList<>();
            run(r, opened, args);
            assertEquals(1, opened.size());
            assertEquals(3, opened.get(0).files().activeLedgers().ledgersRead(),
                    String.join(" ", args) + ": the three active ledgers, once (the closed one is known closed)");
        }
        List<LocalMode> opened = new ArrayList<>();
        run(r, opened, "clarify", "show", "CLR-1-001");
        assertEquals(3, opened.get(0).files().activeLedgers().ledgersRead(), "a pass after a command that scans nothing scans");
    }

    @Test
    void thePassAfterTheListActsAsAPassOfItsOwn() {
        TestRoot listed = root("listed");
        TestRoot monitored = root("monitored");
        clock.advance(Duration.ofMinutes(31));
        List<LocalMode> opened = new ArrayList<>();
        String[] list = run(listed, opened, "clarify");
        String[] monitor = run(monitored, opened, "monitor");
        List<String> listActions = new ArrayList<>();
        for (String line : list[1].split("\n")) {
            if (line.startsWith("monitor: ")) {
                listActions.add(line.substring("monitor: ".length()));
            }
        }
        List<String> monitorActions = new ArrayList<>(List.of(monitor[0].split("\n")));
        monitorActions.remove(monitorActions.size() - 1); // the "3 actions; checked ..." summary
        assertEquals(3, listActions.size(), list[1]);
        assertEquals(monitorActions, listActions);
        assertTrue(listActions.get(0).startsWith("CLR-1-001 stale"), listActions.toString());
        assertEquals(ledgers(monitored), ledgers(listed));
    }

    private static Map<String, String> ledgers(TestRoot r) {
        Map<String, String> all = new TreeMap<>(r.snapshot());
        all.keySet().removeIf(k -> !(k.contains("clarifications/issue-") && k.endsWith(".json")));
        return all;
    }
}
