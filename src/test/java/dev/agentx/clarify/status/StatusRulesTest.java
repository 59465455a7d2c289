package dev.agentx.clarify.status;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import dev.agentx.clarify.app.LocalMode;
import dev.agentx.clarify.protocol.ClarificationRecord;
import dev.agentx.clarify.protocol.ClarifyException;
import dev.agentx.clarify.protocol.Ledger;
import dev.agentx.clarify.protocol.Status;
import dev.agentx.clarify.routing.ClarifyCommand;
import dev.agentx.clarify.routing.Outcome;
import dev.agentx.clarify.support.MutableClock;
import dev.agentx.clarify.support.TestRoot;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.stream.Stream;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The statuses follow from the ledger, so the order in which writers get to them does not matter:
 * what the file store's write-behind relies on.
 */
class StatusRulesTest {
    private static final String[][] PAIRS = {{"engineer", "architect"}, {"engineer", "product-manager"},
        {"architect", "product-manager"}, {"reviewer", "engineer"}, {"reviewer", "architect"}};

    @TempDir
    Path dir;
    MutableClock clock;
    LocalMode local;

    @BeforeEach
    void setUp() {
        clock = MutableClock.at("2026-03-01T09:00:00Z");
        local = new TestRoot(dir, clock).local();
    }

    /** One operation of a script: the ledger right after it and the agents its events name. */
    private record Step(Ledger ledger, Set<String> agents) {
    }

    @Test
    void aRequestBlocksAndAnAnswerReleasesBothAtItsTime() {
        Outcome asked = local.engine().execute(new ClarifyCommand.Ask(7, "engineer", "architect", "Auth", "JWT?", true,
                List.of(), null));
        Ledger l1 = local.ledgers().read(7).orElseThrow();
        Map<String, AgentStatus> s = StatusRules.reconcile(Map.of(), l1, Set.of("engineer", "architect"));
        assertEquals(AgentStatus.blocked(7, clock.instant(), asked.record().id(), "architect"), s.get("engineer"));
        assertEquals(AgentStatus.clarifying(7, clock.instant(), asked.record().id(), "engineer"), s.get("architect"));

        clock.advance(Duration.ofMinutes(3));
        local.engine().execute(new ClarifyCommand.Answer(asked.record().id(), "architect", "Yes."));
        Ledger l2 = local.ledgers().read(7).orElseThrow();
        Map<String, AgentStatus> after = StatusRules.reconcile(s, l2, Set.of("engineer", "architect"));
        assertEquals(AgentStatus.working(7, clock.instant()), after.get("engineer"));
        assertEquals(AgentStatus.working(7, clock.instant()), after.get("architect"));

        // the request's writer coming after the answer's reads the answered ledger: nothing goes back
        assertEquals(after, StatusRules.reconcile(after, l2, Set.of("engineer", "architect")));
        // and one that never saw the request open ends the same
        assertEquals(after, StatusRules.reconcile(Map.of(), l2, Set.of("engineer", "architect")));
    }

    @Test
    void anAgentStaysBlockedOrClarifyingWhileAnyOfItsRecordsOnTheIssueIsOpen() {
        Outcome toArchitect = local.engine().execute(new ClarifyCommand.Ask(7, "engineer", "architect", "Auth",
                "JWT?", true, List.of(), null));
        clock.advance(Duration.ofMinutes(1));
        Outcome toPm = local.engine().execute(new ClarifyCommand.Ask(7, "engineer", "product-manager", "Scope",
                "In scope?", true, List.of(), null));
        clock.advance(Duration.ofMinutes(1));
        Outcome fromReviewer = local.engine().execute(new ClarifyCommand.Ask(7, "reviewer", "architect", "Style",
                "Tabs?", true, List.of(), null));
        Set<String> agents = Set.of("engineer", "architect", "product-manager", "reviewer");
        Map<String, AgentStatus> s = StatusRules.reconcile(Map.of(), local.ledgers().read(7).orElseThrow(), agents);
        assertEquals(toPm.record().id(), s.get("engineer").clarificationId());
        assertEquals(fromReviewer.record().id(), s.get("architect").clarificationId());

        // the newer question answered: the engineer still waits for the architect, who still owes it
        clock.advance(Duration.ofMinutes(1));
        local.engine().execute(new ClarifyCommand.Answer(toPm.record().id(), "product-manager", "Yes."));
        local.engine().execute(new ClarifyCommand.Answer(fromReviewer.record().id(), "architect", "Spaces."));
        s = StatusRules.reconcile(s, local.ledgers().read(7).orElseThrow(), agents);
        assertEquals(AgentStatus.blocked(7, clock.instant(), toArchitect.record().id(), "architect"), s.get("engineer"));
        assertEquals(AgentStatus.clarifying(7, clock.instant(), toArchitect.record().id(), "engineer"),
                s.get("architect"));
        assertEquals(AgentStatus.working(7, clock.instant()), s.get("product-manager"));
        assertEquals(AgentStatus.working(7, clock.instant()), s.get("reviewer"));

        // the last open one escalated: the engineer waits on a human, the architect is free
        clock.advance(Duration.ofMinutes(1));
        local.engine().execute(new ClarifyCommand.Escalate(toArchitect.record().id(), "human", "Needs a decision"));
        s = StatusRules.reconcile(s, local.ledgers().read(7).orElseThrow(), agents);
        assertEquals(AgentStatus.blocked(7, clock.instant(), toArchitect.record().id(), StatusRules.HUMAN),
                s.get("engineer"));
        assertEquals(AgentStatus.working(7, clock.instant()), s.get("architect"));
    }

    @Test
    void aNonBlockingRequestLeavesTheRequesterAlone() {
        Outcome asked = local.engine().execute(new ClarifyCommand.Ask(7, "engineer", "architect", "Auth", "JWT?",
                false, List.of(), null));
        Map<String, AgentStatus> s = StatusRules.reconcile(Map.of(), local.ledgers().read(7).orElseThrow(),
                Set.of("engineer", "architect"));
        assertNull(s.get("engineer"));
        assertEquals(AgentState.CLARIFYING, s.get("architect").status());
        clock.advance(Duration.ofMinutes(1));
        local.engine().execute(new ClarifyCommand.Answer(asked.record().id(), "architect", "Yes."));
        s = StatusRules.reconcile(s, local.ledgers().read(7).orElseThrow(), Set.of("engineer", "architect"));
        assertNull(s.get("engineer"));
        assertEquals(AgentStatus.working(7, clock.instant()), s.get("architect"));
    }

    @Test
    void olderNewsOfOneIssueDoesNotDisturbAnAgentsNewerWorkOnAnother() {
        Outcome old = local.engine().execute(new ClarifyCommand.Ask(1, "engineer", "architect", "A", "Old?", true,
                List.of(), null));
        clock.advance(Duration.ofMinutes(1));
        Outcome newer = local.engine().execute(new ClarifyCommand.Ask(2, "reviewer", "engineer", "B", "New?", true,
                List.of(), null));
        Map<String, AgentStatus> s = StatusRules.reconcile(Map.of(), local.ledgers().read(1).orElseThrow(),
                Set.of("engineer", "architect"));
        s = StatusRules.reconcile(s, local.ledgers().read(2).orElseThrow(), Set.of("reviewer", "engineer"));
        assertEquals(newer.record().id(), s.get("engineer").clarificationId());
        // the engineer's own question on issue 1 is re-read late (another writer): still the newer status
        s = StatusRules.reconcile(s, local.ledgers().read(1).orElseThrow(), Set.of("engineer", "architect"));
        assertEquals(AgentState.CLARIFYING, s.get("engineer").status());
        assertEquals(newer.record().id(), s.get("engineer").clarificationId());
        // issue 1's record closing leaves the engineer's work on issue 2 alone
        clock.advance(Duration.ofMinutes(1));
        local.engine().execute(new ClarifyCommand.Answer(old.record().id(), "architect", "Yes."));
        s = StatusRules.reconcile(s, local.ledgers().read(1).orElseThrow(), Set.of("engineer", "architect"));
        assertEquals(newer.record().id(), s.get("engineer").clarificationId());
        assertEquals(AgentState.WORKING, s.get("architect").status());
    }

    /**
     * Two processes: the architect answers on #7, then the engineer answers on #20; the second's
     * status writer comes first and still reads #7 open (its answer is timed before it is written),
     * so the engineer goes back to being blocked on #7. The first's writer, later, ends that: the
     * status it replaces carries #7's time, not the later answer's on #20, so it is not newer.
     */
    @Test
    void aStatusTakenFromAnotherIssueGivesWayToThatIssuesNextChangeWhicheverWriterComesFirst() {
        String mine = local.engine().execute(new ClarifyCommand.Ask(7, "engineer", "architect", "Auth", "JWT?", true,
                List.of(), null)).record().id();
        clock.advance(Duration.ofMinutes(1));
        String asked = local.engine().execute(new ClarifyCommand.Ask(20, "reviewer", "engineer", "Tests", "Why?", true,
                List.of(), null)).record().id();
        Set<String> both7 = Set.of("engineer", "architect");
        Set<String> both20 = Set.of("reviewer", "engineer");
        Ledger open7 = local.ledgers().read(7).orElseThrow();
        Map<String, AgentStatus> s = StatusRules.reconcile(Map.of(), open7, both7);
        s = StatusRules.reconcile(s, local.ledgers().read(20).orElseThrow(), both20);
        assertEquals(AgentState.CLARIFYING, s.get("engineer").status());

        clock.advance(Duration.ofMinutes(1));
        local.engine().execute(new ClarifyCommand.Answer(mine, "architect", "JWT."));
        Instant answered7 = clock.instant();
        clock.advance(Duration.ofMinutes(1));
        local.engine().execute(new ClarifyCommand.Answer(asked, "engineer", "Added one."));
        s = StatusRules.reconcile(s, local.ledgers().read(20).orElseThrow(), both20,
                StatusRules.elsewhere(agent -> List.of(open7)));
        // with #7's time: how long it has waited there
        assertEquals(AgentStatus.blocked(7, open7.find(mine).orElseThrow().created(), mine, "architect"),
                s.get("engineer"));

        s = StatusRules.reconcile(s, local.ledgers().read(7).orElseThrow(), both7,
                StatusRules.elsewhere(agent -> List.of(local.ledgers().read(20).orElseThrow())));
        assertEquals(AgentStatus.working(7, answered7), s.get("engineer"));
        assertEquals(AgentStatus.working(7, answered7), s.get("architect"));
    }

    /**
     * Writers take the status file one after another, each reading the ledger as it is then; they
     * may come in any order and late. Whatever the order, the statuses end as they would have with
     * each operation's statuses written right after it.
     */
    @Property(tries = 40)
    void writersInAnyOrderReadingTheLedgerAsItThenIsEndAsInOrder(@ForAll long seed) throws IOException {
        Path root = Files.createTempDirectory("status-rules");
        try {
            Random random = new Random(seed);
            List<Step> steps = script(root, random);
            Map<String, AgentStatus> inOrder = new TreeMap<>();
            for (Step s : steps) {
                inOrder = StatusRules.reconcile(inOrder, s.ledger(), s.agents());
            }
            // each step's writer, in a random order, reads a ledger no older than its own step's nor
            // than the one the writer before it read
            List<Integer> order = new ArrayList<>();
            for (int i = 0; i < steps.size(); i++) {
                order.add(i);
            }
            Collections.shuffle(order, random);
            Map<String, AgentStatus> shuffled = new TreeMap<>();
            int read = 0;
            for (int i : order) {
                read = Math.max(read, i);
                if (random.nextInt(3) == 0) {
                    read = read + random.nextInt(steps.size() - read);
                }
                shuffled = StatusRules.reconcile(shuffled, steps.get(read).ledger(), steps.get(i).agents());
            }
            assertEquals(inOrder, shuffled, "seed " + seed);
        } finally {
            try (Stream<Path> all = Files.walk(root)) {
                all.sorted(Comparator.reverseOrder()).forEach(p -> {
                    try {
                        Files.delete(p);
                    } catch (IOException e) {
                        throw new UncheckedIOException(e);
                    }
                });
            }
        }
    }

    /** 6 to 20 random operations on one issue through the engine, a minute apart. */
    private static List<Step> script(Path root, Random random) {
        MutableClock clock = MutableClock.at("2026-03-01T09:00:00Z");
        LocalMode local = new TestRoot(root, clock).local();
        List<Step> steps = new ArrayList<>();
        int n = 6 + random.nextInt(15);
        while (steps.size() < n) {
            clock.advance(Duration.ofMinutes(1));
            List<ClarificationRecord> records = local.ledgers().read(7).map(Ledger::clarifications).orElse(List.of());
            ClarifyCommand command = next(random, records);
            Outcome o;
            try {
                o = local.engine().execute(command);
            } catch (ClarifyException e) {
                continue; // a round limit or a state the command does not apply to: pick another
            }
            steps.add(new Step(local.ledgers().read(7).orElseThrow(), Set.of(o.record().from(), o.record().to())));
        }
        return steps;
    }

    private static ClarifyCommand next(Random random, List<ClarificationRecord> records) {
        int kind = records.isEmpty() ? 0 : random.nextInt(7);
        if (kind == 0) {
            String[] pair = PAIRS[random.nextInt(PAIRS.length)];
            return new ClarifyCommand.Ask(7, pair[0], pair[1], "T", "Q" + random.nextInt(1000), random.nextBoolean(),
                    List.of(), null);
        }
        ClarificationRecord r = records.get(random.nextInt(records.size()));
        return switch (kind) {
            case 1, 2 -> new ClarifyCommand.Answer(r.id(), r.to(), "A");
            case 3 -> new ClarifyCommand.FollowUp(r.id(), r.from(), "F" + random.nextInt(1000));
            case 4 -> new ClarifyCommand.Resolve(r.id(), r.status() == Status.ESCALATED ? null : r.from(), "done");
            case 5 -> new ClarifyCommand.Escalate(r.id(), r.from(), "stuck");
            default -> new ClarifyCommand.Abandon(r.id(), r.from(), "moot");
        };
    }
}
