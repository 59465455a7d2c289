package dev.agentx.clarify.monitor;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.agentx.clarify.channel.Delivery;
import dev.agentx.clarify.app.LocalMode;
import dev.agentx.clarify.events.EventType;
import dev.agentx.clarify.protocol.ClarificationRecord;
import dev.agentx.clarify.protocol.EntryType;
import dev.agentx.clarify.protocol.Status;
import dev.agentx.clarify.protocol.ThreadEntry;
import dev.agentx.clarify.routing.ClarificationEngine;
import dev.agentx.clarify.routing.ClarifyCommand;
import dev.agentx.clarify.status.AgentState;
import dev.agentx.clarify.support.MutableClock;
import dev.agentx.clarify.support.RecordingChannel;
import dev.agentx.clarify.support.TestRoot;
import dev.agentx.clarify.support.Workflows;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The monitor's stale, stuck and deadlock detection (docs/monitor.md), driven by a fake clock. */
class MonitorScenariosTest {
    @TempDir
    Path dir;
    MutableClock clock;
    RecordingChannel channel;
    TestRoot root;
    LocalMode local;
    ClarificationEngine engine;
    ClarificationMonitor monitor;

    @BeforeEach
    void setUp() {
        clock = MutableClock.at("2026-02-26T10:00:00Z");
        channel = new RecordingChannel();
        root = new TestRoot(dir, clock, channel);
        Workflows.mesh(root);
        local = root.local();
        engine = local.engine();
        monitor = local.monitor();
    }

    private String ask(int issue, String from, String to, String topic, String question, boolean blocking) {
        return engine.execute(new ClarifyCommand.Ask(issue, from, to, topic, question, blocking, List.of(), null))
                .record().id();
    }

    private ClarificationRecord record(String id) {
        int issue = Integer.parseInt(id.split("-")[1]);
        return local.ledgers().read(issue).orElseThrow().find(id).orElseThrow();
    }

    private static ThreadEntry last(ClarificationRecord r) {
        return r.thread().get(r.thread().size() - 1);
    }

    private List<String> staleEvents() throws Exception {
        return Files.readAllLines(root.state().resolve("events.jsonl")).stream()
                .filter(l -> l.contains("\"" + EventType.STALE.wire() + "\"")).toList();
    }

    // ---- stale ---------------------------------------------------------------------------------

    @Test
    void staleDetectionMarksOnceAsksAgainOnceAndEscalatesOnTheSecondTimeout() throws Exception {
        String id = ask(42, "engineer", "architect", "Auth", "Which auth method?", true);
        assertEquals(1, channel.asked.size(), "the ask itself");

        clock.set(Instant.parse("2026-02-26T10:30:00Z"));
        assertTrue(monitor.run().actions().isEmpty(), "at staleAfter exactly it is not yet stale");

        clock.set(Instant.parse("2026-02-26T10:31:00Z"));
        MonitorReport first = monitor.run();
        assertEquals(1, first.actions().size(), first.actions().toString());
        MonitorAction.MarkedStale marked = assertInstanceOf(MonitorAction.MarkedStale.class, first.actions().get(0));
        assertEquals(id, marked.id());
        assertTrue(marked.describe().contains("architect has not answered round 1 within the SLA (30m"), marked.describe());
        assertEquals(Status.STALE, record(id).status());
        assertEquals(Instant.parse("2026-02-26T10:30:00Z"), record(id).staleAfter(), "staleAfter is kept");
        assertEquals(Instant.parse("2026-02-26T10:31:00Z"), record(id).reaskedAt(), "when it was asked again");
        assertEquals(1, record(id).thread().size(), "no thread entry for going stale");
        assertEquals(1, staleEvents().size());
        assertEquals(2, channel.asked.size(), "the target was asked again");
        assertEquals("Which auth method?", channel.asked.get(1).question());
        assertEquals(AgentState.BLOCKED_CLARIFICATION, local.statuses().read().get("engineer").status());

        clock.set(Instant.parse("2026-02-26T11:00:00Z"));
        assertTrue(monitor.run().actions().isEmpty(), "asked again: nothing more until the second timeout");
        clock.set(Instant.parse("2026-02-26T11:01:00Z"));
        assertTrue(monitor.run().actions().isEmpty(), "the second timeout is a full SLA after the re-ask, exclusive");
        assertEquals(1, staleEvents().size(), "marked stale once");
        assertEquals(2, channel.asked.size(), "asked again once");

        clock.set(Instant.parse("2026-02-26T11:01:00.001Z"));
        MonitorReport second = monitor.run();
        MonitorAction.Escalated esc = assertInstanceOf(MonitorAction.Escalated.class, second.actions().get(0));
        assertEquals(Cause.STALE, esc.cause());
        ClarificationRecord r = record(id);
        assertEquals(Status.ESCALATED, r.status());
        assertEquals(ClarificationEngine.HUB, last(r).from());
        String summary = last(r).body();
        assertTrue(summary.startsWith("Escalated: stale: architect did not answer round 1 within the SLA (30m"), summary);
        assertTrue(summary.contains("nor within another SLA after being asked again"), summary);
        assertTrue(summary.contains("Resolve with: agentx clarify resolve " + id), summary);
        assertEquals("human", local.statuses().read().get("engineer").waitingOn());

        clock.advance(Duration.ofDays(3));
        assertTrue(monitor.run().actions().isEmpty(), "escalated records wait for a human");
        assertEquals(2, channel.asked.size());
    }

    @Test
    void anAnswerOnAskingAgainIsRecordedAsTheRoundsAnswer() {
        String id = ask(7, "engineer", "architect", "Cache", "Redis or memcached?", true);
        channel.reply(q -> new Delivery.Answered("Redis.", null, "command"));
        clock.advance(Duration.ofMinutes(45));
        MonitorReport report = monitor.run();
        assertEquals(List.of("stale", "answered"), report.actions().stream().map(MonitorAction::kind).toList());
        ClarificationRecord r = record(id);
        assertEquals(Status.ANSWERED, r.status());
        assertEquals("Redis.", r.lastAnswer().orElseThrow().body());
        assertEquals("architect", r.lastAnswer().orElseThrow().from());
        assertTrue(monitor.run().actions().isEmpty());
    }

    @Test
    void aFailingChannelLeavesItStaleAndTheSecondTimeoutStillEscalates() {
        String id = ask(7, "engineer", "architect", "Cache", "Redis or memcached?", false);
        channel.reply(q -> {
            throw new IllegalStateException("agent crashed");
        });
        clock.advance(Duration.ofMinutes(31));
        MonitorAction a = monitor.run().actions().get(0);
        assertTrue(a.describe().contains("no answer from architect when asked again"), a.describe());
        assertEquals(Status.STALE, record(id).status());
        clock.advance(Duration.ofMinutes(31));
        assertEquals(Status.ESCALATED, record(monitor.run().actions().get(0).id()).status());
    }

    @Test
    void aProposalWaitingForAPersonIsNotAskedAgainAndTheListSaysSo() {
        root.write(".agentx/config.toml", "autonomy = \"approve\"\n");
        local = root.local();
        channel.reply(q -> new Delivery.Answered("Redis.", null, "command"));
        String id = local.engine().execute(new ClarifyCommand.Ask(7, "engineer", "architect", "Cache",
                "Redis or memcached?", true, List.of(), null)).record().id();
        assertTrue(record(id).pendingProposal().isPresent(), "the agent's answer is a proposal");
        assertEquals(1, channel.asked.size());

        clock.advance(Duration.ofMinutes(31));
        MonitorAction planned = local.monitor().plan().actions().get(0);
        assertTrue(planned.describe().endsWith("; would not ask architect again: its proposed answer waits for a "
                + "person"), planned.describe());
        MonitorAction marked = local.monitor().run().actions().get(0);
        assertTrue(marked.describe().contains("architect not asked again: its proposed answer waits for a person"),
                marked.describe());
        assertEquals(Status.STALE, record(id).status());
        assertEquals(1, channel.asked.size(), "the agent is not asked again");
        Findings.Stale waiting = local.monitor().check().stale().get(0);
        assertEquals(Findings.Phase.WAITING, waiting.phase());
        assertEquals("architect's proposed answer to round 1 was not accepted within the SLA (30m, due "
                + "2026-02-26T10:30:00Z); escalates after 2026-02-26T11:01:00Z", waiting.why());
    }

    @Test
    void aLatePassThatAsksAgainGivesTheTargetAFullSlaFromThen() {
        String id = ask(8, "engineer", "architect", "Queue", "Kafka or SQS?", true);
        clock.set(Instant.parse("2026-02-26T11:30:00Z")); // the first pass after the SLA ran an hour late
        MonitorAction marked = monitor.run().actions().get(0);
        assertInstanceOf(MonitorAction.MarkedStale.class, marked);
        assertTrue(marked.describe().contains("escalates after 2026-02-26T12:00:00Z"), marked.describe());
        clock.set(Instant.parse("2026-02-26T11:31:00Z"));
        assertTrue(monitor.run().actions().isEmpty(), "the next pass leaves the target its full SLA");
        assertEquals(Status.STALE, record(id).status());
        clock.set(Instant.parse("2026-02-26T12:00:00Z"));
        assertTrue(monitor.run().actions().isEmpty());
        clock.set(Instant.parse("2026-02-26T12:00:01Z"));
        assertEquals(Status.ESCALATED, record(monitor.run().actions().get(0).id()).status());
    }

    @Test
    void aFollowUpRestartsTheClock() {
        String id = ask(3, "engineer", "architect", "DB", "Postgres?", true);
        clock.advance(Duration.ofMinutes(20));
        engine.execute(new ClarifyCommand.Answer(id, null, "Yes, Postgres 16."));
        clock.advance(Duration.ofMinutes(20));
        engine.execute(new ClarifyCommand.FollowUp(id, null, "Which extensions may we use?"));
        clock.advance(Duration.ofMinutes(29));
        assertTrue(monitor.run().actions().isEmpty(), "30 minutes from the newest question, not from the first");
        clock.advance(Duration.ofMinutes(2));
        assertEquals("stale", monitor.run().actions().get(0).kind());
    }

    // ---- stuck ---------------------------------------------------------------------------------

    /** What a pass would do, as the CLI shows it over the server's database: what the pass then does, nothing done. */
    @Test
    void aPlanNamesWhatThePassThenDoesAndChangesNothing() {
        String stale = ask(42, "engineer", "architect", "Auth", "Which auth method?", true);
        clock.set(Instant.parse("2026-02-26T10:31:00Z"));
        MonitorReport planned = monitor.plan();
        assertEquals(Status.PENDING, record(stale).status(), "a plan changes nothing");
        assertEquals(1, channel.asked.size(), "and asks nobody");
        assertEquals(List.of("stale " + stale), signature(planned));
        assertEquals(signature(planned), signature(monitor.run()));

        clock.set(Instant.parse("2026-02-26T11:02:00Z"));
        planned = monitor.plan();
        assertEquals(List.of("escalated " + stale + " stale"), signature(planned), "the second timeout");
        assertEquals(signature(planned), signature(monitor.run()));

        String stuck = ask(5, "engineer", "architect", "Retries", "How many times should the client retry?", true);
        engine.execute(new ClarifyCommand.Answer(stuck, null, "Use the defaults of the HTTP library."));
        engine.execute(new ClarifyCommand.FollowUp(stuck, null, "How many times should the client retry??"));
        ask(1, "engineer", "architect", "API shape", "REST or gRPC?", true);
        ask(1, "architect", "engineer", "Team skills", "Does the team know protobuf?", true);
        planned = monitor.plan();
        assertEquals(List.of("stuck", "deadlock"), planned.actions().stream()
                .map(a -> ((MonitorAction.Escalated) a).cause().wire()).toList(), planned.actions().toString());
        assertEquals(signature(planned), signature(monitor.run()));
        assertTrue(monitor.plan().actions().isEmpty());
    }

    private static List<String> signature(MonitorReport report) {
        return report.actions().stream().map(a -> a.kind() + " " + a.id()
                + (a instanceof MonitorAction.Escalated e ? " " + e.cause().wire() : "")).toList();
    }

    @Test
    void aRepeatedQuestionIsStuckAndEscalatedWithWhy() {
        String id = ask(5, "engineer", "architect", "Retries", "How many times should the client retry a failed call?",
                true);
        engine.execute(new ClarifyCommand.Answer(id, null, "Use the defaults of the HTTP library."));
        engine.execute(new ClarifyCommand.FollowUp(id, null, "How many times should the client retry a failed call??"));
        MonitorReport report = monitor.run();
        MonitorAction.Escalated esc = assertInstanceOf(MonitorAction.Escalated.class, report.actions().get(0));
        assertEquals(Cause.STUCK, esc.cause());
        String summary = last(record(id)).body();
        assertTrue(summary.startsWith("Escalated: stuck: the question of round 2 repeats the question of round 1 "
                + "(word-set similarity 1.00, above 0.8)"), summary);
        assertTrue(monitor.run().actions().isEmpty(), "idempotent");
    }

    @Test
    void aRepeatedAnswerIsStuck() {
        String id = ask(5, "engineer", "architect", "Limits", "What is the request size limit?", true);
        engine.execute(new ClarifyCommand.Answer(id, null, "It is ten megabytes per request for every client today"));
        engine.execute(new ClarifyCommand.FollowUp(id, null, "And for uploads of large files?"));
        engine.execute(new ClarifyCommand.Answer(id, null, "It is ten megabytes per request for every client, today."));
        MonitorAction a = monitor.run().actions().get(0);
        assertTrue(a.describe().contains("stuck): the answer of round 2 repeats the answer of round 1"), a.describe());
    }

    @Test
    void similarButDifferentFollowUpsAreNotStuck() {
        String id = ask(5, "engineer", "architect", "Limits", "What is the limit for uploads?", true);
        engine.execute(new ClarifyCommand.Answer(id, null, "Ten megabytes."));
        // 5 of 7 distinct words shared: Jaccard 0.71, not above 0.8
        engine.execute(new ClarifyCommand.FollowUp(id, null, "What is the limit for downloads?"));
        assertTrue(monitor.run().actions().isEmpty());
        assertEquals(Status.PENDING, record(id).status());
    }

    @Test
    void theSameTopicAskedBackTheOtherWayIsStuckForBothRecords() {
        String a = ask(9, "engineer", "architect", "Error format", "Which error format do we use?", false);
        String b = ask(9, "architect", "engineer", "error   FORMAT", "What error format do you need?", false);
        ask(10, "architect", "engineer", "Error format", "Unrelated issue, same topic: not stuck", false);
        MonitorReport report = monitor.run();
        assertEquals(List.of(a, b), report.actions().stream().map(MonitorAction::id).toList());
        assertTrue(report.actions().stream().allMatch(x -> ((MonitorAction.Escalated) x).cause() == Cause.STUCK));
        assertTrue(last(record(a)).body().contains("is also asked the other way round in " + b
                + " (architect -> engineer)"), last(record(a)).body());
        assertEquals(Status.PENDING, record("CLR-10-001").status());
    }

    // ---- deadlock ------------------------------------------------------------------------------

    @Test
    void mutualBlockingEscalatesTheDownstreamRequestAndTheUpstreamOneContinues() {
        String eng = ask(1, "engineer", "architect", "API shape", "REST or gRPC?", true);
        String arch = ask(1, "architect", "engineer", "Team skills", "Does the team know protobuf?", true);
        MonitorReport report = monitor.run();
        assertEquals(1, report.actions().size(), report.actions().toString());
        MonitorAction.Escalated esc = assertInstanceOf(MonitorAction.Escalated.class, report.actions().get(0));
        assertEquals(Cause.DEADLOCK, esc.cause());
        assertEquals(eng, esc.id(), "engineer is downstream of architect");
        assertEquals(Status.ESCALATED, record(eng).status());
        assertEquals(Status.PENDING, record(arch).status(), "the upstream request continues");
        assertTrue(last(record(eng)).body().startsWith("Escalated: deadlock: engineer -> architect -> engineer ("
                + eng + ", " + arch + "): each waits on the next"), last(record(eng)).body());
        assertTrue(monitor.run().actions().isEmpty());
    }

    @Test
    void aThreeAgentCycleIsBrokenAtItsMostDownstreamAgent() {
        String pm = ask(4, "product-manager", "architect", "Budget", "Can we afford a managed queue?", true);
        String arch = ask(4, "architect", "engineer", "Effort", "How long would self-hosting take?", true);
        String eng = ask(4, "engineer", "product-manager", "Priority", "Is the queue needed for launch?", true);
        Findings f = monitor.check();
        assertEquals(1, f.deadlocks().size());
        Deadlock d = f.deadlocks().get(0);
        assertEquals("engineer -> product-manager -> architect -> engineer", d.path());
        assertEquals(eng, d.victim().id());
        MonitorReport report = monitor.run();
        assertEquals(List.of(eng), report.actions().stream().map(MonitorAction::id).toList());
        assertEquals(Status.ESCALATED, record(eng).status());
        assertEquals(Status.PENDING, record(pm).status());
        assertEquals(Status.PENDING, record(arch).status());
        assertTrue(monitor.run().actions().isEmpty());
    }

    @Test
    void aCycleAcrossTwoIssuesIsFound() {
        String arch = ask(11, "architect", "reviewer", "Checklist", "Which review checklist applies?", true);
        String rev = ask(12, "reviewer", "architect", "Coverage", "What coverage do you expect?", true);
        MonitorReport report = monitor.run();
        assertEquals(List.of(rev), report.actions().stream().map(MonitorAction::id).toList(),
                "reviewer is the most downstream");
        assertEquals(12, report.actions().get(0).issue());
        assertTrue(last(record(rev)).body().contains("reviewer -> architect -> reviewer (" + rev + ", " + arch + ")"),
                last(record(rev)).body());
        assertEquals(Status.PENDING, record(arch).status());
    }

    @Test
    void everyCycleIsBrokenEvenWhenCyclesShareAnAgent() {
        // engineer <-> architect and engineer <-> product-manager: two cycles through the engineer
        String e1 = ask(1, "engineer", "architect", "A", "First question to the architect?", true);
        String a1 = ask(1, "architect", "engineer", "B", "Question back to the engineer?", true);
        String e2 = ask(2, "engineer", "product-manager", "C", "First question to the PM?", true);
        String p2 = ask(2, "product-manager", "engineer", "D", "Question back from the PM?", true);
        MonitorReport report = monitor.run();
        assertEquals(List.of(e1, e2), report.actions().stream().map(MonitorAction::id).sorted().toList());
        assertEquals(Status.PENDING, record(a1).status());
        assertEquals(Status.PENDING, record(p2).status());
        assertTrue(monitor.check().deadlocks().isEmpty());
    }

    @Test
    void nonBlockingAndAnsweredRequestsAreNoEdges() {
        ask(1, "engineer", "architect", "A", "Non-blocking question?", false);
        ask(1, "architect", "engineer", "B", "Blocking question back?", true);
        String e = ask(2, "engineer", "product-manager", "C", "Blocking, then answered?", true);
        ask(2, "product-manager", "engineer", "D", "Blocking question back?", true);
        engine.execute(new ClarifyCommand.Answer(e, null, "Answered."));
        assertTrue(monitor.run().actions().isEmpty());
    }

    // ---- idempotency ---------------------------------------------------------------------------

    @Test
    void aSecondPassChangesNothing() {
        ask(1, "reviewer", "product-manager", "Old", "Nobody answers this one?", true);
        clock.advance(Duration.ofMinutes(31));
        ask(2, "engineer", "architect", "API shape", "REST or gRPC?", true);
        ask(2, "architect", "engineer", "Team skills", "Does the team know protobuf?", true);
        String s = ask(3, "engineer", "product-manager", "Same", "Is the same question asked twice?", false);
        engine.execute(new ClarifyCommand.Answer(s, null, "Perhaps."));
        engine.execute(new ClarifyCommand.FollowUp(s, null, "Is the same question asked twice?"));
        engine.execute(new ClarifyCommand.Ask(4, "engineer", "architect", "Done", "Closed?", true, List.of(), null));
        engine.execute(new ClarifyCommand.Resolve("CLR-4-001", null, "yes"));

        MonitorReport first = monitor.run();
        assertEquals(List.of("stale", "escalated", "escalated"), first.actions().stream().map(MonitorAction::kind).toList());
        Map<String, String> after = root.snapshot();
        MonitorReport second = root.local().monitor().run();
        assertTrue(second.actions().isEmpty(), second.actions().toString());
        assertEquals(after, root.snapshot(), "not a byte changed on disk, the monitor index included");
    }
}
