package dev.agentx.clarify.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.agentx.clarify.support.ChannelRoot;
import dev.agentx.clarify.support.MutableClock;
import dev.agentx.clarify.support.OnlyDocumentedState;
import dev.agentx.clarify.support.TestRoot.Run;
import dev.agentx.clarify.support.TestRoot;
import dev.agentx.clarify.support.Workflows;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/** The monitor's commands, in-process: text, JSON, exit codes, and the pass that follows the trigger commands. */
@ExtendWith(OnlyDocumentedState.class)
class MonitorCliTest {
    @TempDir
    Path dir;
    MutableClock clock;
    TestRoot root;
    final ObjectMapper json = new ObjectMapper();

    @BeforeEach
    void setUp() {
        clock = MutableClock.at("2026-02-26T10:00:00Z");
        root = new TestRoot(dir, clock);
        Workflows.mesh(root);
    }

    private Run ok(String... args) {
        Run r = root.cli(args);
        assertEquals(0, r.code(), String.join(" ", args) + "\n" + r.out() + r.err());
        return r;
    }

    private JsonNode okJson(String... args) throws Exception {
        String[] withJson = new String[args.length + 1];
        withJson[0] = "--json";
        System.arraycopy(args, 0, withJson, 1, args.length);
        return json.readTree(ok(withJson).out());
    }

    private String ask(int issue, String from, String to, String topic, String question) {
        return ok("clarify", "ask", "--issue", String.valueOf(issue), "--from", from, "--to", to, "--topic", topic,
                question).out().trim();
    }

    @Test
    void theMonitorRunsAfterClarifyCommandsWithItsActionsOnStderr() {
        ask(1, "engineer", "architect", "API", "REST or gRPC?");
        Run second = ok("clarify", "ask", "--issue", "1", "--from", "architect", "--to", "engineer", "--topic", "Skills",
                "Do you know protobuf?");
        assertEquals("CLR-1-002\n", second.out(), "ask still prints just the id");
        assertTrue(second.err().startsWith("monitor: CLR-1-001 escalated (deadlock): engineer -> architect -> engineer"),
                second.err());

        clock.advance(Duration.ofMinutes(31));
        Run list = ok("--json", "clarify");
        json(list.out()); // stdout stays one JSON document
        assertTrue(list.err().contains("monitor: CLR-1-002 stale: engineer has not answered round 1 within the SLA"),
                list.err());
        assertEquals("", ok("clarify").err(), "the second pass finds nothing to do");
    }

    private JsonNode json(String text) {
        try {
            return json.readTree(text);
        } catch (Exception e) {
            throw new AssertionError("not JSON: " + text, e);
        }
    }

    @Test
    void noPassAfterHelpVersionOrARefusedCommand() {
        ask(1, "engineer", "architect", "API", "REST or gRPC?");
        clock.advance(Duration.ofHours(1));
        Map<String, String> before = root.snapshot();
        assertEquals("", ok("clarify", "--help").err());
        assertEquals("", ok("--version").err());
        assertEquals(3, root.cli("clarify", "answer", "CLR-1-009", "x").code());
        assertEquals(2, root.cli("hook").code(), "hook needs start or finish");
        assertEquals(before, root.snapshot(), "nothing ran");
        assertEquals("", ok("state").err(), "state only shows");
        assertEquals(before, root.snapshot());
    }

    @Test
    void monitorCommandPrintsActionsInTextAndJson() throws Exception {
        ask(1, "engineer", "architect", "API", "REST or gRPC?");
        clock.advance(Duration.ofMinutes(31));
        Run text = ok("monitor");
        assertEquals("""
                CLR-1-001 stale: architect has not answered round 1 within the SLA (30m, due 2026-02-26T10:30:00Z); \
                asked architect again (waiting for architect to answer CLR-1-001); escalates after \
                2026-02-26T11:01:00Z without an answer
                1 action; checked 1 active clarification in 1 ledger.
                """, text.out());
        assertEquals("Nothing to do: checked 1 active clarification in 1 ledger.\n", ok("monitor").out());
        clock.advance(Duration.ofMinutes(30));
        assertEquals(0, okJson("monitor").get("actions").size(), "a full SLA after the re-ask, exclusive");
        clock.advance(Duration.ofSeconds(1));
        JsonNode j = okJson("monitor");
        assertEquals(1, j.get("ledgers").asInt());
        JsonNode a = j.get("actions").get(0);
        assertEquals("escalated", a.get("kind").asText());
        assertEquals("stale", a.get("cause").asText());
        assertEquals("CLR-1-001", a.get("id").asText());
        assertEquals(1, a.get("issueNumber").asInt());
        assertEquals(0, okJson("monitor").get("actions").size());
    }

    @Test
    void clarifyStaleListsStaleStuckDeadlockedAndTheMonitorsEscalations() throws Exception {
        assertEquals("Nothing stale, stuck or deadlocked: checked 0 active clarifications.\n", ok("clarify", "stale").out());
        ask(1, "engineer", "architect", "API", "REST or gRPC?");
        clock.advance(Duration.ofMinutes(31));
        Run stale = ok("clarify", "stale");
        assertEquals("""
                Stale (1):
                  CLR-1-001 engineer -> architect "API" [pending]: architect has not answered round 1 within the SLA \
                (30m, due 2026-02-26T10:30:00Z)
                """, stale.out(), "listed as the command found it...");
        assertTrue(stale.err().contains("monitor: CLR-1-001 stale"), "...then the pass acts on it: " + stale.err());
        JsonNode j = okJson("clarify", "stale");
        assertEquals("waiting", j.get("stale").get(0).get("phase").asText());
        assertEquals("2026-02-26T11:01:00Z", j.get("stale").get(0).get("escalatesAt").asText());

        ask(2, "product-manager", "reviewer", "Skills", "Do you know protobuf?");
        ask(2, "reviewer", "product-manager", "Skills", "Do you know protobuf?");
        // the pass after the second ask escalated both as stuck
        String out = ok("clarify", "stale").out();
        assertTrue(out.startsWith("Stale (1):"), out);
        assertTrue(out.contains("Escalated by the monitor, waiting for a human (2):"), out);
        assertTrue(out.contains("CLR-2-001 product-manager -> reviewer \"Skills\" [escalated] (stuck): the topic "
                + "\"Skills\" is also asked the other way round in CLR-2-002"), out);
        assertTrue(out.contains("resolve with: agentx clarify resolve CLR-2-001 -m \"<decision>\""), out);
        JsonNode after = okJson("clarify", "stale");
        assertEquals(2, after.get("escalated").size());
        assertEquals("stuck", after.get("escalated").get(0).get("cause").asText());
        assertEquals(0, after.get("deadlocked").size());
        assertEquals(0, after.get("stuck").size());
    }

    /**
     * The re-ask of a stale record reaches the channel's failure limit: the pass reports the stale
     * mark and the escalation, and {@code clarify stale} lists the record as escalated.
     */
    @Test
    void aReaskThatReachesTheFailureLimitIsReportedEscalatedAndListed() throws Exception {
        ChannelRoot channels = new ChannelRoot(dir.resolve("channels"), clock);
        channels.script("agents/down.sh", "cat >/dev/null\necho 'service down' >&2\nexit 1\n");
        channels.config("""
                [agents.architect]
                channel = "command"
                command = ["./agents/down.sh"]
                escalate_after_failures = 2
                """);
        Run ask = channels.cli("clarify", "ask", "--issue", "2", "--from", "engineer", "--to", "architect", "--topic",
                "Cache", "Redis or memcached?");
        assertEquals(0, ask.code(), ask.out() + ask.err());
        assertTrue(ask.err().contains("failure 1 of 2 before escalation"), ask.err());
        channels.cli("clarify", "ask", "--issue", "3", "--from", "engineer", "--to", "architect", "--topic", "Queue",
                "Kafka or SQS?");

        clock.advance(Duration.ofMinutes(31));
        Run text = channels.cli("monitor");
        assertEquals(0, text.code(), text.out() + text.err());
        String[] lines = text.out().split("\n");
        assertEquals(5, lines.length, text.out());
        assertTrue(lines[0].startsWith("CLR-2-001 stale: architect has not answered round 1 within the SLA"), lines[0]);
        assertTrue(lines[0].contains("; no answer from architect when asked again: "), lines[0]);
        assertTrue(lines[0].endsWith("(failure 2 of 2; escalated to a human)"), lines[0]);
        assertTrue(lines[1].startsWith("CLR-2-001 escalated (channel): architect's command channel failed 2 times in a "
                + "row on round 1; last error: "), lines[1]);
        assertTrue(lines[2].startsWith("CLR-3-001 stale: "), lines[2]);
        assertTrue(lines[3].startsWith("CLR-3-001 escalated (channel): "), lines[3]);
        assertEquals("4 actions; checked 2 active clarifications in 2 ledgers.", lines[4]);
        assertFalse(text.out().contains("escalates after"), text.out());

        Run stale = channels.cli("clarify", "stale");
        assertTrue(stale.out().startsWith("Escalated by the monitor, waiting for a human (2):\n"
                + "  CLR-2-001 engineer -> architect \"Cache\" [escalated] (channel): architect's command channel failed "
                + "2 times in a row on round 1; last error: "), stale.out());
        assertTrue(stale.out().contains("resolve with: agentx clarify resolve CLR-2-001 -m \"<decision>\""), stale.out());
        JsonNode listed = json(channels.cli("--json", "clarify", "stale").out()).get("escalated");
        assertEquals(2, listed.size(), listed.toString());
        assertEquals("channel", listed.get(0).get("cause").asText());
        assertTrue(listed.get(0).get("why").asText().startsWith("architect's command channel failed 2 times"),
                listed.toString());
    }

    @Test
    void aReaskThatReachesTheFailureLimitIsAnEscalatedActionInJson() {
        ChannelRoot channels = new ChannelRoot(dir.resolve("channels"), clock);
        channels.script("agents/down.sh", "cat >/dev/null\nexit 1\n");
        channels.config("[agents.architect]\nchannel = \"command\"\ncommand = [\"./agents/down.sh\"]\n"
                + "escalate_after_failures = 2\n");
        channels.cli("clarify", "ask", "--issue", "2", "--from", "engineer", "--to", "architect", "Redis?");
        clock.advance(Duration.ofMinutes(31));
        Run run = channels.cli("--json", "monitor");
        assertEquals(0, run.code(), run.out() + run.err());
        JsonNode actions = json(run.out()).get("actions");
        assertEquals(2, actions.size(), actions.toString());
        assertEquals("stale", actions.get(0).get("kind").asText());
        assertFalse(actions.get(0).get("detail").asText().contains("escalates after"), actions.toString());
        assertEquals("escalated", actions.get(1).get("kind").asText());
        assertEquals("channel", actions.get(1).get("cause").asText());
        assertEquals("CLR-2-001", actions.get(1).get("id").asText());
        assertEquals(2, actions.get(1).get("issueNumber").asInt());
    }

    /** Times are shown to the second, so that the columns line up whatever the clock's fraction; --json keeps them whole. */
    @Test
    void stateShowsTimesToTheSecondInItsColumn() throws Exception {
        clock.advance(Duration.ofMillis(741));
        ask(42, "engineer", "architect", "API", "REST or gRPC?");
        ask(43, "reviewer", "engineer", "Tests", "Which suite?");
        assertEquals("""
                AGENT     STATUS                ISSUE  LAST ACTIVITY        CLARIFICATIONS
                architect clarifying            #42    2026-02-26T10:00:00Z answering CLR-42-001 from engineer
                engineer  clarifying            #43    2026-02-26T10:00:00Z waiting on architect for CLR-42-001
                                                                            answering CLR-43-001 from reviewer
                reviewer  blocked-clarification #43    2026-02-26T10:00:00Z waiting on engineer for CLR-43-001
                """, ok("state").out());
        assertEquals("2026-02-26T10:00:00.741Z", okJson("state").get("agents").get(2).get("lastActivity").asText());
    }

    @Test
    void hookSetsTheStatusAndStateShowsWhatEachWaitsOnAndAnswers() throws Exception {
        Run start = ok("hook", "start", "--agent", "Engineer", "--issue", "42");
        assertEquals("engineer is working on #42\n", start.out());
        ask(42, "engineer", "architect", "API", "REST or gRPC?");
        assertEquals("""
                AGENT     STATUS                ISSUE  LAST ACTIVITY        CLARIFICATIONS
                architect clarifying            #42    2026-02-26T10:00:00Z answering CLR-42-001 from engineer
                engineer  blocked-clarification #42    2026-02-26T10:00:00Z waiting on architect for CLR-42-001
                """, ok("state").out());
        clock.advance(Duration.ofMinutes(5));
        Run finish = ok("hook", "finish", "--agent", "engineer", "--issue", "42");
        assertEquals("engineer is done with #42\n", finish.out());
        assertEquals("note: engineer is waiting on architect for CLR-42-001\n", finish.err());
        JsonNode agents = okJson("state").get("agents");
        JsonNode eng = agents.get(1);
        assertEquals("engineer", eng.get("agent").asText());
        assertEquals("done", eng.get("status").asText());
        assertEquals(42, eng.get("issue").asInt());
        assertEquals("2026-02-26T10:05:00Z", eng.get("lastActivity").asText());
        assertEquals("CLR-42-001", eng.get("waitingFor").get(0).get("id").asText());
        assertEquals("architect", eng.get("waitingFor").get(0).get("waitsOn").asText());
        assertEquals("CLR-42-001", agents.get(0).get("answering").get(0).get("id").asText());
        JsonNode hook = okJson("hook", "start", "--agent", "pm", "--issue", "7");
        assertEquals("product-manager", hook.get("agent").asText());
        assertEquals("working", hook.get("status").asText());
    }

    @Test
    void hookRefusesUnknownAgentsAndBadIssues() throws Exception {
        Map<String, String> before = root.snapshot();
        Run bad = root.cli("hook", "start", "--agent", "enginer", "--issue", "4");
        assertEquals(3, bad.code());
        assertTrue(bad.err().startsWith("VALIDATION: Unknown agent 'enginer'. Known agents: product-manager"), bad.err());
        Run neg = root.cli("--json", "hook", "finish", "--agent", "engineer", "--issue", "0");
        assertEquals(3, neg.code());
        assertEquals("VALIDATION", json.readTree(neg.out()).get("error").get("code").asText());
        assertEquals(2, root.cli("hook", "start", "--agent", "engineer").code());
        assertEquals(before, root.snapshot());
    }

    @Test
    void readyListsOpenIssuesWithBlockedMarkers() throws Exception {
        root.write(".agentx/issues/7.json", """
                {"number": 7, "title": "Dark mode", "body": "...", "labels": ["type:feature"], "status": "Backlog",
                 "state": "open", "created": "2026-02-20T09:00:00Z", "comments": []}
                """);
        root.write(".agentx/issues/8.json", "{\"number\": 8, \"title\": \"Old\", \"state\": \"closed\"}");
        root.write(".agentx/issues/9.json", "{\"title\": ");
        root.write(".agentx/issues/notes.json", "{}");
        root.write(".agentx/issues/README.md", "not an issue");
        root.write(".agentx/issues/42.json", "{\"title\": \"Login\", \"status\": \"In Progress\"}");
        root.write(".agentx/issues/10.json", "{\"title\": \"Shipped\", \"status\": \"Done\", \"state\": \"open\"}");
        ask(42, "engineer", "architect", "API", "REST or gRPC?");
        String nb = ask(3, "engineer", "architect", "Docs", "Non-blocking?");
        ok("clarify", "ask", "--issue", "5", "--from", "engineer", "--to", "architect", "--non-blocking", "Q?");
        ok("clarify", "answer", nb, "Yes.");
        ok("clarify", "resolve", nb);
        Run ready = ok("ready");
        // finished work is left out: #8 closed, #10 Done, #3 known only by a ledger whose clarification is resolved
        assertEquals("""
                #5      -            (no title)
                #7      Backlog      Dark mode
                #42     In Progress  Login  BLOCKED: Clarification pending (CLR-42-001 engineer -> architect, pending)
                """, ready.out());
        assertEquals("""
                #3      -            (no title)
                #5      -            (no title)
                #7      Backlog      Dark mode
                #8      closed       Old
                #10     Done         Shipped
                #42     In Progress  Login  BLOCKED: Clarification pending (CLR-42-001 engineer -> architect, pending)
                """, ok("ready", "--all").out());
        assertTrue(ready.err().contains("9.json ignored: not valid JSON"), ready.err());
        assertTrue(ready.err().contains("notes.json ignored: an issue file is named after its number"), ready.err());
        JsonNode j = okJson("ready");
        assertEquals(3, j.get("issues").size());
        JsonNode last = j.get("issues").get(2);
        assertEquals(42, last.get("number").asInt());
        assertTrue(last.get("blocked").asBoolean());
        assertEquals("BLOCKED: Clarification pending", last.get("marker").asText());
        assertEquals("CLR-42-001", last.get("clarifications").get(0).get("id").asText());
        assertFalse(j.get("issues").get(1).get("blocked").asBoolean());
        assertEquals("type:feature", j.get("issues").get(1).get("labels").get(0).asText());
        assertEquals(6, okJson("ready", "--all").get("issues").size());
        assertEquals(2, j.get("warnings").size());
    }

    @Test
    void readyWithNothingAndTheMonitorRunsAfterIt() {
        assertEquals("No issues: none listed in .agentx/issues/ and no clarification ledgers.\n", ok("ready").out());
        ask(1, "engineer", "architect", "API", "REST or gRPC?");
        clock.advance(Duration.ofMinutes(31));
        assertTrue(ok("ready").err().contains("monitor: CLR-1-001 stale"));
        // an issue whose clarifications are all closed is finished: left out, and counted
        ok("clarify", "resolve", "CLR-1-001", "-m", "REST.");
        assertEquals("No open issues (1 finished: agentx ready --all lists it).\n", ok("ready").out());
        assertTrue(ok("ready", "--all").out().startsWith("#1 "), "listed with --all");
    }

    @Test
    void digestCountsAndRates() throws Exception {
        // three weeks ago: outside the default 7 days
        ask(1, "engineer", "architect", "Old topic", "Long ago?");
        clock.advance(Duration.ofDays(21));
        ask(2, "engineer", "architect", "Auth", "JWT?");                       // resolved in 2 rounds
        ok("clarify", "answer", "CLR-2-001", "Yes.");
        ok("clarify", "followup", "CLR-2-001", "Lifetime?");
        ok("clarify", "answer", "CLR-2-001", "15 minutes.");
        ok("clarify", "resolve", "CLR-2-001");
        ask(3, "engineer", "architect", "auth", "Sessions for the admin UI?"); // escalated by a person, then resolved
        ok("clarify", "escalate", "CLR-3-001");
        ok("clarify", "resolve", "CLR-3-001", "-m", "Sessions.");
        ask(4, "engineer", "product-manager", "Scope", "Is export in scope?"); // abandoned
        ok("clarify", "abandon", "CLR-4-001");
        ask(5, "reviewer", "engineer", "Tests", "Where are the tests?");      // goes stale
        clock.advance(Duration.ofMinutes(31));
        ok("monitor");
        ask(6, "engineer", "architect", "Queues", "Kafka?");                   // deadlock: this one is escalated
        ask(6, "architect", "engineer", "Load", "How many messages?");
        JsonNode d = okJson("clarify", "digest");
        assertEquals(6, d.get("total").asInt(), d.toString());
        assertEquals(2, d.get("resolved").asInt());
        assertEquals(1, d.get("autoResolved").asInt());
        assertEquals(2, d.get("escalated").asInt());
        assertEquals(1, d.get("abandoned").asInt());
        assertEquals(3, d.get("open").asInt());
        assertEquals(0.167, d.get("autoResolutionRate").asDouble());
        assertEquals(0.333, d.get("escalationRate").asDouble());
        assertEquals(1.17, d.get("averageRounds").asDouble());
        // CLR-5-001, and CLR-1-001: created before the period, it went stale in it
        assertEquals(2, d.get("staleCount").asInt());
        assertEquals(1, d.get("deadlockCount").asInt());
        assertEquals("auth", d.get("topics").get(0).get("topic").asText());
        assertEquals(2, d.get("topics").get(0).get("count").asInt());
        assertEquals("7d", d.get("period").asText());
        assertEquals("2026-03-19T10:31:00Z", d.get("until").asText());
        assertEquals("2026-03-12T10:31:00Z", d.get("since").asText());

        assertEquals(7, okJson("clarify", "digest", "--since", "4w").get("total").asInt());
        assertEquals(7, okJson("clarify", "digest", "--since", "2026-02-26").get("total").asInt());
        assertEquals(2, okJson("clarify", "digest", "--since", "2026-03-19T10:31:00Z").get("total").asInt(),
                "inclusive: the two created at that instant");
        clock.advance(Duration.ofMillis(1));
        assertEquals(0, okJson("clarify", "digest", "--since", "2026-03-19T10:31:00.001Z").get("total").asInt());
        clock.advance(Duration.ofMillis(-1));
        String text = ok("clarify", "digest").out();
        assertTrue(text.startsWith("Clarifications created 2026-03-12T10:31:00Z to 2026-03-19T10:31:00Z (last 7d)\n"), text);
        assertTrue(text.contains("  Auto-resolution rate: 16.7%  (target above 80%)\n"), text);
        assertTrue(text.contains("  Deadlocks:            1  (target 0)\n"), text);
        assertTrue(text.contains("  Most common topics:   auth (2), load (1), queues (1), scope (1), tests (1)\n"), text);
    }

    @Test
    void digestOfNothingAndBadPeriods() throws Exception {
        JsonNode d = okJson("clarify", "digest", "--since", "30m");
        assertEquals(0, d.get("total").asInt());
        assertTrue(d.get("autoResolutionRate").isNull());
        assertTrue(ok("clarify", "digest").out().contains("  Escalation rate:      n/a"));
        for (String bad : new String[] {"7", "0d", "7 days", "2026-02-30", "yesterday", "-3d"}) {
            Run r = root.cli("clarify", "digest", "--since", bad);
            assertEquals(2, r.code(), bad + ": " + r.err());
            assertTrue(r.err().contains("Invalid value for option '--since'"), r.err());
        }
        Files.createDirectories(root.state());
        Files.writeString(root.state().resolve("events.jsonl"), "{torn\n");
        assertEquals(0, okJson("clarify", "digest").get("warnings").size(), "only stale lines are parsed");
        Files.writeString(root.state().resolve("events.jsonl"), "{\"event\":\"clarification-stale\",torn\n",
                java.nio.file.StandardOpenOption.APPEND);
        assertTrue(ok("clarify", "digest").err().contains("1 line(s) of events.jsonl could not be read"));
    }
}
