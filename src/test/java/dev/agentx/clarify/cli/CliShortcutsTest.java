package dev.agentx.clarify.cli;

import static dev.agentx.clarify.cli.ShortcutRuns.run;
import static dev.agentx.clarify.cli.ShortcutRuns.state;

import dev.agentx.clarify.cli.ShortcutRuns.Result;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
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
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/**
 * The start-up shortcuts change nothing a user sees: every command line gives the same exit code,
 * stdout, stderr and files whether the list runs without picocli ({@link QuickList}) and other
 * commands on the lazy model ({@link Commands#lazy}), or everything on the full model.
 */
@ExtendWith(OnlyDocumentedState.class)
class CliShortcutsTest {
    @TempDir
    Path dir;

    /** One in-process run: exit code, stdout, stderr. */
    /** Two roots with the same clarifications, one per way of running. */
    private final class Twin {
        final MutableClock clock = MutableClock.at("2026-02-26T10:00:00Z");
        final TestRoot fast;
        final TestRoot full;

        Twin(String name) {
            fast = new TestRoot(dir.resolve(name + "-fast"), clock);
            full = new TestRoot(dir.resolve(name + "-full"), clock);
            for (TestRoot r : List.of(fast, full)) {
                Workflows.mesh(r);
                run(r, true, "clarify", "ask", "--issue", "1", "--from", "engineer", "--to", "architect", "--topic",
                        "API", "REST or gRPC?");
                run(r, true, "clarify", "ask", "--issue", "2", "--from", "architect", "--to", "product-manager", "Scope?");
                run(r, true, "clarify", "answer", "CLR-2-001", "Small.");
                run(r, true, "clarify", "ask", "--issue", "3", "--from", "engineer", "--to", "reviewer", "Colours?");
                run(r, true, "clarify", "resolve", "CLR-3-001", "-m", "Blue");
            }
        }

        /** Runs the command line both ways and checks they agree; returns the shortcut way's result. */
        Result same(String... args) {
            Result a = run(fast, true, args);
            Result b = run(full, false, args);
            String line = String.join(" ", args);
            assertEquals(b.code(), a.code(), line + "\n" + a.err() + "\n" + b.err());
            assertEquals(b.out().replace(full.root.toString(), "ROOT"), a.out().replace(fast.root.toString(), "ROOT"),
                    line);
            assertEquals(b.err().replace(full.root.toString(), "ROOT"), a.err().replace(fast.root.toString(), "ROOT"),
                    line);
            assertEquals(state(full), state(fast), line);
            return a;
        }
    }

    @Test
    void theListGivesTheSameOutputWithAndWithoutPicocli() {
        Twin t = new Twin("list");
        List<List<String>> lines = List.of(
                List.of("clarify"), List.of("--json", "clarify"), List.of("clarify", "--json"),
                List.of("clarify", "--issue", "1"), List.of("clarify", "--issue=2"), List.of("clarify", "--issue", "3"),
                List.of("--json", "clarify", "--issue", "1"), List.of("clarify", "--issue", "99"),
                List.of("clarify", "--issue", "0"), List.of("clarify", "--issue", "-1"), List.of("clarify", "--issue", "abc"),
                List.of("clarify", "--issue", "010"), List.of("clarify", "--issue", "0x1F"), List.of("clarify", "--issue"),
                List.of("clarify", "--issue", "1", "--issue", "2"), List.of("--issue", "1", "clarify"),
                List.of("clarify", "clarify"), List.of("--json", "--json", "clarify"), List.of("clarify", "--json=true"),
                List.of("clarify", "--"), List.of("clarify", "--issue", "12345678901"), List.of("clarify", "-h"),
                List.of("clarify", "--version"), List.of("clarify", "extra"), List.of("clarify", "@nofile"));
        for (List<String> line : lines) {
            t.same(line.toArray(String[]::new));
        }
        t.clock.advance(Duration.ofMinutes(31));
        Result stale = t.same("clarify");
        assertTrue(stale.err().contains("monitor: CLR-1-001 stale"), stale.err());
        assertEquals("", t.same("clarify").err(), "the second pass finds nothing to do");
    }

    @Test
    void theShowGivesTheSameOutputWithAndWithoutPicocli() {
        Twin t = new Twin("show");
        List<List<String>> lines = List.of(
                List.of("clarify", "show", "CLR-1-001"), List.of("--json", "clarify", "show", "CLR-2-001"),
                List.of("clarify", "--json", "show", "CLR-3-001"), List.of("clarify", "show", "CLR-9-001"),
                List.of("clarify", "show", "CLR-1-999"), List.of("clarify", "show", "nonsense"),
                List.of("clarify", "show", "CLR-1-001", "--json"), List.of("clarify", "show"),
                List.of("clarify", "show", "-h"), List.of("clarify", "show", "@nofile"),
                List.of("clarify", "show", "CLR-1-001", "CLR-2-001"), List.of("--json", "--json", "clarify", "show", "CLR-1-001"),
                List.of("clarify", "show", "--", "CLR-1-001"), List.of("clarify", "show", "ask"));
        for (List<String> line : lines) {
            t.same(line.toArray(String[]::new));
        }
        t.clock.advance(Duration.ofMinutes(31));
        Result stale = t.same("clarify", "show", "CLR-1-001");
        assertTrue(stale.err().contains("monitor: CLR-1-001 stale"), stale.err());
    }

    @Test
    void quickShowTakesOnlyPlainShowCommandLines() {
        assertEquals("CLR-1-001", QuickShow.parse(new String[] {"clarify", "show", "CLR-1-001"}).id());
        assertTrue(QuickShow.parse(new String[] {"--json", "--root=x", "clarify", "show", "CLR-1-001"}).json());
        assertNull(QuickShow.parse(new String[] {"clarify", "show", "CLR-1-001", "--json"}));
        assertNull(QuickShow.parse(new String[] {"clarify", "show", "--database-url", "u", "CLR-1-001"}));
        assertNull(QuickShow.parse(new String[] {"clarify", "show", "-x"}));
        assertNull(QuickShow.parse(new String[] {"clarify", "list"}));
    }

    @Test
    void theRootOptionAnywhereAndItsOddValues() throws Exception {
        Twin t = new Twin("root");
        for (TestRoot r : List.of(t.fast, t.full)) {
            Files.createDirectories(r.root.resolve("clarify/.agentx"));
        }
        t.same("--root", t.fast.root.toString(), "clarify");
        t.same("clarify", "--root", "elsewhere");
        t.same("--root=elsewhere", "clarify", "--json");
        t.same("--root", "clarify", "clarify");
        t.same("--root", "--json", "clarify");
        t.same("--root", "", "clarify");
        t.same("--root", "a", "clarify", "--root", "b");
        t.same("clarify", "--root");
        t.same("--root", "bad\u0000path", "clarify");
    }

    @Test
    void aRootThatIsNoFolderIsAUsageErrorOnEveryPath() throws Exception {
        Twin t = new Twin("noroot");
        for (List<String> line : List.of(List.of("--root", "/does/not/exist", "clarify", "list"),
                List.of("--root", "/does/not/exist", "clarify"), List.of("clarify", "--root", "missing", "--json"),
                List.of("--root", "/does/not/exist", "state"), List.of("--root", "/does/not/exist", "clarify", "ask",
                        "--issue", "1", "--from", "engineer", "--to", "architect", "Q?"))) {
            Result r = t.same(line.toArray(String[]::new));
            assertEquals(2, r.code(), line + ": " + r.err());
            assertTrue((r.out() + r.err()).contains("no such folder"), r.out() + r.err());
            assertFalse(r.out().contains("No active clarifications"), r.out());
        }
        Files.writeString(t.fast.root.resolve("a-file"), "x");
        Files.writeString(t.full.root.resolve("a-file"), "x");
        Result file = t.same("--root", "a-file", "clarify");
        assertEquals(2, file.code());
        assertTrue(file.err().contains("not a folder"), file.err());
    }

    @Test
    void clarifyListIsTheList() {
        Twin t = new Twin("listword");
        for (TestRoot r : List.of(t.fast, t.full)) {
            for (List<String> pair : List.of(List.of("clarify"), List.of("--json", "clarify"),
                    List.of("clarify", "--issue", "1"))) {
                List<String> withList = new ArrayList<>(pair);
                withList.add(withList.indexOf("clarify") + 1, "list");
                Result plain = run(r, false, pair.toArray(String[]::new));
                Result listed = run(r, true, withList.toArray(String[]::new));
                assertEquals(0, listed.code(), withList + ": " + listed.err());
                assertEquals(plain.out(), listed.out(), withList.toString());
            }
        }
        assertTrue(t.same("clarify", "list").out().contains("CLR-1-001"));
        assertTrue(t.same("clarify", "--help").out().contains("list"));
    }

    @Test
    void everyOtherCommandRunsAlikeOnTheLazyAndTheFullModel() {
        Twin t = new Twin("commands");
        List<List<String>> lines = new ArrayList<>(List.of(
                List.of(), List.of("--help"), List.of("-h"), List.of("--version"), List.of("-V"), List.of("frobnicate"),
                List.of("--json", "frobnicate"), List.of("hook"), List.of("--json", "hook"), List.of("clarify", "frobnicate"),
                List.of("clarify", "show", "CLR-1-001"), List.of("--json", "clarify", "show", "CLR-1-001"),
                List.of("clarify", "show", "CLR-9-001"), List.of("clarify", "show"), List.of("clarify", "show", "x", "y"),
                List.of("clarify", "ask", "--from", "engineer", "--to", "architect", "Q"),
                List.of("clarify", "ask", "--issue", "4", "--from", "engineer", "--to", "architect", "--topic", "show", "Q?"),
                List.of("clarify", "ask", "--issue", "5", "--from", "engineer", "--to", "reviewer", "Q?"),
                List.of("clarify", "answer", "CLR-1-001", "--from", "architect", "REST."),
                List.of("clarify", "followup", "CLR-1-001", "And", "errors?"),
                List.of("--json", "clarify", "escalate", "CLR-2-001", "-m", "decide"),
                List.of("clarify", "abandon", "CLR-4-001"), List.of("clarify", "accept", "CLR-1-001"),
                List.of("clarify", "stale"), List.of("--json", "clarify", "stale"), List.of("clarify", "digest"),
                List.of("clarify", "digest", "--since", "bogus"),
                List.of("hook", "start", "--agent", "engineer", "--issue", "1"),
                List.of("hook", "finish", "--agent", "nobody", "--issue", "1"), List.of("hook", "start", "--agent"),
                List.of("state"), List.of("--json", "state"), List.of("state", "--bogus"), List.of("ready"),
                List.of("ready", "extra"), List.of("gate", "--issue", "1"), List.of("--json", "gate", "--issue", "2"),
                List.of("gate"), List.of("monitor"), List.of("--json", "monitor"), List.of("serve", "--help"),
                List.of("sync", "--help"), List.of("clarify", "--version"), List.of("--version", "clarify"),
                List.of("clarify", "ask", "--help", "--issue", "3"), List.of("--", "clarify"), List.of("clarify", "--", "show")));
        for (CommandLine.Model.CommandSpec spec : allCommands()) {
            List<String> path = new ArrayList<>(List.of(spec.qualifiedName().split(" ")));
            path.remove(0);
            path.add("--help");
            lines.add(path);
        }
        for (List<String> line : lines) {
            t.same(line.toArray(String[]::new));
        }
    }

    private static List<CommandLine.Model.CommandSpec> allCommands() {
        List<CommandLine.Model.CommandSpec> out = new ArrayList<>();
        CliContext ctx = new CliContext(new PrintWriter(new StringWriter()), new PrintWriter(new StringWriter()), Map.of(),
                Path.of("."), MutableClock.at("2026-02-26T10:00:00Z"), false, c -> null);
        collect(Commands.full(new Commands.Factory(ctx)).getCommandSpec(), out);
        return out;
    }

    private static void collect(CommandLine.Model.CommandSpec spec, List<CommandLine.Model.CommandSpec> out) {
        out.add(spec);
        for (CommandLine sub : spec.subcommands().values()) {
            collect(sub.getCommandSpec(), out);
        }
    }

    @Test
    void theTreeNamesEachCommandAsItsAnnotationDoesAndHoldsEveryCommandOnce() {
        Set<Class<?>> seen = new HashSet<>();
        check(Commands.TREE, seen);
        assertEquals(32, seen.size());
    }

    private static void check(Commands.Node node, Set<Class<?>> seen) {
        CommandLine.Command annotation = node.type().getAnnotation(CommandLine.Command.class);
        assertNotNull(annotation, node.name());
        assertEquals(annotation.name(), node.name());
        assertEquals(0, annotation.subcommands().length, node.name() + ": subcommands come from the tree");
        assertTrue(seen.add(node.type()), node.name() + " twice");
        for (Commands.Node c : node.children()) {
            check(c, seen);
        }
    }

    @Test
    void theLazyModelBuildsOnlyTheCommandsTheLineNames() {
        CliContext ctx = new CliContext(new PrintWriter(new StringWriter()), new PrintWriter(new StringWriter()), Map.of(),
                Path.of("."), MutableClock.at("2026-02-26T10:00:00Z"), false, c -> null);
        CommandLine cl = Commands.lazy(new Commands.Factory(ctx), new String[] {"--json", "clarify", "ask", "--issue", "1"});
        CommandLine clarify = cl.getSubcommands().get("clarify");
        assertTrue(clarify.getCommand() instanceof ClarifyCommands);
        assertTrue(clarify.getSubcommands().get("ask").getCommand() instanceof ClarifyCommands.Ask);
        assertFalse(clarify.getSubcommands().get("show").getCommand() instanceof ClarifyCommands.Show);
        assertFalse(cl.getSubcommands().get("hook").getCommand() instanceof HookCommand);
        assertEquals(List.copyOf(Commands.full(new Commands.Factory(ctx)).getSubcommands().keySet()),
                List.copyOf(cl.getSubcommands().keySet()), "every name is there, in order");
    }

    @Test
    void quickListTakesOnlyPlainListCommandLines() {
        assertNotNull(QuickList.parse(new String[] {"clarify"}));
        assertNotNull(QuickList.parse(new String[] {"--json", "--root", "x", "clarify", "--issue", "7"}));
        assertEquals(7, QuickList.parse(new String[] {"clarify", "--issue=7", "--root=x"}).issue());
        assertNull(QuickList.parse(new String[] {}));
        assertNull(QuickList.parse(new String[] {"clarify", "show", "CLR-1-001"}));
        assertNull(QuickList.parse(new String[] {"clarify", "--issue", "007"}));
        assertNull(QuickList.parse(new String[] {"clarify", "--help"}));
        assertNull(QuickList.parse(new String[] {"--root", "@args", "clarify"}));
        assertFalse(Commands.TREE.children().isEmpty());
    }
}
