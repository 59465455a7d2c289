package dev.agentx.clarify.mcp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.agentx.clarify.app.LocalMode;
import dev.agentx.clarify.ledger.LedgerWatcher;
import dev.agentx.clarify.support.MutableClock;
import dev.agentx.clarify.support.OnlyDocumentedState;
import dev.agentx.clarify.support.TestRoot;
import dev.agentx.clarify.support.Workflows;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/** The tools in-process on a test clock: what the inbox and the status say, and how arguments are read. */
@ExtendWith(OnlyDocumentedState.class)
class ClarifyToolsTest {
    @TempDir
    Path dir;

    private TestRoot root;
    private LedgerWatcher watcher;
    private ScheduledExecutorService timer;
    private Waits waits;

    @BeforeEach
    void setUp() {
        root = new TestRoot(dir, MutableClock.at("2026-03-01T09:00:00Z"));
        Workflows.mesh(root);
        watcher = new LedgerWatcher(root.state().resolve("clarifications"), Duration.ofSeconds(30));
        timer = Executors.newSingleThreadScheduledExecutor();
        IssueChanges changes = new IssueChanges();
        watcher.onChange(changes::changed);
        waits = new Waits(changes, timer, Runnable::run);
    }

    @AfterEach
    void tearDown() {
        watcher.close();
        timer.shutdownNow();
    }

    private ClarifyTools as(String agent) {
        return as(agent, root.local());
    }

    private ClarifyTools as(String agent, LocalMode local) {
        return new ClarifyTools(new McpWorkspace(agent, root.clock, local.engine(), local.ledgers(), local.statuses(),
                local.activeLedgers(), () -> local.monitor().run(), List::of, local.files().ledgers().directory()), waits);
    }

    @SuppressWarnings("unchecked")
    private static List<Map<String, Object>> list(ToolResult r, String key) {
        return (List<Map<String, Object>>) r.data().get(key);
    }

    @Test
    void theInboxListsWhatWaitsOnTheAgentOldestFirst() {
        ClarifyTools engineer = as("engineer");
        ClarifyTools reviewer = as("reviewer");
        ClarifyTools architect = as("architect");
        assertFalse(engineer.call("clarify_ask", Map.of("issue", 2, "to", "architect", "question", "First?")).error());
        root.clock.advance(Duration.ofMinutes(5));
        assertFalse(reviewer.call("clarify_ask", Map.of("issue", 1, "to", "architect", "question", "Second?",
                "options", List.of("A", "B"))).error());
        root.clock.advance(Duration.ofMinutes(5));
        assertFalse(engineer.call("clarify_ask", Map.of("issue", 3, "to", "reviewer", "question", "Not yours")).error());

        ToolResult inbox = architect.call("clarify_inbox", Map.of());
        assertFalse(inbox.error(), inbox.text());
        assertEquals(List.of("CLR-2-001", "CLR-1-001"), list(inbox, "questions").stream().map(q -> q.get("id")).toList());
        assertTrue(inbox.text().contains("CLR-2-001 from engineer, round 1 of 5, blocking, waiting 10m: First?"),
                inbox.text());
        assertTrue(inbox.text().contains("options: 1) A 2) B"), inbox.text());

        assertFalse(architect.call("clarify_answer", Map.of("id", "CLR-1-001", "answer", "B")).error());
        ToolResult reviewerInbox = reviewer.call("clarify_inbox", Map.of());
        assertEquals(List.of("CLR-1-001"), list(reviewerInbox, "answers").stream().map(a -> a.get("id")).toList());
        assertEquals("B", list(reviewerInbox, "answers").get(0).get("answer"));
        assertEquals(List.of("CLR-3-001"), list(reviewerInbox, "questions").stream().map(a -> a.get("id")).toList());
    }

    @Test
    void theStatusSaysWhatTheAgentWaitsOnAndTheReadyQueue() {
        ClarifyTools engineer = as("engineer");
        assertFalse(engineer.call("clarify_ask", Map.of("issue", 8, "to", "architect", "question", "Which?")).error());
        ToolResult status = engineer.call("clarify_status", Map.of());
        assertFalse(status.error(), status.text());
        assertTrue(status.text().startsWith("engineer: blocked-clarification on #8\n- waiting on architect for "
                + "CLR-8-001 (blocking)"), status.text());
        assertTrue(status.text().contains("#8  BLOCKED: Clarification pending (CLR-8-001)"), status.text());
        assertEquals(1, list(status, "waitingFor").size());
    }

    @Test
    void aWaitOnAnAnsweredRoundReturnsAtOnce() {
        ClarifyTools engineer = as("engineer");
        engineer.call("clarify_ask", Map.of("issue", 4, "to", "architect", "question", "Now?"));
        as("architect").call("clarify_answer", Map.of("id", "CLR-4-001", "answer", "Yes"));
        ToolResult r = engineer.call("clarify_wait", Map.of("id", "CLR-4-001", "wait_seconds", 3600));
        assertFalse(r.error(), r.text());
        assertEquals(Map.of("outcome", "answered", "seconds", 0.0), r.data().get("waited"));
    }

    /** The result's status is the record's after the monitor's pass that followed the call, not before it. */
    @Test
    void aFollowUpTheMonitorEscalatesAsStuckSaysEscalated() {
        ClarifyTools engineer = as("engineer");
        String q = "Which database engine should the orders service use in production?";
        assertFalse(engineer.call("clarify_ask", Map.of("issue", 12, "to", "architect", "question", q)).error());
        assertFalse(as("architect").call("clarify_answer", Map.of("id", "CLR-12-001", "answer", "PostgreSQL.")).error());
        ToolResult again = engineer.call("clarify_followup", Map.of("id", "CLR-12-001", "question", q));
        assertFalse(again.error(), again.text());
        @SuppressWarnings("unchecked")
        List<String> notes = (List<String>) again.data().get("notes");
        assertTrue(notes.stream().anyMatch(n -> n.startsWith("monitor: ") && n.contains("escalated")), notes.toString());
        assertEquals("escalated", again.data().get("status"), again.text());
    }

    /** A wait on a question the target's channel answered at once returns that answer, as after any wait. */
    @Test
    void aWaitOnAQuestionAChannelAnsweredAtOnceReturnsTheAnswer() {
        root.write(".agentx/config.toml", "[agents.architect]\nchannel = \"auto\"\n");
        LocalMode channels = new LocalMode(root.root, root.clock, root.locks(), Map.of()); // the config's channels
        ToolResult r = as("engineer", channels).call("clarify_ask", Map.of("issue", 9, "to", "architect", "question", "Which queue?",
                "options", List.of("Kafka (default)", "SQS"), "wait_seconds", 10));
        assertFalse(r.error(), r.text());
        assertEquals(Map.of("outcome", "answered", "seconds", 0.0), r.data().get("waited"), r.text());
        assertTrue(r.text().contains("Answer from architect:\n"), r.text());
        assertTrue(r.text().contains("Kafka"), r.text());
    }

    /**
     * An agent answering in its own session is still an agent: under autonomy approve its answer to
     * a blocking question is a proposal until a person accepts it, as through any channel.
     */
    @Test
    void anAgentsAnswerInItsSessionCountsByAutonomyAsAChannelsDoes() {
        root.write(".agentx/config.toml", "[agents.architect]\nautonomy = \"approve\"\n");
        ClarifyTools engineer = as("engineer");
        ClarifyTools architect = as("architect");
        assertFalse(engineer.call("clarify_ask", Map.of("issue", 6, "to", "architect", "question", "Which cache?")).error());
        assertFalse(engineer.call("clarify_ask", Map.of("issue", 6, "to", "architect", "question", "Log format?",
                "blocking", false)).error());

        ToolResult proposed = architect.call("clarify_answer", Map.of("id", "CLR-6-001", "answer", "Redis."));
        assertFalse(proposed.error(), proposed.text());
        assertTrue(proposed.text().startsWith("CLR-6-001 answer proposed (round 1 of 5): it counts once a person in role "
                + "architect accepts it"), proposed.text());
        var record = root.local().ledgers().read(6).orElseThrow().find("CLR-6-001").orElseThrow();
        assertEquals("pending", record.status().wire(), "the requester still waits");
        assertTrue(record.pendingProposal().isPresent());
        assertTrue(record.lastAnswer().isEmpty(), "a proposal is no answer");

        // a non-blocking question is not held
        assertFalse(architect.call("clarify_answer", Map.of("id", "CLR-6-002", "answer", "JSON lines.")).error());
        assertEquals("answered", root.local().ledgers().read(6).orElseThrow().find("CLR-6-002").orElseThrow().status()
                .wire());

        // a person accepts it: then it counts
        assertEquals(0, root.cli("clarify", "accept", "CLR-6-001").code());
        assertEquals("answered", root.local().ledgers().read(6).orElseThrow().find("CLR-6-001").orElseThrow().status()
                .wire());
    }

    /**
     * The session acts as its agent: only the requester resolves (not while a person decides) or
     * follows up, only the target answers, only the two escalate; a refusal writes nothing.
     */
    @Test
    void eachToolActsOnlyForThePartyItIsFor() {
        ClarifyTools engineer = as("engineer");
        ClarifyTools architect = as("architect");
        ClarifyTools reviewer = as("reviewer");
        assertFalse(engineer.call("clarify_ask", Map.of("issue", 45, "to", "architect", "question", "JWT?")).error());
        Map<String, String> before = root.snapshot();

        refused("VALIDATION: Only the requester 'engineer' may resolve CLR-45-001, not 'architect'; as its target, "
                + "answer it with clarify_answer, or hand it to a person with clarify_escalate.",
                architect.call("clarify_resolve", Map.of("id", "CLR-45-001", "note", "Settled.")));
        refused("VALIDATION: Only the requester 'engineer' may resolve CLR-45-001, not 'reviewer'.",
                reviewer.call("clarify_resolve", Map.of("id", "CLR-45-001")));
        refused("VALIDATION: Only the requester 'engineer' or the target 'architect' may escalate CLR-45-001, "
                + "not 'reviewer'.", reviewer.call("clarify_escalate", Map.of("id", "CLR-45-001")));
        refused("VALIDATION: CLR-45-001 is addressed to 'architect'; 'reviewer' cannot answer it.",
                reviewer.call("clarify_answer", Map.of("id", "CLR-45-001", "answer", "Sessions")));
        refused("VALIDATION: CLR-45-001 is addressed to 'architect'; 'engineer' cannot answer it.",
                engineer.call("clarify_answer", Map.of("id", "CLR-45-001", "answer", "Sessions")));
        assertEquals(before, root.snapshot());

        assertFalse(architect.call("clarify_answer", Map.of("id", "CLR-45-001", "answer", "JWT")).error());
        refused("VALIDATION: Only the requester 'engineer' may follow up on CLR-45-001, not 'architect'.",
                architect.call("clarify_followup", Map.of("id", "CLR-45-001", "question", "Sure?")));
        assertFalse(architect.call("clarify_escalate", Map.of("id", "CLR-45-001", "reason", "Product call")).error());
        refused("INVALID_STATE: Cannot resolve it: CLR-45-001 is escalated (it waits for a person to resolve it).",
                engineer.call("clarify_resolve", Map.of("id", "CLR-45-001")));

        assertFalse(engineer.call("clarify_ask", Map.of("issue", 46, "to", "architect", "question", "Queue?")).error());
        assertFalse(engineer.call("clarify_escalate", Map.of("id", "CLR-46-001")).error());
        assertEquals("escalated", ((Map<?, ?>) engineer.call("clarify_show", Map.of("id", "CLR-46-001")).data()
                .get("clarification")).get("status"));
    }

    private static void refused(String text, ToolResult r) {
        assertTrue(r.error(), r.text());
        assertEquals(text, r.text());
    }

    /** A wait ends as soon as its caller says so (the host cancelled it or closed the session). */
    @Test
    void aWaitEndsWhenItsCallerEndsIt() throws Exception {
        ClarifyTools engineer = as("engineer");
        assertFalse(engineer.call("clarify_ask", Map.of("issue", 5, "to", "architect", "question", "Which?")).error());
        CompletableFuture<Void> ended = new CompletableFuture<>();
        CompletableFuture<ToolResult> waiting = engineer.call("clarify_wait",
                Map.of("id", "CLR-5-001", "wait_seconds", 3600), ended);
        assertFalse(waiting.isDone(), "it waits");
        assertEquals(1, waits.changes().size(), "as a subscription");
        ended.complete(null);
        ToolResult r = waiting.get(10, TimeUnit.SECONDS);
        assertFalse(r.error(), r.text());
        assertEquals("ended", ((Map<?, ?>) r.data().get("waited")).get("outcome"));
        assertEquals("pending", r.data().get("status"));
        assertTrue(r.text().contains("The wait ended early (the session is ending); CLR-5-001 still waits for "
                + "architect."), r.text());
        assertEquals(0, waits.changes().size(), "the subscription is gone");
    }

    /** A waiting call is completed by the answer's change of the ledger, told by the watcher. */
    @Test
    void anAnswerEndsAWaitThatHoldsNoThread() throws Exception {
        ClarifyTools engineer = as("engineer");
        CompletableFuture<ToolResult> waiting = engineer.call("clarify_ask", Map.of("issue", 8, "to", "architect",
                "question", "Which?", "wait_seconds", 3600), new CompletableFuture<>());
        assertFalse(waiting.isDone(), "it waits");
        assertFalse(as("architect").call("clarify_answer", Map.of("id", "CLR-8-001", "answer", "This one")).error());
        ToolResult r = waiting.get(30, TimeUnit.SECONDS);
        assertEquals("answered", ((Map<?, ?>) r.data().get("waited")).get("outcome"), r.text());
        assertTrue(r.text().contains("This one"), r.text());
    }

    @Test
    void argumentsWrittenAsStringsAreTakenAndWrongOnesNamed() {
        ClarifyTools engineer = as("engineer");
        ToolResult ok = engineer.call("clarify_ask", Map.of("issue", "6", "to", "architect", "question", "Q?",
                "blocking", "false", "wait_seconds", 0.0));
        assertFalse(ok.error(), ok.text());
        assertEquals(false, ok.data().get("blocking"));

        // what the protocol checks keeps its code, as in the CLI: an issue under 1, a choice under 1
        assertEquals("VALIDATION: Issue number must be a positive integer, got 0.",
                engineer.call("clarify_ask", Map.of("issue", 0, "to", "a", "question", "q")).text());
        assertEquals("VALIDATION: choice counts options from 1, got 0.",
                as("architect").call("clarify_answer", Map.of("id", "CLR-6-001", "answer", "x", "choice", 0)).text());
        assertEquals("USAGE: clarify_ask: argument 'issue' must be at most 999999999, got 1000000000.",
                engineer.call("clarify_ask", Map.of("issue", 1_000_000_000, "to", "a", "question", "q")).text());
        assertEquals("USAGE: clarify_ask: argument 'issue' must be a whole number up to 999999999, got 1.5.",
                engineer.call("clarify_ask", Map.of("issue", 1.5, "to", "a", "question", "q")).text());
        assertEquals("USAGE: clarify_ask: unknown argument 'from'; it takes 'blocking', 'issue', 'options', "
                        + "'question', 'to', 'topic', 'wait_seconds', 'workflow'.",
                engineer.call("clarify_ask", Map.of("issue", 1, "to", "a", "question", "q", "from", "x")).text());
        assertEquals("USAGE: clarify_inbox: unknown argument 'agent'; it takes no arguments.",
                engineer.call("clarify_inbox", Map.of("agent", "architect")).text());
        assertEquals("USAGE: clarify_answer: argument 'answer' is required.",
                engineer.call("clarify_answer", Map.of("id", "CLR-6-001")).text());
    }
}
