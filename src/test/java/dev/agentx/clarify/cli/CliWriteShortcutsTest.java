package dev.agentx.clarify.cli;

import static dev.agentx.clarify.cli.ShortcutRuns.run;
import static dev.agentx.clarify.cli.ShortcutRuns.state;

import dev.agentx.clarify.cli.ShortcutRuns.Result;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.agentx.clarify.support.MutableClock;
import dev.agentx.clarify.support.OnlyDocumentedState;
import dev.agentx.clarify.support.TestRoot;
import dev.agentx.clarify.support.Workflows;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code clarify ask} and {@code clarify answer} without picocli ({@link QuickWrite}) change nothing
 * a user sees: each command line below gives the same exit code, stdout, stderr, ledgers, statuses
 * and events as on picocli's full model, run one after the other on two roots alike, so that each
 * line also meets the state the ones before it left.
 */
@ExtendWith(OnlyDocumentedState.class)
class CliWriteShortcutsTest {
    @TempDir
    Path dir;

    private final MutableClock clock = MutableClock.at("2026-02-26T10:00:00Z");

    @Test
    void askAndAnswerGiveTheSameOutputWithAndWithoutPicocli() throws Exception {
        TestRoot fast = new TestRoot(dir.resolve("fast"), clock);
        TestRoot full = new TestRoot(dir.resolve("full"), clock);
        for (TestRoot r : List.of(fast, full)) {
            Workflows.mesh(r);
            Files.createDirectories(r.root.resolve("sub"));
        }
        List<List<String>> lines = List.of(
                List.of("clarify", "ask", "--issue", "1", "--from", "engineer", "--to", "architect", "REST", "or", "gRPC?"),
                List.of("--json", "clarify", "ask", "--issue=2", "--from=engineer", "--to=architect", "--topic", "API",
                        "Which?"),
                List.of("clarify", "ask", "Options?", "--issue", "3", "--from", "engineer", "--to", "product-manager",
                        "--non-blocking", "--option", "Yes", "--option", "No", "--workflow", "feature"),
                List.of("clarify", "ask", "--json", "--issue", "4", "--from", "engineer", "--to", "architect", "Q?"),
                List.of("--root", "ROOT", "clarify", "ask", "--issue", "5", "--from", "engineer", "--to", "architect", "Q?"),
                List.of("--root=ROOT/sub", "clarify", "ask", "--issue", "5", "--from", "engineer", "--to", "architect", "Q?"),
                // refused by the engine: the same error on both paths
                List.of("clarify", "ask", "--issue", "6", "--from", "engineer", "--to", "nobody", "Q?"),
                List.of("clarify", "ask", "--issue", "6", "--from", "engineer", "--to", "architect", "--workflow", "nope",
                        "Q?"),
                List.of("--json", "clarify", "ask", "--issue", "6", "--from", "engineer", "--to", "architect",
                        "--topic", "x".repeat(201), "Q?"),
                // taken by picocli on both runs: usage errors, help, odd values
                List.of("clarify", "ask", "--from", "engineer", "--to", "architect", "Q?"),
                List.of("clarify", "ask", "--issue", "7", "--from", "engineer", "--to", "architect"),
                List.of("clarify", "ask", "--issue", "0", "--from", "engineer", "--to", "architect", "Q?"),
                List.of("clarify", "ask", "--issue", "07", "--from", "engineer", "--to", "architect", "Q?"),
                List.of("clarify", "ask", "--issue", "7", "--issue", "8", "--from", "engineer", "--to", "architect", "Q?"),
                List.of("clarify", "ask", "--issue", "7", "--from", "engineer", "--to", "architect", "-5", "or", "+5?"),
                List.of("clarify", "ask", "--issue", "7", "--from", "engineer", "--to", "architect", "--", "-5?"),
                List.of("clarify", "ask", "--issue", "7", "--from", "engineer", "--to", "architect", "--choice", "1", "Q"),
                List.of("clarify", "ask", "--issue", "7", "--from", "engineer", "--to", "architect", "--bogus", "Q"),
                List.of("clarify", "ask", "--issue", "7", "--from", "engineer", "--to", "architect", "--non-blocking=true",
                        "Q"),
                List.of("clarify", "ask", "--issue", "7", "--from", "engineer", "--to", "architect", "@nofile"),
                List.of("clarify", "ask", "--issue", "7", "--from", "engineer", "--to", "show", "Q"),
                List.of("clarify", "ask", "--help"), List.of("clarify", "answer", "-h"),
                List.of("--json", "--json", "clarify", "ask", "--issue", "7", "--from", "engineer", "--to", "architect", "Q"),
                List.of("--root", "missing", "clarify", "ask", "--issue", "7", "--from", "engineer", "--to", "architect",
                        "Q"),
                // answers
                List.of("clarify", "answer", "CLR-1-001", "REST."),
                List.of("--json", "clarify", "answer", "CLR-2-001", "--from", "architect", "Plain", "JSON."),
                List.of("clarify", "answer", "CLR-3-001", "--choice", "2", "No."),
                List.of("clarify", "answer", "--from=architect", "CLR-4-001", "Later."),
                List.of("clarify", "answer", "CLR-1-001", "Again."),
                List.of("clarify", "answer", "CLR-4-001", "--from", "engineer", "Me?"),
                List.of("clarify", "answer", "CLR-9-001", "Nobody."),
                List.of("clarify", "answer", "nonsense", "Text."),
                List.of("clarify", "answer", "CLR-5-001"),
                List.of("clarify", "answer", "CLR-5-001", "--choice", "0", "Zero."),
                List.of("clarify", "answer", "CLR-5-001", "--topic", "T", "Text."),
                List.of("clarify", "answer", "CLR-5-001", "-m", "Text."),
                List.of("clarify", "answer", "CLR-5-001", "--from", "architect", "--from", "architect", "Text."),
                List.of("clarify", "answer", "CLR-5-001", "--from", "architect", "Text."));
        for (List<String> line : lines) {
            // a relative --root is read against the JVM's folder, not the context's: ROOT stands for each root
            Result a = run(fast, true, line.stream().map(w -> w.replace("ROOT", fast.root.toString())).toArray(String[]::new));
            Result b = run(full, false, line.stream().map(w -> w.replace("ROOT", full.root.toString())).toArray(String[]::new));
            String shown = String.join(" ", line);
            assertEquals(b.code(), a.code(), shown + "\n" + a.err() + "\n" + b.err());
            assertEquals(b.out().replace(full.root.toString(), "ROOT"), a.out().replace(fast.root.toString(), "ROOT"),
                    shown);
            assertEquals(b.err().replace(full.root.toString(), "ROOT"), a.err().replace(fast.root.toString(), "ROOT"),
                    shown);
            assertEquals(state(full).toString().replace(full.root.toString(), "ROOT"),
                    state(fast).toString().replace(fast.root.toString(), "ROOT"), shown);
        }
        assertTrue(state(fast).keySet().stream().anyMatch(k -> k.contains("sub")), "--root=sub wrote there");
    }

    @Test
    void quickWriteTakesOnlyPlainAskAndAnswerCommandLines() {
        CliContext ctx = new CliContext(new PrintWriter(new StringWriter()), new PrintWriter(new StringWriter()), Map.of(),
                Path.of("."), clock, false, c -> null);
        QuickWrite.Args ask = QuickWrite.parse(new String[] {"--root", "r", "clarify", "ask", "--issue", "7", "--from",
            "engineer", "--to", "architect", "--option", "a", "--option", "b", "Why", "not?"}, ctx);
        assertNotNull(ask);
        assertEquals(Path.of("r"), ask.root());
        assertEquals(7, ask.ask().issue);
        assertEquals(List.of("a", "b"), ask.ask().options);
        assertEquals(List.of("Why", "not?"), ask.ask().question);
        QuickWrite.Args answer = QuickWrite.parse(new String[] {"clarify", "answer", "CLR-7-001", "--choice=2", "Yes"}, ctx);
        assertEquals("CLR-7-001", answer.answer().id);
        assertEquals(2, answer.answer().choice);
        assertNull(QuickWrite.parse(new String[] {"clarify", "ask", "--issue", "7", "--from", "e", "--to", "a", "-"}, ctx),
                "the text from stdin");
        assertNull(QuickWrite.parse(new String[] {"clarify", "answer", "CLR-7-001", "-"}, ctx));
        assertNull(QuickWrite.parse(new String[] {"clarify", "followup", "CLR-7-001", "Q"}, ctx));
        assertNull(QuickWrite.parse(new String[] {"clarify", "ask", "--issue", "7", "--from", "e", "--to", "a",
            "--database-url", "x", "Q"}, ctx));
    }
}
