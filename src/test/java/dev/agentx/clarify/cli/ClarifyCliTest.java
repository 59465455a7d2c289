package dev.agentx.clarify.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.agentx.clarify.app.LocalMode;
import dev.agentx.clarify.support.MutableClock;
import dev.agentx.clarify.support.OnlyDocumentedState;
import dev.agentx.clarify.support.TestRoot.Run;
import dev.agentx.clarify.support.TestRoot;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

@ExtendWith(OnlyDocumentedState.class)
class ClarifyCliTest {
    @TempDir
    Path dir;
    MutableClock clock;
    TestRoot root;
    final ObjectMapper json = new ObjectMapper();

    @BeforeEach
    void setUp() throws Exception {
        clock = MutableClock.at("2026-02-26T10:00:00Z");
        root = new TestRoot(dir, clock);
        Files.createDirectories(dir.resolve(".agentx"));
    }

    private Run ok(String... args) {
        Run r = root.cli(args);
        assertEquals(0, r.code(), r.err());
        return r;
    }

    @Test
    void askPrintsTheIdAndTheThreadRendersInSpecForm() {
        Run ask = ok("clarify", "ask", "--issue", "42", "--from", "engineer", "--to", "architect", "--topic", "Auth",
                "Which", "auth", "method?");
        assertEquals("CLR-42-001\n", ask.out());
        clock.advance(Duration.ofMinutes(5));
        ok("clarify", "answer", "CLR-42-001", "--from", "architect", "JWT with\n15 min expiry.");
        clock.advance(Duration.ofMinutes(1));
        assertEquals("CLR-42-001 resolved\n", ok("clarify", "resolve", "CLR-42-001", "-m", "Going with JWT").out());
        assertEquals("""
                CLR-42-001 [resolved] engineer -> architect  "Auth"  round 1/5, blocking
                [Round 1] engineer -> architect (2026-02-26T10:00:00Z)
                  Q: Which auth method?
                [Round 1] architect -> engineer (2026-02-26T10:05:00Z)
                  A: JWT with
                     15 min expiry.
                [RESOLVED] engineer (2026-02-26T10:06:00Z)
                  Going with JWT
                """, ok("clarify", "--issue", "42").out());
        assertEquals(ok("clarify", "--issue", "42").out(), ok("clarify", "show", "CLR-42-001").out());
        assertEquals("No active clarifications.\n", ok("clarify").out());
    }

    @Test
    void listShowsActiveRecordsAcrossIssues() {
        ok("clarify", "ask", "--issue", "1", "--from", "engineer", "--to", "architect", "Q one");
        ok("clarify", "ask", "--issue", "2", "--from", "architect", "--to", "pm", "--topic", "Scope", "Q two");
        clock.advance(Duration.ofMinutes(3));
        String out = ok("clarify").out();
        assertTrue(out.startsWith("ID "), out);
        assertTrue(out.contains("CLR-1-001 pending    engineer -> architect"), out);
        assertTrue(out.contains("architect -> product-manager"), out);
        assertTrue(out.contains("3m"), out);
    }

    @Test
    void jsonOnEveryCommandBeforeOrAfterTheSubcommand() throws Exception {
        JsonNode asked = json.readTree(ok("--json", "clarify", "ask", "--issue", "42", "--from", "engineer", "--to",
                "architect", "Q?").out());
        assertEquals("CLR-42-001", asked.get("id").asText());
        assertEquals("pending", asked.get("status").asText());
        assertEquals(42, asked.get("clarification").get("issueNumber").asInt());
        JsonNode list = json.readTree(ok("clarify", "--json").out());
        assertEquals("CLR-42-001", list.get("clarifications").get(0).get("id").asText());
        JsonNode ledger = json.readTree(ok("clarify", "--issue", "42", "--json").out());
        assertEquals(42, ledger.get("issueNumber").asInt());
        JsonNode shown = json.readTree(ok("clarify", "show", "--json", "CLR-42-001").out());
        assertEquals("architect", shown.get("to").asText());
        JsonNode answered = json.readTree(ok("clarify", "answer", "CLR-42-001", "A.", "--json").out());
        assertEquals("answered", answered.get("status").asText());
        assertEquals("resolved", json.readTree(ok("clarify", "resolve", "CLR-42-001", "--json").out())
                .get("status").asText());
    }

    @Test
    void everyErrorHasItsCodeExitCodeAndMessageAndChangesNothing() throws Exception {
        ok("clarify", "ask", "--issue", "42", "--from", "engineer", "--to", "architect", "Q?");
        Map<String, String> before = root.snapshot();
        expect(3, "SCOPE_VIOLATION", "Allowed: [architect, product-manager, ux-designer]",
                "clarify", "ask", "--issue", "42", "--from", "engineer", "--to", "reviewer", "Q?");
        expect(3, "NOT_FOUND", "CLR-42-007 not found", "clarify", "answer", "CLR-42-007", "A");
        expect(3, "NOT_FOUND", "not found", "clarify", "show", "CLR-8-001");
        expect(3, "INVALID_STATE", "still waits for architect's answer", "clarify", "followup", "CLR-42-001", "more?");
        expect(3, "VALIDATION", "expected CLR-<issue>-<seq>", "clarify", "resolve", "CLR-42");
        expect(3, "VALIDATION", "limit is 2000", "clarify", "answer", "CLR-42-001", "x".repeat(2001));
        expect(3, "VALIDATION", "limit is 200", "clarify", "ask", "--issue", "42", "--from", "engineer", "--to",
                "architect", "--topic", "t".repeat(201), "Q");
        expect(3, "VALIDATION", "Unknown requesting agent 'enginer'", "clarify", "ask", "--issue", "42", "--from",
                "enginer", "--to", "architect", "Q");
        expect(3, "VALIDATION", "Unknown workflow 'nope'", "clarify", "ask", "--issue", "42", "--from", "engineer",
                "--to", "architect", "--workflow", "nope", "Q");
        expect(3, "VALIDATION", "positive", "clarify", "ask", "--issue", "-3", "--from", "engineer", "--to",
                "architect", "Q");
        expect(2, "USAGE", "Missing required option: '--issue=N'", "clarify", "ask", "--from", "engineer", "--to",
                "architect", "Q");
        expect(2, "USAGE", "Unmatched argument", "clarify", "frobnicate");
        expect(2, "USAGE", "Invalid value for option '--issue'", "clarify", "--issue", "abc");
        assertEquals(before, root.snapshot());

        // LOCK_TIMEOUT: a live lock of another host; the fake clock makes the 5 s wait instant.
        Path lock = dir.resolve(".agentx/state/clarifications/issue-42.json.lock");
        Files.writeString(lock, "{\"pid\":1,\"timestamp\":\"" + clock.instant() + "\",\"agent\":\"x\",\"token\":\"t\","
                + "\"host\":\"elsewhere\"}");
        before = root.snapshot();
        expect(4, "LOCK_TIMEOUT", "Failed to acquire lock for issue-42.json", "clarify", "answer", "CLR-42-001", "A");
        assertEquals(before, root.snapshot());
        // and names who holds it, whichever way the change waited (its own turn, or queued for a holder's)
        for (String[] args : List.of(new String[] {"clarify", "answer", "CLR-42-001", "A"},
                new String[] {"clarify", "ask", "--issue", "42", "--from", "engineer", "--to", "architect", "Q2"})) {
            Files.writeString(lock, "{\"pid\":1,\"timestamp\":\"" + clock.instant() + "\",\"agent\":\"x\","
                    + "\"token\":\"t\",\"host\":\"elsewhere\"}");
            before = root.snapshot();
            expect(4, "LOCK_TIMEOUT", "It is held by 'x' (pid 1 on elsewhere, since " + clock.instant(), args);
            assertEquals(before, root.snapshot());
        }

        // MAX_ROUNDS_EXCEEDED writes the escalation, and says so
        Files.delete(lock);
        root.write(".agentx/workflows/short.toml", "[[steps]]\nid = \"i\"\nagent = \"engineer\"\n"
                + "can_clarify = [\"architect\"]\nclarify_max_rounds = 1\n");
        ok("clarify", "ask", "--issue", "43", "--workflow", "short", "--from", "engineer", "--to", "architect", "Q");
        ok("clarify", "answer", "CLR-43-001", "A");
        Run refused = root.cli("clarify", "followup", "CLR-43-001", "more?");
        assertEquals(3, refused.code());
        assertTrue(refused.err().startsWith("MAX_ROUNDS_EXCEEDED: CLR-43-001 reached max rounds (1). Auto-escalated"),
                refused.err());
        assertTrue(refused.out().contains("[ESCALATED] agentx"), refused.out());
        assertTrue(ok("clarify", "show", "CLR-43-001").out().contains("[escalated]"));
    }

    private void expect(int exit, String code, String message, String... args) throws Exception {
        Run text = root.cli(args);
        assertEquals(exit, text.code(), String.join(" ", args) + "\n" + text.err());
        assertTrue(text.err().startsWith(code + ": "), text.err());
        assertTrue(text.err().contains(message), text.err());
        assertEquals("", text.out().replaceAll("(?s)\\[ESCALATED].*", ""));

        String[] withJson = new String[args.length + 1];
        withJson[0] = "--json";
        System.arraycopy(args, 0, withJson, 1, args.length);
        Run j = root.cli(withJson);
        assertEquals(exit, j.code());
        JsonNode err = json.readTree(j.out()).get("error");
        assertEquals(code, err.get("code").asText(), j.out());
        assertTrue(err.get("message").asText().contains(message), j.out());
        assertTrue(j.err().startsWith(code + ": "), "code name on stderr too: " + j.err());
    }

    @Test
    void helpShowsExamplesAndVersionPrints() {
        Run help = ok("clarify", "ask", "--help");
        assertTrue(help.out().contains("Examples:"), help.out());
        assertTrue(help.out().contains("agentx clarify ask --issue 42"), help.out());
        assertTrue(ok("--help").out().contains("Exit codes:"));
        assertTrue(ok("--version").out().startsWith("agentx "));
    }

    /** A question that starts with '-' (a Markdown list of options) is refused with how to give it: after '--'. */
    @Test
    void aTextThatStartsWithADashIsToldToGoAfterTheOptions() {
        Run refused = root.cli("clarify", "ask", "--issue", "61", "--from", "engineer", "--to", "architect",
                "- JWT\n- Sessions");
        assertEquals(2, refused.code(), refused.err());
        assertTrue(refused.err().contains("A text that starts with '-' (- JWT - Sessions) goes after '--', which ends "
                + "the options: agentx clarify ask ... -- \"- JWT - Sessions\""), refused.err());
        assertEquals("CLR-61-001\n", ok("clarify", "ask", "--issue", "61", "--from", "engineer", "--to", "architect",
                "--", "- JWT\n- Sessions").out());
        Run typo = root.cli("clarify", "ask", "--issue", "61", "--from", "engineer", "--to", "architect", "-x", "Q");
        assertFalse(typo.err().contains("starts with '-'"), "an option's typo is not text: " + typo.err());
    }

    /** A run whose standard input is {@code stdin}; the process's System.in is never read. */
    private String withInput(String stdin, String... args) {
        java.io.StringWriter out = new java.io.StringWriter();
        java.io.StringWriter err = new java.io.StringWriter();
        CliContext ctx = new CliContext(new java.io.ByteArrayInputStream(stdin.getBytes(java.nio.charset.StandardCharsets.UTF_8)),
                java.io.OutputStream.nullOutputStream(), new java.io.PrintWriter(out), new java.io.PrintWriter(err),
                Map.of(), dir, clock, false, c -> root.local());
        assertEquals(0, Main.run(args, ctx, true), err.toString());
        return out.toString();
    }

    /** "-" as the text, and ingest's "-", read the command's own standard input (a daemon's client's). */
    @Test
    void aDashReadsTheCommandsStandardInput() throws Exception {
        assertEquals("CLR-62-001\n", withInput("Which\nauth?\n", "clarify", "ask", "--issue", "62", "--from", "engineer",
                "--to", "architect", "-"));
        withInput("JWT,\n15 min.", "clarify", "answer", "CLR-62-001", "--from", "architect", "-");
        String thread = ok("clarify", "show", "CLR-62-001").out();
        assertTrue(thread.contains("Q: Which\n     auth?"), thread);
        assertTrue(thread.contains("A: JWT,\n     15 min."), thread);
        String ingested = withInput("{\"open_questions\": [{\"id\": \"q1\", \"text\": \"Which cache?\"}]}", "clarify",
                "ingest", "--issue", "63", "--from", "engineer", "--to", "architect", "-");
        assertTrue(ingested.contains("CLR-63-001"), ingested);
    }

    /** A digest of a period that starts in the future is refused, not printed backwards. */
    @Test
    void aDigestSinceTheFutureIsRefused() {
        Run r = root.cli("clarify", "digest", "--since", "2030-01-01");
        assertEquals(2, r.code(), r.err());
        assertTrue(r.err().contains("--since 2030-01-01 is in the future"), r.err());
        ok("clarify", "digest", "--since", "2026-02-01");
    }

    /** --root is a project's folder: the commands of the server's data dir refuse it rather than ignore it. */
    @Test
    void theServersCommandsRefuseRoot() {
        for (List<String> command : List.of(List.of("deliveries"), List.of("serve"), List.of("setup", "--url",
                "https://agentx.example.com"))) {
            List<String> args = new java.util.ArrayList<>(List.of("--root", dir.toString()));
            args.addAll(command);
            Run r = root.cli(args.toArray(String[]::new));
            assertEquals(2, r.code(), command + ": " + r.err());
            assertTrue(r.err().contains("'agentx " + command.get(0) + "' works on the server's data dir: set "
                    + "AGENTX_DATA_DIR"), r.err());
        }
        Run store = root.cli("store", "copy", "--root", dir.toString(), "--from", "files:x", "--to", "files:y");
        assertEquals(2, store.code(), store.err());
        assertTrue(store.err().contains("'agentx store' works on the server's data dir"), store.err());
        // nor do they offer it in their help, where every other command does
        for (List<String> command : List.of(List.of("serve"), List.of("deliveries"), List.of("setup"), List.of("sync"),
                List.of("store"), List.of("store", "copy"))) {
            List<String> args = new java.util.ArrayList<>(command);
            args.add("--help");
            Run help = ok(args.toArray(String[]::new));
            assertFalse(help.out().contains("--root"), command + ": " + help.out());
        }
        assertTrue(ok("clarify", "ask", "--help").out().contains("--root=DIR"));
        assertTrue(ok("dashboard", "--help").out().contains("--root=DIR"));
    }

    /** With --json the help and the version are JSON on stdout too, as every other output. */
    @Test
    void helpAndVersionAreJsonWithJson() throws Exception {
        JsonNode help = json.readTree(ok("clarify", "ask", "--help", "--json").out());
        assertEquals("agentx clarify ask", help.get("command").asText(), help.toString());
        assertTrue(help.get("usage").asText().contains("Examples:"), help.toString());
        assertFalse(help.get("usage").asText().contains("\u001b["), "no colour in JSON");
        JsonNode top = json.readTree(ok("--json").out());
        assertEquals("agentx", top.get("command").asText());
        assertTrue(top.get("usage").asText().contains("Exit codes:"), top.toString());
        JsonNode version = json.readTree(ok("--json", "--version").out());
        assertTrue(version.get("text").asText().startsWith("agentx " + version.get("version").asText() + " "),
                version.toString());
        // the build's commit: a checkout's in full, or "unknown" outside one; the text has 12 digits of it
        String commit = version.get("commit").asText();
        assertTrue(commit.matches("[0-9a-f]{40}|unknown"), version.toString());
        assertTrue(version.get("text").asText().contains(" (commit " + commit.substring(0, Math.min(12, commit.length()))
                + ", AgentX Clarify, Java "), version.toString());
        assertEquals(json.readTree(ok("--json", "-V").out()), json.readTree(ok("clarify", "--version", "--json").out()));
    }

    @Test
    void colourOnlyOnATerminalWithoutNoColor() {
        ok("clarify", "ask", "--issue", "1", "--from", "engineer", "--to", "architect", "Q");
        assertFalse(ok("clarify").out().contains("\u001b["), "not a terminal");
        java.io.StringWriter out = new java.io.StringWriter();
        Main.run(new String[] {"clarify"}, new java.io.PrintWriter(out), new java.io.PrintWriter(new java.io.StringWriter()),
                Map.of(), dir, clock, true, ctx -> root.local());
        assertTrue(out.toString().contains("\u001b["), "terminal");
        out = new java.io.StringWriter();
        Main.run(new String[] {"clarify"}, new java.io.PrintWriter(out), new java.io.PrintWriter(new java.io.StringWriter()),
                Map.of("NO_COLOR", "1"), dir, clock, true, ctx -> root.local());
        assertFalse(out.toString().contains("\u001b["), "NO_COLOR");
    }

    @Test
    void rootIsFoundUpwardOrGiven() throws Exception {
        Path nested = dir.resolve("src/deep");
        Files.createDirectories(nested);
        assertEquals(dir.toAbsolutePath().normalize(), LocalMode.findRoot(null, nested));
        Path other = dir.resolve("other");
        assertEquals(other.toAbsolutePath().normalize(), LocalMode.findRoot(other, nested));
    }

    @Test
    void brokenConfigNamesFileLineAndKey() {
        root.write(".agentx/config.toml", "default_workflow = \"feature\"\ndefualt = 1\n");
        Run r = root.cli("clarify");
        assertEquals(3, r.code());
        assertTrue(r.err().contains("config.toml, line 2: field 'defualt' is not a known key"), r.err());
    }

    @Test
    void damagedLedgerIsReportedAndNotOverwritten() throws Exception {
        root.write(".agentx/state/clarifications/issue-4.json", "{\"issueNumber\": 4, \"clarifications\": [");
        Map<String, String> before = root.snapshot();
        Run r = root.cli("clarify", "ask", "--issue", "4", "--from", "engineer", "--to", "architect", "Q");
        assertEquals(1, r.code());
        assertTrue(r.err().contains("issue-4.json is damaged"), r.err());
        assertTrue(r.err().contains("line 1"), r.err());
        Map<String, String> after = root.snapshot();
        assertEquals(before.get(".agentx/state/clarifications/issue-4.json"),
                after.get(".agentx/state/clarifications/issue-4.json"));
    }
}
