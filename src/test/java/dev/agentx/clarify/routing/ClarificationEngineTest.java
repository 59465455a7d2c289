package dev.agentx.clarify.routing;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.agentx.clarify.channel.Delivery;
import dev.agentx.clarify.app.LocalMode;
import dev.agentx.clarify.events.ClarificationEvent;
import dev.agentx.clarify.events.EventType;
import dev.agentx.clarify.protocol.ClarificationRecord;
import dev.agentx.clarify.protocol.ClarifyException;
import dev.agentx.clarify.protocol.EntryType;
import dev.agentx.clarify.protocol.ErrorCode;
import dev.agentx.clarify.protocol.Ledger;
import dev.agentx.clarify.protocol.Status;
import dev.agentx.clarify.status.AgentState;
import dev.agentx.clarify.status.AgentStatus;
import dev.agentx.clarify.support.MutableClock;
import dev.agentx.clarify.support.TestRoot;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ClarificationEngineTest {
    @TempDir
    Path dir;
    MutableClock clock;
    TestRoot root;
    LocalMode local;
    ClarificationEngine engine;
    List<ClarificationEvent> published;

    @BeforeEach
    void setUp() {
        clock = MutableClock.at("2026-02-26T10:00:00Z");
        root = new TestRoot(dir, clock);
        local = root.local();
        engine = local.engine();
        published = new ArrayList<>();
        local.events().subscribe(published::add);
    }

    private Outcome ask(String from, String to, String question) {
        return engine.execute(new ClarifyCommand.Ask(42, from, to, "Auth", question, true, List.of(), null));
    }

    @Test
    void happyPathRequestAnswerResolve() {
        Outcome asked = ask("engineer", "architect", "Which auth method?");
        assertEquals("CLR-42-001", asked.record().id());
        assertEquals(Status.PENDING, asked.record().status());
        assertEquals(1, asked.record().round());
        assertEquals(5, asked.record().maxRounds(), "blocking default");
        assertEquals(Instant.parse("2026-02-26T10:30:00Z"), asked.record().staleAfter(), "30 min SLA default");

        Map<String, AgentStatus> st = local.statuses().read();
        assertEquals(AgentState.BLOCKED_CLARIFICATION, st.get("engineer").status());
        assertEquals("architect", st.get("engineer").waitingOn());
        assertEquals("CLR-42-001", st.get("engineer").clarificationId());
        assertEquals(AgentState.CLARIFYING, st.get("architect").status());
        assertEquals("engineer", st.get("architect").respondingTo());

        clock.advance(Duration.ofMinutes(5));
        Outcome answered = engine.execute(new ClarifyCommand.Answer("CLR-42-001", "architect", "JWT."));
        assertEquals(Status.ANSWERED, answered.record().status());
        st = local.statuses().read();
        assertEquals(AgentState.WORKING, st.get("engineer").status());
        assertEquals(AgentState.WORKING, st.get("architect").status());

        Outcome resolved = engine.execute(new ClarifyCommand.Resolve("CLR-42-001", null, "Thanks"));
        assertEquals(Status.RESOLVED, resolved.record().status());
        assertEquals(Instant.parse("2026-02-26T10:05:00Z"), resolved.record().resolvedAt());
        ClarificationRecord r = local.ledgers().read(42).orElseThrow().find("CLR-42-001").orElseThrow();
        assertEquals(List.of(EntryType.QUESTION, EntryType.ANSWER, EntryType.RESOLUTION),
                r.thread().stream().map(e -> e.type()).toList());
        assertEquals("engineer", r.thread().get(2).from());

        assertEquals(List.of(EventType.REQUESTED, EventType.ANSWERED, EventType.RESOLVED),
                published.stream().map(ClarificationEvent::event).toList());
        ClarificationEvent first = published.get(0);
        assertEquals("CLR-42-001", first.clarificationId());
        assertEquals(42, first.issueNumber());
        assertEquals("engineer", first.fromAgent());
        assertEquals("architect", first.toAgent());
        assertEquals("Auth", first.topic());
        assertTrue(first.blocking());
        assertEquals(1, first.round());
        assertEquals(Status.PENDING, first.status());
    }

    @Test
    void eventsAreAppendedToJsonl() throws Exception {
        ask("engineer", "architect", "Q?");
        engine.execute(new ClarifyCommand.Answer("CLR-42-001", null, "A."));
        List<String> lines = Files.readAllLines(root.state().resolve("events.jsonl"));
        assertEquals(2, lines.size());
        assertTrue(lines.get(0).startsWith("{\"event\":\"clarification-requested\",\"clarificationId\":\"CLR-42-001\","
                + "\"issueNumber\":42,\"fromAgent\":\"engineer\",\"toAgent\":\"architect\",\"topic\":\"Auth\","
                + "\"blocking\":true,\"round\":1,\"status\":\"pending\",\"timestamp\":"), lines.get(0));
        assertTrue(lines.get(1).contains("\"event\":\"clarification-answered\""));
    }

    @Test
    void idsAreSequentialPerIssue() {
        assertEquals("CLR-42-001", ask("engineer", "architect", "one").record().id());
        assertEquals("CLR-42-002", ask("engineer", "product-manager", "two").record().id());
        Outcome other = engine.execute(new ClarifyCommand.Ask(7, "engineer", "architect", null, "three", true,
                List.of(), null));
        assertEquals("CLR-7-001", other.record().id());
        assertEquals("three", other.record().topic(), "topic derived from the question");
    }

    @Test
    void scopeViolationNamesAllowedTargetsAndWritesNothing() {
        var before = root.snapshot();
        ClarifyException e = assertThrows(ClarifyException.class, () -> ask("engineer", "reviewer", "Q?"));
        assertEquals(ErrorCode.SCOPE_VIOLATION, e.code());
        assertTrue(e.getMessage().contains("Agent 'engineer' cannot clarify with 'reviewer'. Allowed: [architect, "
                + "product-manager, ux-designer]"), e.getMessage());
        assertEquals(before, root.snapshot());
    }

    @Test
    void agentWithoutStepIsScopeViolation() {
        ClarifyException e = assertThrows(ClarifyException.class, () -> engine.execute(new ClarifyCommand.Ask(1,
                "product-manager", "architect", null, "Q?", true, List.of(), "bug")));
        assertEquals(ErrorCode.SCOPE_VIOLATION, e.code());
        assertTrue(e.getMessage().contains("has no step in workflow 'bug'"), e.getMessage());
    }

    @Test
    void blockingIsDowngradedWhereNotAllowed() {
        Outcome o = engine.execute(new ClarifyCommand.Ask(9, "engineer", "pm", null, "Q?", true, List.of(), "bug"));
        assertFalse(o.record().blocking());
        assertEquals(6, o.record().maxRounds(), "non-blocking default");
        assertEquals("product-manager", o.record().to(), "alias pm");
        assertTrue(o.notes().get(0).contains("Downgraded to non-blocking"), o.notes().toString());
        assertNull(local.statuses().read().get("engineer"), "a non-blocking request does not block the requester");
    }

    @Test
    void roundLimitRefusesFollowUpAndEscalatesWithSummary() {
        ask("engineer", "architect", "Q1");
        for (int round = 1; round <= 5; round++) {
            engine.execute(new ClarifyCommand.Answer("CLR-42-001", null, "A" + round));
            if (round < 5) {
                Outcome f = engine.execute(new ClarifyCommand.FollowUp("CLR-42-001", null, "Q" + (round + 1)));
                assertEquals(round + 1, f.record().round());
                assertEquals(Status.PENDING, f.record().status());
            }
        }
        ClarificationEngine.RoundLimitException e = assertThrows(ClarificationEngine.RoundLimitException.class,
                () -> engine.execute(new ClarifyCommand.FollowUp("CLR-42-001", null, "Q6")));
        assertEquals(ErrorCode.MAX_ROUNDS_EXCEEDED, e.code());
        assertTrue(e.getMessage().contains("CLR-42-001 reached max rounds (5). Auto-escalated"), e.getMessage());
        ClarificationRecord r = local.ledgers().read(42).orElseThrow().find("CLR-42-001").orElseThrow();
        assertEquals(Status.ESCALATED, r.status());
        assertEquals(5, r.round());
        String summary = r.thread().get(r.thread().size() - 1).body();
        assertTrue(summary.contains("Topic: Auth"), summary);
        assertTrue(summary.contains("refused: Q6"), summary);
        assertTrue(summary.contains("architect (target) last answered in round 5: A5"), summary);
        assertTrue(summary.contains("Rounds used: 5 of 5\n"), summary);
        assertTrue(summary.contains("agentx clarify resolve CLR-42-001 -m"), summary);
        assertEquals(ClarificationEngine.HUB, r.thread().get(r.thread().size() - 1).from());
        assertEquals(EventType.ESCALATED, published.get(published.size() - 1).event());
        assertEquals(AgentState.BLOCKED_CLARIFICATION, local.statuses().read().get("engineer").status(),
                "requester stays blocked until a human decides");
        assertEquals("human", local.statuses().read().get("engineer").waitingOn());

        Outcome human = engine.execute(new ClarifyCommand.Resolve("CLR-42-001", null, "Use JWT."));
        assertEquals(Status.RESOLVED, human.record().status());
        assertEquals("human", human.record().thread().get(human.record().thread().size() - 1).from());
        assertEquals(AgentState.WORKING, local.statuses().read().get("engineer").status());
    }

    @Test
    void theSummaryShortensEachPositionWithoutSplittingACharacter() {
        String emoji = "\uD83D\uDE00";
        ask("engineer", "architect", "q".repeat(296) + emoji + " and the rest of a long question");
        engine.execute(new ClarifyCommand.Escalate("CLR-42-001", "human", "a human decides"));
        ClarificationRecord r = local.ledgers().read(42).orElseThrow().find("CLR-42-001").orElseThrow();
        String summary = r.thread().get(r.thread().size() - 1).body();
        assertTrue(summary.contains("last asked in round 1: " + "q".repeat(296) + emoji + "...\n"), summary);
        // the summary counts answered rounds, and says so beside the record's round that is not answered
        assertTrue(summary.contains("Rounds used: 0 of 5 (round 1 asked, not answered)\n"), summary);
    }

    @Test
    void workflowMaxRoundsApplies() {
        root.write(".agentx/workflows/tight.toml", """
                [[steps]]
                id = "implement"
                agent = "engineer"
                can_clarify = ["architect"]
                clarify_max_rounds = 1
                clarify_sla_minutes = 5
                """);
        local = root.local();
        engine = local.engine();
        Outcome o = engine.execute(new ClarifyCommand.Ask(3, "engineer", "architect", null, "Q", true, List.of(), "tight"));
        assertEquals(1, o.record().maxRounds());
        assertEquals(Instant.parse("2026-02-26T10:05:00Z"), o.record().staleAfter());
        engine.execute(new ClarifyCommand.Answer("CLR-3-001", null, "A"));
        assertThrows(ClarificationEngine.RoundLimitException.class,
                () -> engine.execute(new ClarifyCommand.FollowUp("CLR-3-001", null, "more")));
    }

    @Test
    void followUpKeepsTheSla() {
        ask("engineer", "architect", "Q1");
        clock.advance(Duration.ofMinutes(10));
        engine.execute(new ClarifyCommand.Answer("CLR-42-001", null, "A1"));
        clock.advance(Duration.ofMinutes(10));
        Outcome f = engine.execute(new ClarifyCommand.FollowUp("CLR-42-001", null, "Q2"));
        assertEquals(Instant.parse("2026-02-26T10:50:00Z"), f.record().staleAfter());
    }

    /**
     * An agent resolving its own question (MCP, GitHub Mode's requester) is checked under the
     * issue's lock: a record escalated after the caller read it is left to a person, and nobody
     * but the requester closes it so. A person (the CLI) still closes either.
     */
    @Test
    void anAgentResolvesOnlyItsOwnQuestionAndNotOnceEscalated() {
        ask("engineer", "architect", "Q1");
        engine.execute(new ClarifyCommand.Answer("CLR-42-001", "architect", "A1"));
        ClarifyException other = assertThrows(ClarifyException.class,
                () -> engine.execute(new ClarifyCommand.Resolve("CLR-42-001", "architect", null, true)));
        assertEquals(ErrorCode.VALIDATION, other.code());
        assertEquals("Only the requester 'engineer' may resolve CLR-42-001, not 'architect'.", other.getMessage());

        engine.execute(new ClarifyCommand.Escalate("CLR-42-001", "architect", "needs PM"));
        Map<String, String> before = root.snapshot();
        ClarifyException escalated = assertThrows(ClarifyException.class,
                () -> engine.execute(new ClarifyCommand.Resolve("CLR-42-001", "engineer", "mine", true)));
        assertEquals(ErrorCode.INVALID_STATE, escalated.code());
        assertEquals("Cannot resolve it: CLR-42-001 is escalated (it waits for a person to resolve it).",
                escalated.getMessage());
        assertEquals(before, root.snapshot(), "a refusal writes nothing");

        Outcome person = engine.execute(new ClarifyCommand.Resolve("CLR-42-001", null, "Use JWT."));
        assertEquals(Status.RESOLVED, person.record().status());

        ask("engineer", "architect", "Q2");
        Outcome own = engine.execute(new ClarifyCommand.Resolve("CLR-42-002", "engineer", "Never mind.", true));
        assertEquals(Status.RESOLVED, own.record().status());
        assertEquals("engineer", own.record().thread().get(own.record().thread().size() - 1).from());
    }

    /** A topic left out is the question's first line that says something, not its code fence. */
    @Test
    void aDerivedTopicPassesOverCodeFencesAndSymbols() {
        assertEquals("Why does this fail?", Validation.deriveTopic("```java\nint x = 1;\n```\nWhy does this fail?"));
        assertEquals("int x = 1;", Validation.deriveTopic("```\nint x = 1;\n```"));
        assertEquals("Which one?", Validation.deriveTopic("---\n\\\nWhich one?"));
        assertEquals("clarification", Validation.deriveTopic("```\n```"));
    }

    @Test
    void illegalTransitionsAreInvalidState() {
        ask("engineer", "architect", "Q1");
        assertCode(ErrorCode.INVALID_STATE, new ClarifyCommand.FollowUp("CLR-42-001", null, "too early"));
        engine.execute(new ClarifyCommand.Answer("CLR-42-001", null, "A1"));
        assertCode(ErrorCode.INVALID_STATE, new ClarifyCommand.Answer("CLR-42-001", null, "again"));
        engine.execute(new ClarifyCommand.Escalate("CLR-42-001", null, "needs PM"));
        assertCode(ErrorCode.INVALID_STATE, new ClarifyCommand.Escalate("CLR-42-001", null, "again"));
        assertCode(ErrorCode.INVALID_STATE, new ClarifyCommand.Answer("CLR-42-001", null, "late"));
        assertCode(ErrorCode.INVALID_STATE, new ClarifyCommand.FollowUp("CLR-42-001", null, "late"));
        engine.execute(new ClarifyCommand.Abandon("CLR-42-001", null, "dropped"));
        for (ClarifyCommand c : List.of(new ClarifyCommand.Resolve("CLR-42-001", null, null),
                new ClarifyCommand.Abandon("CLR-42-001", null, null),
                new ClarifyCommand.Escalate("CLR-42-001", null, null),
                new ClarifyCommand.Answer("CLR-42-001", null, "x"))) {
            assertCode(ErrorCode.INVALID_STATE, c);
        }
        ClarificationRecord r = local.ledgers().read(42).orElseThrow().clarifications().get(0);
        assertEquals(Status.ABANDONED, r.status());
        assertEquals("Abandoned: dropped", r.thread().get(r.thread().size() - 1).body());
        assertEquals(EntryType.RESOLUTION, r.thread().get(r.thread().size() - 1).type());
    }

    @Test
    void wrongActorsAreRefused() {
        ask("engineer", "architect", "Q1");
        assertCode(ErrorCode.VALIDATION, new ClarifyCommand.Answer("CLR-42-001", "product-manager", "A"));
        engine.execute(new ClarifyCommand.Answer("CLR-42-001", "architect", "A"));
        assertCode(ErrorCode.VALIDATION, new ClarifyCommand.FollowUp("CLR-42-001", "architect", "Q"));
    }

    @Test
    void unknownIdsAndBadInputsWriteNothing() {
        ask("engineer", "architect", "Q1");
        var before = root.snapshot();
        assertCode(ErrorCode.NOT_FOUND, new ClarifyCommand.Answer("CLR-42-002", null, "A"));
        ClarifyException missing = assertThrows(ClarifyException.class,
                () -> engine.execute(new ClarifyCommand.Answer("CLR-42-002", null, "A")));
        assertTrue(missing.getMessage().endsWith("List the issue's records with 'agentx clarify --issue 42'."),
                missing.getMessage());
        assertCode(ErrorCode.NOT_FOUND, new ClarifyCommand.Answer("CLR-99-001", null, "A"));
        assertCode(ErrorCode.VALIDATION, new ClarifyCommand.Answer("CLR-42-1", null, "A"));
        assertCode(ErrorCode.VALIDATION, new ClarifyCommand.Answer("clr42", null, "A"));
        assertCode(ErrorCode.VALIDATION, new ClarifyCommand.Answer("CLR-42-001", null, " "));
        assertCode(ErrorCode.VALIDATION, new ClarifyCommand.Answer("CLR-42-001", null, "x".repeat(2001)));
        assertCode(ErrorCode.VALIDATION, new ClarifyCommand.Ask(42, "engineer", "architect", "t".repeat(201), "Q",
                true, List.of(), null));
        assertCode(ErrorCode.VALIDATION, new ClarifyCommand.Ask(42, "engineer", "architect", "", "Q", true, List.of(), null));
        assertCode(ErrorCode.VALIDATION, new ClarifyCommand.Ask(42, "engineer", "architect", "two\nlines", "Q", true,
                List.of(), null));
        assertCode(ErrorCode.VALIDATION, new ClarifyCommand.Ask(42, "enginer", "architect", null, "Q", true, List.of(), null));
        assertCode(ErrorCode.VALIDATION, new ClarifyCommand.Ask(42, "engineer", "archer", null, "Q", true, List.of(), null));
        assertCode(ErrorCode.VALIDATION, new ClarifyCommand.Ask(42, "engineer", "engineer", null, "Q", true, List.of(), null));
        assertCode(ErrorCode.VALIDATION, new ClarifyCommand.Ask(0, "engineer", "architect", null, "Q", true, List.of(), null));
        assertCode(ErrorCode.VALIDATION, new ClarifyCommand.Ask(42, "engineer", "architect", null, "Q", true, List.of(),
                "nosuch"));
        assertCode(ErrorCode.VALIDATION, new ClarifyCommand.Ask(42, "engineer", "architect", null, "x".repeat(2001), true,
                List.of(), null));
        assertEquals(before, root.snapshot());
        // 2000 characters is the limit, not past it
        assertEquals(Status.ANSWERED, engine.execute(new ClarifyCommand.Answer("CLR-42-001", null, "y".repeat(2000)))
                .record().status());
    }

    @Test
    void channelAnswerIsRecordedAsTheRoundsAnswer() {
        TestRoot auto = new TestRoot(dir.resolve("auto"), clock,
                req -> new Delivery.Answered("auto: " + req.question(), null, "test"));
        Outcome o = auto.local().engine().execute(new ClarifyCommand.Ask(5, "engineer", "architect", null, "Q?", true,
                List.of(), null));
        assertEquals(Status.ANSWERED, o.record().status());
        assertEquals("auto: Q?", o.record().lastAnswer().orElseThrow().body());
        assertEquals(List.of(EventType.REQUESTED, EventType.ANSWERED), o.events().stream().map(ClarificationEvent::event).toList());
    }

    @Test
    void failingChannelLeavesTheQuestionPending() {
        TestRoot failing = new TestRoot(dir.resolve("fail"), clock, req -> new Delivery.Failed("connection refused"));
        Outcome o = failing.local().engine().execute(new ClarifyCommand.Ask(5, "engineer", "architect", null, "Q?", true,
                List.of(), null));
        assertEquals(Status.PENDING, o.record().status());
        assertTrue(o.notes().get(0).contains("connection refused"), o.notes().toString());
    }

    @Test
    void ledgerJsonMatchesTheSchema() throws Exception {
        engine.execute(new ClarifyCommand.Ask(42, "engineer", "architect", "Auth", "Q?", true, List.of(), null));
        String json = Files.readString(root.state().resolve("clarifications/issue-42.json"));
        assertEquals("""
                {
                  "issueNumber" : 42,
                  "clarifications" : [
                    {
                      "id" : "CLR-42-001",
                      "from" : "engineer",
                      "to" : "architect",
                      "topic" : "Auth",
                      "blocking" : true,
                      "status" : "pending",
                      "round" : 1,
                      "maxRounds" : 5,
                      "created" : "2026-02-26T10:00:00Z",
                      "staleAfter" : "2026-02-26T10:30:00Z",
                      "resolvedAt" : null,
                      "thread" : [
                        {
                          "round" : 1,
                          "from" : "engineer",
                          "type" : "question",
                          "body" : "Q?",
                          "timestamp" : "2026-02-26T10:00:00Z"
                        }
                      ]
                    }
                  ]
                }
                """, json);
        Ledger back = local.ledgers().read(42).orElseThrow();
        assertEquals(1, back.clarifications().size());
    }

    private void assertCode(ErrorCode code, ClarifyCommand c) {
        ClarifyException e = assertThrows(ClarifyException.class, () -> engine.execute(c), c.toString());
        assertEquals(code, e.code(), e.getMessage());
        assertFalse(e.getMessage().isBlank());
    }
}
