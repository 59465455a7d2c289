package dev.agentx.clarify.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.agentx.clarify.app.LocalMode;
import dev.agentx.clarify.support.MutableClock;
import dev.agentx.clarify.support.OnlyDocumentedState;
import dev.agentx.clarify.support.TestRoot.Run;
import dev.agentx.clarify.support.TestRoot;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/** What makes the CLI easy to pick up: completion, suggestions, clear errors for bad values. */
@ExtendWith(OnlyDocumentedState.class)
class CliConveniencesTest {
    @TempDir
    Path dir;
    TestRoot root;

    @BeforeEach
    void setUp() throws Exception {
        root = new TestRoot(dir.resolve("project"), MutableClock.at("2026-02-26T10:00:00Z"));
        Files.createDirectories(root.root.resolve(".agentx"));
    }

    @Test
    void completionScriptsAreValidBashAndOfferTheRealCommands() throws Exception {
        for (String shell : new String[] {"bash", "zsh"}) {
            Run r = root.cli("completion", shell);
            assertEquals(0, r.code(), r.err());
            assertTrue(r.out().contains("clarify") && r.out().contains("completion") && r.out().contains("--issue"),
                    "the script knows the command tree");
            Path script = dir.resolve("agentx-" + shell + ".sh");
            Files.writeString(script, r.out(), StandardCharsets.UTF_8);
            Process p = new ProcessBuilder("bash", "-n", script.toString()).redirectErrorStream(true).start();
            String said = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            assertTrue(p.waitFor(30, TimeUnit.SECONDS), "bash -n finished");
            assertEquals(0, p.exitValue(), "bash -n accepts the " + shell + " script: " + said);
        }
        // after 'agentx completion' the script offers the shells
        assertTrue(root.cli("completion", "bash").out().contains("=(\"bash\" \"zsh\")"), "the shells are offered");
        Run fish = root.cli("completion", "fish");
        assertEquals(2, fish.code());
        assertTrue(fish.err().contains("bash or zsh"), fish.err());
    }

    @Test
    void aMistypedCommandOrOptionGetsTheNearestOneSuggested() {
        Run command = root.cli("clarfy");
        assertEquals(2, command.code());
        assertTrue(command.err().contains("Did you mean 'clarify'?"), command.err());
        Run sub = root.cli("clarify", "shwo", "CLR-1-001");
        assertEquals(2, sub.code());
        assertTrue(sub.err().contains("'show'"), sub.err());
        Run option = root.cli("clarify", "--isue", "4");
        assertEquals(2, option.code());
        assertTrue(option.err().contains("'--issue'"), option.err());
        Run json = root.cli("--json", "clarfy");
        assertEquals(2, json.code());
        assertTrue(json.out().contains("Did you mean 'clarify'?"), json.out());
    }

    @Test
    void aBadPeriodIsOneLineNamingTheAcceptedForms() {
        for (String bad : new String[] {"7x", "yesterday", "2026-13-45", "2026-02-01T25:00:00Z", "-3d"}) {
            Run r = root.cli("clarify", "digest", "--since", bad);
            assertEquals(2, r.code(), bad + ": " + r.err());
            String first = r.err().lines().findFirst().orElse("");
            assertTrue(first.contains("30m, 12h, 7d or 2w") && first.contains("2026-02-01"), first);
            assertTrue(!r.err().contains("Exception") && !r.err().contains("\tat "), r.err());
            assertEquals(2, r.err().lines().count(), "the error and where to find help: " + r.err());
        }
    }

    @Test
    void initScaffoldsAProjectThatWorksAtOnceAndNeverOverwritesUnasked() throws Exception {
        Path fresh = Files.createDirectories(dir.resolve("fresh"));
        TestRoot project = new TestRoot(fresh, MutableClock.at("2026-02-26T10:00:00Z"));
        Run before = project.cli("clarify");
        assertEquals(0, before.code());
        assertTrue(before.err().contains("'agentx init'"), before.err());
        assertTrue(!Files.exists(fresh.resolve(".agentx")), "a read command writes nothing");

        Run init = project.cli("init");
        assertEquals(0, init.code(), init.err());
        assertTrue(init.out().contains("agentx clarify ask"), "says what to do next: " + init.out());
        assertTrue(init.out().startsWith("Created " + fresh.resolve(".agentx") + " with config.toml"), init.out());
        for (String f : new String[] {"config.toml", "workflows/feature.toml", "workflows/story.toml",
                "workflows/bug.toml", "workflows/epic.toml"}) {
            assertTrue(Files.isRegularFile(fresh.resolve(".agentx").resolve(f)), f);
        }
        Run ask = project.cli("clarify", "ask", "--issue", "1", "--from", "engineer", "--to", "architect", "Which auth?");
        assertEquals(0, ask.code(), ask.err());
        assertEquals("CLR-1-001\n", ask.out());
        assertEquals("", project.cli("clarify").err(), "no note once the project exists");

        Path config = fresh.resolve(".agentx/config.toml");
        Files.writeString(config, "default_workflow = \"bug\"\n");
        Run again = project.cli("init");
        assertEquals(2, again.code());
        assertTrue(again.err().contains(".agentx/config.toml") && again.err().contains("--force"), again.err());
        assertEquals("default_workflow = \"bug\"\n", Files.readString(config), "left alone");
        Run forced = project.cli("init", "--force");
        assertEquals(0, forced.code());
        assertTrue(forced.out().startsWith("Replaced in "), forced.out());
        assertTrue(Files.readString(config).contains("# [agents.architect]"), "replaced when forced");

        // a project in a folder of a project: init says whose .agentx/ it takes the place of
        Path inner = Files.createDirectories(fresh.resolve("sub/deeper"));
        Run nested = new TestRoot(inner, MutableClock.at("2026-02-26T10:00:00Z")).cli("init");
        assertEquals(0, nested.code(), nested.err());
        assertTrue(nested.out().contains("Note: " + fresh.resolve(".agentx") + " is in a folder above"), nested.out());
        assertTrue(!project.cli("init", "--force").out().contains("Note:"), "nothing above the outer one");

        // an .agentx/ that has state only (asked before init): init adds to it, and says so
        Path early = Files.createDirectories(dir.resolve("early"));
        TestRoot first = new TestRoot(early, MutableClock.at("2026-02-26T10:00:00Z"));
        assertEquals(0, first.cli("clarify", "ask", "--issue", "1", "--from", "engineer", "--to", "architect",
                "Which auth?").code());
        Run added = first.cli("init");
        assertEquals(0, added.code(), added.err());
        assertTrue(added.out().startsWith("Added to " + early.resolve(".agentx") + " config.toml"), added.out());
        assertTrue(Files.isRegularFile(early.resolve(".agentx/state/clarifications/issue-1.json")), "state kept");
    }

    @Test
    void theScaffoldedConfigLoadsAsItIsAndWithEveryExampleUncommented() throws Exception {
        Path fresh = Files.createDirectories(dir.resolve("cfg"));
        TestRoot project = new TestRoot(fresh, MutableClock.at("2026-02-26T10:00:00Z"));
        assertEquals(0, project.cli("init").code());
        Path config = fresh.resolve(".agentx/config.toml");
        dev.agentx.clarify.config.ConfigLoader.load(config);
        StringBuilder uncommented = new StringBuilder();
        for (String line : Files.readAllLines(config)) {
            boolean setting = line.matches("# (\\[[a-z.-]+\\]|[a-z_]+ *=.*)");
            uncommented.append(setting ? line.substring(2) : line).append('\n');
        }
        Files.writeString(config, uncommented);
        var loaded = dev.agentx.clarify.config.ConfigLoader.load(config);
        assertEquals("feature", loaded.defaultWorkflow());
        assertTrue(uncommented.toString().contains("\n[agents.product-manager]\n"), uncommented.toString());
    }

    /**
     * Help is written for 80 columns: rendered that wide, no word is split across lines (a token
     * of the wide rendering is a token of the 80-column one), and the footers (examples, exit
     * codes) fit as written, so picocli never breaks an example command in two.
     */
    @Test
    void everyHelpPageFitsEightyColumnsWithoutRaggedWraps() {
        java.util.List<String> problems = new java.util.ArrayList<>();
        CliContext ctx = new CliContext(new java.io.PrintWriter(new java.io.StringWriter()),
                new java.io.PrintWriter(new java.io.StringWriter()), java.util.Map.of(), dir, root.clock, false, c -> null);
        java.util.List<picocli.CommandLine> all = new java.util.ArrayList<>();
        collect(Commands.full(new Commands.Factory(ctx)), all);
        for (picocli.CommandLine cl : all) {
            String name = cl.getCommandSpec().qualifiedName();
            cl.setUsageHelpWidth(80);
            String narrow = cl.getUsageMessage(picocli.CommandLine.Help.Ansi.OFF);
            cl.setUsageHelpWidth(1000);
            cl.setUsageHelpLongOptionsMaxWidth(60);
            String wide = cl.getUsageMessage(picocli.CommandLine.Help.Ansi.OFF);
            narrow.lines().filter(l -> l.length() > 80).forEach(l -> problems.add(name + ": over 80: " + l));
            java.util.List<String> narrowTokens = java.util.List.of(narrow.strip().split("\\s+"));
            java.util.List<String> wideTokens = java.util.List.of(wide.strip().split("\\s+"));
            if (!narrowTokens.equals(wideTokens)) {
                for (int i = 0; i < Math.min(narrowTokens.size(), wideTokens.size()); i++) {
                    if (!narrowTokens.get(i).equals(wideTokens.get(i))) {
                        problems.add(name + ": a word split at 80 columns: '" + wideTokens.get(i) + "'");
                        break;
                    }
                }
            }
            for (String footer : cl.getCommandSpec().usageMessage().footer()) {
                if (footer.length() > 80) {
                    problems.add(name + ": footer line over 80: " + footer);
                }
            }
        }
        assertEquals(java.util.List.of(), problems);
    }

    private static void collect(picocli.CommandLine cl, java.util.List<picocli.CommandLine> out) {
        out.add(cl);
        cl.getSubcommands().values().forEach(sub -> collect(sub, out));
    }

    @Test
    void tablesFitTheTerminalByCuttingTheTextColumnAndJsonStaysWhole() throws Exception {
        String topic = "A topic long enough that no eighty column terminal can show it whole on one row";
        String title = "An issue title that is also far too long to be shown whole in eighty columns, cut";
        root.write(".agentx/issues/42.json", "{\"title\": \"" + title + "\", \"status\": \"In Progress\"}");
        Run ask = root.cli("clarify", "ask", "--issue", "42", "--from", "engineer", "--to", "architect", "--topic",
                topic, "Which auth method should the public API use, and why?");
        assertEquals(0, ask.code(), ask.err());
        java.util.Map<String, String> narrow = java.util.Map.of("COLUMNS", "80", "NO_COLOR", "1");
        for (String[] command : new String[][] {{"clarify"}, {"ready"}, {"state"}}) {
            Run r = root.cli(narrow, true, command);
            assertEquals(0, r.code(), r.err());
            for (String line : r.out().lines().toList()) {
                assertTrue(line.length() <= 80, String.join(" ", command) + ": " + line.length() + ": " + line);
            }
            Run wide = root.cli(command);
            assertTrue(r.out().lines().count() == wide.out().lines().count(), "one row per row, never wrapped");
        }
        assertTrue(root.cli(narrow, true, "clarify").out().contains("..."), "the topic is cut visibly");
        assertTrue(root.cli(Map.of("NO_COLOR", "1"), true, "clarify").out().contains("..."),
                "a terminal without COLUMNS is 80 wide");
        assertTrue(root.cli(narrow, true, "ready").out().contains("BLOCKED: Clarification pending"),
                "the marker stays whole");
        // narrower than a blocked row with a cut of what it waits on: that is left out, the marker kept whole
        String sixtyFive = root.cli(Map.of("COLUMNS", "65", "NO_COLOR", "1"), true, "ready").out();
        for (String line : sixtyFive.lines().toList()) {
            assertTrue(line.length() <= 65 && line.endsWith("BLOCKED: Clarification pending"), line.length() + ": " + line);
        }
        for (String[] command : new String[][] {{"clarify"}, {"ready"}, {"state"}}) {
            // shells and CI runners export COLUMNS: a file or a pipe still gets every character
            String piped = root.cli(narrow, command).out();
            assertTrue(!piped.contains("...") && piped.contains(command[0].equals("ready") ? title : "architect"),
                    String.join(" ", command) + " cut in a pipe: " + piped);
        }
        assertTrue(root.cli(narrow, "clarify").out().contains(topic), "a pipe is never cut");
        assertTrue(root.cli(narrow, true, "--json", "clarify").out().contains(topic), "JSON is never cut");
        assertTrue(root.cli(narrow, true, "--json", "ready").out().contains(title));
    }

    @Test
    void anIdIsMatchedExactlyNotWithStraySpaceOrNewline() {
        Run ask = root.cli("clarify", "ask", "--issue", "1", "--from", "engineer", "--to", "architect", "Which DB?");
        assertEquals(0, ask.code(), ask.err());
        for (String id : new String[] {"CLR-1-001\n", " CLR-1-001", "CLR-1-001 "}) {
            Run r = root.cli("clarify", "answer", id, "--from", "architect", "Postgres.");
            assertEquals(3, r.code(), "'" + id + "': " + r.err());
            assertTrue(r.err().startsWith("VALIDATION"), r.err());
        }
        assertEquals("pending", root.cli("--json", "clarify", "show", "CLR-1-001").out().contains("\"pending\"")
                ? "pending" : "changed", "nothing was answered");
    }

    @Test
    void controlCharactersFromAgentsNeverReachTheTerminalRaw() throws Exception {
        String hostile = "Which DB?\u0007\u001b[31mRED\u001b]0;owned\u0007\rover";
        Run ask = root.cli("clarify", "ask", "--issue", "1", "--from", "engineer", "--to", "architect", "--topic",
                "Storage", hostile);
        assertEquals(0, ask.code(), ask.err());
        for (boolean terminal : new boolean[] {false, true}) {
            for (String[] command : new String[][] {{"clarify", "--issue", "1"}, {"clarify", "show", "CLR-1-001"},
                    {"clarify"}, {"state"}, {"ready"}, {"clarify", "stale"}, {"clarify", "digest"},
                    {"clarify", "answer", "CLR-1-001\u001b[31m", "x"}}) {
                java.io.StringWriter out = new java.io.StringWriter();
                java.io.StringWriter err = new java.io.StringWriter();
                Main.run(command, new java.io.PrintWriter(out), new java.io.PrintWriter(err), java.util.Map.of(),
                        root.root, root.clock, terminal, c -> new LocalMode(c.resolvedRoot(), root.clock, root.locks(),
                                new dev.agentx.clarify.channel.HumanChannel()));
                // with colour on, the CLI's own colour sequences (ESC [ digits m) are the only ESC allowed
                String all = (out + "" + err).replaceAll("\u001b\\[[0-9;]*m", "");
                assertTrue(all.chars().noneMatch(c -> c == 0x1b || c == 0x07 || c == '\r'),
                        String.join(" ", command) + " printed a raw control character: " + all);
                assertTrue(!(out + "" + err).contains("\u001b[31mRED"), "the question's own colour is shown, not run");
            }
        }
        String shown = root.cli("clarify", "show", "CLR-1-001").out();
        assertTrue(shown.contains("\\u001b[31mRED") && shown.contains("\\u0007"), "made visible: " + shown);
        String json = root.cli("--json", "clarify", "show", "CLR-1-001").out();
        assertTrue(json.contains("\\u001B[31mRED") || json.contains("\\u001b[31mRED"), "JSON stays escaped JSON: " + json);
        assertEquals(hostile, new com.fasterxml.jackson.databind.ObjectMapper().readTree(json).at("/thread/0/body").asText(),
                "the ledger keeps the text as given");
    }
}
