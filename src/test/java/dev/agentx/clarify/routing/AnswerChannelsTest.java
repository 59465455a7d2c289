package dev.agentx.clarify.routing;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.agentx.clarify.channel.Delivery;
import dev.agentx.clarify.channel.FileChannelFailures;
import dev.agentx.clarify.channel.QuestionRequest;
import dev.agentx.clarify.app.LocalMode;
import dev.agentx.clarify.events.ClarificationEvent;
import dev.agentx.clarify.events.EventType;
import dev.agentx.clarify.monitor.Cause;
import dev.agentx.clarify.monitor.MonitorAction;
import dev.agentx.clarify.protocol.Autonomy;
import dev.agentx.clarify.protocol.ClarificationRecord;
import dev.agentx.clarify.protocol.ClarifyException;
import dev.agentx.clarify.protocol.EntryType;
import dev.agentx.clarify.protocol.ErrorCode;
import dev.agentx.clarify.protocol.Status;
import dev.agentx.clarify.protocol.ThreadEntry;
import dev.agentx.clarify.status.AgentState;
import dev.agentx.clarify.support.ChannelRoot;
import dev.agentx.clarify.support.MutableClock;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The engine with channels chosen per role from the config: choices, failures, autonomy. */
class AnswerChannelsTest {
    @TempDir
    Path dir;
    MutableClock clock;
    ChannelRoot root;

    @BeforeEach
    void setUp() {
        clock = MutableClock.at("2026-02-26T10:00:00Z");
        root = new ChannelRoot(dir, clock);
    }

    private static Outcome ask(LocalMode local, boolean blocking, List<String> options, String question) {
        return local.engine().execute(new ClarifyCommand.Ask(42, "engineer", "architect", "DB", question, blocking,
                options, null));
    }

    private static QuestionRequest requestOf(ClarificationRecord r) {
        return new QuestionRequest(r.id(), 42, r.from(), r.to(), r.topic(), r.round(),
                r.lastQuestion().orElseThrow().body(), r.options(), r.thread());
    }

    private ClarificationRecord stored(LocalMode local, String id) {
        return local.ledgers().read(42).orElseThrow().find(id).orElseThrow();
    }

    @Test
    void theAutoChannelAnswersWithTheDefaultOptionAndTheLedgerKeepsTheChoice() {
        root.config("[agents.architect]\nchannel = \"auto\"\n");
        Outcome o = ask(root.local(), true, List.of("PostgreSQL", "SQLite (default)"), "Which database?");
        assertEquals(Status.ANSWERED, o.record().status());
        ThreadEntry a = o.record().lastAnswer().orElseThrow();
        assertEquals("SQLite", a.body());
        assertEquals(1, a.choice());
        assertTrue(o.notes().contains("architect answered through its auto channel."), o.notes().toString());
        assertTrue(root.ledgerJson(42).replaceAll("\\s+", "").contains("{\"round\":1,\"from\":\"architect\","
                + "\"type\":\"answer\",\"body\":\"SQLite\",\"timestamp\":\"2026-02-26T10:00:00Z\",\"choice\":1}"),
                root.ledgerJson(42));
    }

    @Test
    void aHumanAnswerByNumberOrByTextRecordsTheChosenOption() {
        LocalMode local = root.local();
        String id = ask(local, true, List.of("PostgreSQL", "SQLite"), "Which database?").record().id();
        Outcome o = local.engine().execute(new ClarifyCommand.Answer(id, null, "2) it is embedded"));
        assertEquals(1, o.record().lastAnswer().orElseThrow().choice());
        String id2 = ask(local, true, List.of("PostgreSQL", "SQLite"), "And for tests?").record().id();
        assertEquals(0, local.engine().execute(new ClarifyCommand.Answer(id2, null, "postgresql"))
                .record().lastAnswer().orElseThrow().choice());
        String id3 = ask(local, true, List.of(), "Free text?").record().id();
        assertNull(local.engine().execute(new ClarifyCommand.Answer(id3, null, "1")).record().lastAnswer()
                .orElseThrow().choice(), "no options, no choice");
    }

    @Test
    void aCommandThatCannotAnswerLeavesThePendingRecordAndRepeatedFailureEscalatesWithTheError() throws Exception {
        root.script("agents/unsure.sh", "cat >/dev/null\necho 'CANNOT_ANSWER: not my area'\n");
        root.config("""
                [agents.architect]
                channel = "command"
                command = ["./agents/unsure.sh"]
                escalate_after_failures = 2
                """);
        LocalMode local = root.local();
        Outcome o = ask(local, true, List.of("PostgreSQL", "SQLite"), "Which database?");
        assertEquals(Status.PENDING, o.record().status());
        assertTrue(o.notes().get(0).contains("cannot answer: not my area (failure 1 of 2 before escalation)"),
                o.notes().toString());
        Path failures = root.state().resolve(FileChannelFailures.FILE);
        assertTrue(Files.readString(failures).contains("\"failures\" : 1"), Files.readString(failures));

        // The monitor's stale path asks again through the same channel: the second failure escalates.
        clock.advance(java.time.Duration.ofMinutes(31));
        Delivery d = local.channel().ask(requestOf(o.record()));
        assertTrue(assertInstanceOf(Delivery.Failed.class, d).error().contains("escalated to a human"), d.toString());
        ClarificationRecord r = stored(local, o.record().id());
        assertEquals(Status.ESCALATED, r.status());
        String summary = r.thread().get(r.thread().size() - 1).body();
        assertEquals(EntryType.ESCALATION, r.thread().get(r.thread().size() - 1).type());
        assertEquals("agentx", r.thread().get(r.thread().size() - 1).from());
        assertTrue(summary.startsWith("Escalated: channel: architect's command channel failed 2 times in a row on round 1; "
                + "last error: architect's command agent (./agents/unsure.sh) cannot answer: not my area"), summary);
        assertTrue(summary.contains("Options: 1) PostgreSQL 2) SQLite"), summary);
        assertFalse(Files.readString(failures).contains(o.record().id()), "counter cleared after escalating");
    }

    @Test
    void aFailureEscalatingAtOnceShowsInTheAsksOutcome() {
        root.config("[agents.architect]\nchannel = \"auto\"\nescalate_after_failures = 1\n");
        List<ClarificationEvent> seen = new ArrayList<>();
        LocalMode local = root.local();
        local.events().subscribe(seen::add);
        Outcome o = ask(local, true, List.of(), "No options, so auto cannot answer");
        assertEquals(Status.ESCALATED, o.record().status(), "the outcome shows the record as it is now");
        assertTrue(o.notes().get(0).contains("Escalated: a human decides"), o.notes().toString());
        assertEquals(List.of(EventType.REQUESTED, EventType.ESCALATED), seen.stream().map(ClarificationEvent::event).toList());
        assertEquals("human", local.statuses().read().get("engineer").waitingOn());
    }

    @Test
    void aSuccessResetsTheFailureCount() throws Exception {
        Path flag = dir.resolve("answer-now");
        root.script("agents/flaky.sh", "cat >/dev/null\nif [ -e '" + flag + "' ]; then echo 'Now I know.'; else exit 1; fi\n");
        root.config("[agents.architect]\nchannel = \"command\"\ncommand = [\"./agents/flaky.sh\"]\n");
        LocalMode local = root.local();
        Outcome o = ask(local, true, List.of(), "Q?");
        assertEquals(Status.PENDING, o.record().status());
        assertTrue(o.notes().get(0).contains("exited with code 1"), o.notes().toString());
        Files.writeString(flag, "");
        // the monitor's path: ask the channel again, then let the engine record what it delivered
        ClarificationRecord pending = stored(local, o.record().id());
        Delivery d = local.channel().ask(requestOf(pending));
        assertEquals(new Delivery.Answered("Now I know.", null, "command"), d);
        Outcome recorded = local.engine().delivered(42, pending, d);
        assertEquals(Status.ANSWERED, recorded.record().status());
        assertEquals("Now I know.", stored(local, o.record().id()).lastAnswer().orElseThrow().body());
        assertEquals("{ }\n", Files.readString(root.state().resolve(FileChannelFailures.FILE)));
    }

    @Test
    void approveMakesAnAgentsAnswerToABlockingQuestionAProposalThatAPersonAccepts() {
        root.config("autonomy = \"approve\"\n[agents.architect]\nchannel = \"auto\"\n");
        LocalMode local = root.local();
        List<ClarificationEvent> seen = new ArrayList<>();
        local.events().subscribe(seen::add);
        Outcome o = ask(local, true, List.of("PostgreSQL", "SQLite"), "Which database?");
        ClarificationRecord r = o.record();
        assertEquals(Status.PENDING, r.status(), "a proposal does not answer the round");
        assertEquals(Autonomy.APPROVE, r.autonomy());
        ThreadEntry p = r.pendingProposal().orElseThrow();
        assertEquals("PostgreSQL", p.body());
        assertEquals(0, p.choice());
        assertTrue(r.lastAnswer().isEmpty());
        assertEquals(0, r.answeredRounds());
        assertTrue(o.notes().get(0).contains("agentx clarify accept " + r.id()), o.notes().toString());
        assertEquals(List.of(EventType.REQUESTED), seen.stream().map(ClarificationEvent::event).toList());
        assertEquals(AgentState.BLOCKED_CLARIFICATION, local.statuses().read().get("engineer").status());
        assertTrue(root.ledgerJson(42).contains("\"autonomy\" : \"approve\""));
        assertTrue(root.ledgerJson(42).contains("\"proposed\" : true"));

        // asked again (the monitor's stale path): the agent is not asked twice while a person decides
        assertInstanceOf(Delivery.Deferred.class, local.channel().ask(requestOf(stored(local, r.id()))));
        assertThrows(ClarifyException.class, () -> local.engine().execute(new ClarifyCommand.FollowUp(r.id(), null, "?")));

        clock.advance(java.time.Duration.ofMinutes(3));
        Outcome accepted = local.engine().execute(new ClarifyCommand.Accept(r.id(), "alice"));
        assertEquals(Status.ANSWERED, accepted.record().status());
        ThreadEntry a = accepted.record().lastAnswer().orElseThrow();
        assertEquals("PostgreSQL", a.body());
        assertEquals("architect", a.from());
        assertEquals("alice", a.acceptedBy());
        assertEquals(0, a.choice());
        assertEquals(1, accepted.record().answeredRounds());
        assertEquals(EventType.ANSWERED, seen.get(seen.size() - 1).event());
        assertEquals(AgentState.WORKING, local.statuses().read().get("engineer").status());

        ClarifyException again = assertThrows(ClarifyException.class,
                () -> local.engine().execute(new ClarifyCommand.Accept(r.id(), null)));
        assertEquals(ErrorCode.INVALID_STATE, again.code());
    }

    /** A proposal nobody accepts goes stale without the agent being asked again, then is escalated, saying so. */
    @Test
    void anUnacceptedProposalGoesStaleWithoutAReaskAndIsEscalatedSayingSo() {
        root.config("autonomy = \"approve\"\n[agents.architect]\nchannel = \"auto\"\n");
        LocalMode local = root.local();
        String id = ask(local, true, List.of("PostgreSQL", "SQLite"), "Which database?").record().id();

        clock.advance(java.time.Duration.ofMinutes(31));
        List<MonitorAction> first = local.monitor().run().actions();
        assertEquals(1, first.size(), first.toString());
        String marked = assertInstanceOf(MonitorAction.MarkedStale.class, first.get(0)).describe();
        assertTrue(marked.startsWith(id + " stale: architect's proposed answer to round 1 was not accepted within the "
                + "SLA (30m, due 2026-02-26T10:30:00Z); architect not asked again: its proposed answer waits for a "
                + "person: 'agentx clarify accept " + id + "'; escalates after 2026-02-26T11:01:00Z unless a person "
                + "accepts or answers it"), marked);
        assertFalse(marked.contains("asked architect again"), marked);
        assertEquals(Status.STALE, stored(local, id).status());
        assertTrue(stored(local, id).pendingProposal().isPresent(), "a person may still accept it");

        clock.advance(java.time.Duration.ofMinutes(31));
        MonitorAction escalated = local.monitor().run().actions().get(0);
        assertEquals(Cause.STALE, assertInstanceOf(MonitorAction.Escalated.class, escalated).cause());
        ClarificationRecord r = stored(local, id);
        assertEquals(Status.ESCALATED, r.status());
        String summary = r.thread().get(r.thread().size() - 1).body();
        assertTrue(summary.startsWith("Escalated: stale: architect's proposed answer to round 1 was not accepted within "
                + "the SLA (30m, due 2026-02-26T10:30:00Z) nor within another SLA after it went stale (due "
                + "2026-02-26T11:01:00Z)\n"), summary);
        assertFalse(summary.contains("asked again"), summary);
        ClarifyException late = assertThrows(ClarifyException.class,
                () -> local.engine().execute(new ClarifyCommand.Accept(id, "alice")));
        assertEquals(ErrorCode.INVALID_STATE, late.code(), "an escalated record's proposal is not accepted");
    }

    @Test
    void underApproveAPersonMayAnswerInsteadAndNonBlockingAnswersCountAtOnce() {
        root.config("autonomy = \"approve\"\n[agents.architect]\nchannel = \"auto\"\n");
        LocalMode local = root.local();
        String id = ask(local, true, List.of("PostgreSQL", "SQLite"), "Which database?").record().id();
        Outcome human = local.engine().execute(new ClarifyCommand.Answer(id, null, "SQLite, we decided"));
        assertEquals(Status.ANSWERED, human.record().status());
        assertEquals(1, human.record().lastAnswer().orElseThrow().choice());
        assertTrue(human.record().thread().get(1).isProposal(), "the proposal stays in the thread");

        Outcome nb = ask(local, false, List.of("PostgreSQL", "SQLite"), "Which one for tests?");
        assertEquals(Status.ANSWERED, nb.record().status(), "approve only holds answers to blocking questions");

        ClarifyException e = assertThrows(ClarifyException.class,
                () -> local.engine().execute(new ClarifyCommand.Accept(nb.record().id(), null)));
        assertEquals(ErrorCode.INVALID_STATE, e.code());
        assertTrue(e.getMessage().contains("only a proposed answer of a pending round"), e.getMessage());
    }

    @Test
    void notifyCountsTheAnswerAndNamesThePeopleToTell() {
        root.config("""
                [roles]
                architect = ["octocat", "@acme/architects"]
                [agents.architect]
                channel = "auto"
                autonomy = "notify"
                """);
        Outcome o = ask(root.local(), true, List.of("A", "B"), "Pick?");
        assertEquals(Status.ANSWERED, o.record().status());
        assertEquals(Autonomy.NOTIFY, o.record().autonomy());
        assertTrue(o.notes().stream().anyMatch(n -> n.startsWith("notify: ") && n.contains("octocat, @acme/architects")),
                o.notes().toString());
    }

    @Test
    void autonomyComesFromTheRoleThenTheWorkflowThenTheConfig() {
        root.config("autonomy = \"notify\"\n[agents.architect]\nchannel = \"auto\"\nautonomy = \"full\"\n");
        root.script(".agentx/workflows/strict.toml", """
                [workflow]
                name = "strict"
                autonomy = "approve"
                [[steps]]
                id = "impl"
                agent = "engineer"
                can_clarify = ["architect", "product-manager"]
                """);
        LocalMode local = root.local();
        assertNull(ask(local, true, List.of("A"), "Role says full").record().autonomy());
        Outcome wf = local.engine().execute(new ClarifyCommand.Ask(42, "engineer", "product-manager", null, "Q?", true,
                List.of(), "strict"));
        assertEquals(Autonomy.APPROVE, wf.record().autonomy(), "workflow before the top-level value");
        Outcome top = local.engine().execute(new ClarifyCommand.Ask(42, "engineer", "product-manager", null, "Q?", true,
                List.of(), null));
        assertEquals(Autonomy.NOTIFY, top.record().autonomy());
    }
}
