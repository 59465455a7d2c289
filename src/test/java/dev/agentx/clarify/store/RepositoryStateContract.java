package dev.agentx.clarify.store;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.agentx.clarify.app.LocalMode;
import dev.agentx.clarify.channel.HumanChannel;
import dev.agentx.clarify.config.ConfigLoader;
import dev.agentx.clarify.events.ClarificationEvent;
import dev.agentx.clarify.events.EventType;
import dev.agentx.clarify.ledger.ActiveLedgers;
import dev.agentx.clarify.ledger.LedgerStore.Mutation;
import dev.agentx.clarify.lock.LockManager;
import dev.agentx.clarify.protocol.ClarificationRecord;
import dev.agentx.clarify.protocol.ClarifyException;
import dev.agentx.clarify.protocol.ErrorCode;
import dev.agentx.clarify.protocol.Ledger;
import dev.agentx.clarify.protocol.Status;
import dev.agentx.clarify.routing.ClarifyCommand;
import dev.agentx.clarify.status.AgentState;
import dev.agentx.clarify.status.AgentStatus;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * What every {@link RepositoryState} does, run against each implementation: the engine over it
 * gives the same ledgers, statuses and events, and concurrent writers of one issue lose nothing.
 */
public abstract class RepositoryStateContract {
    @TempDir
    protected Path root;

    /** A fresh, empty state for one repository. */
    protected abstract RepositoryState state(LockManager locks);

    private LocalMode local(RepositoryState state, LockManager locks) {
        return new LocalMode(root, Clock.systemUTC(), locks, state, new HumanChannel(),
                ConfigLoader.load(root.resolve(".agentx/config.toml")), Map.of());
    }

    private LocalMode local() {
        LockManager locks = LockManager.standard(Clock.systemUTC());
        return local(state(locks), locks);
    }

    private static ClarifyCommand.Ask ask(int issue, String question) {
        return new ClarifyCommand.Ask(issue, "engineer", "architect", "Auth", question, true, List.of(), null, null);
    }

    @Test
    void anEmptyStateHasNoLedgersStatusesOrEvents() {
        LocalMode local = local();
        assertEquals(List.of(), local.ledgers().issues());
        assertFalse(local.ledgers().exists(1));
        assertTrue(local.ledgers().read(1).isEmpty());
        assertEquals(Map.of(), local.statuses().read());
        assertEquals(List.of(), local.eventLog().all().events());
        ActiveLedgers.Scan scan = local.activeLedgers().scan();
        assertEquals(List.of(), scan.active());
    }

    @Test
    void theEngineKeepsLedgersStatusesAndEventsInIt() {
        LocalMode local = local();
        String id = local.engine().execute(ask(7, "JWT or sessions?")).record().id();
        local.engine().execute(ask(3, "Which database?"));
        local.engine().execute(new ClarifyCommand.Answer(id, "architect", "JWT."));
        local.engine().execute(new ClarifyCommand.Resolve(id, null, "JWT it is."));

        assertEquals(List.of(3, 7), local.ledgers().issues());
        assertTrue(local.ledgers().exists(7));
        ClarificationRecord r = local.ledgers().read(7).orElseThrow().find(id).orElseThrow();
        assertEquals(Status.RESOLVED, r.status());
        assertEquals(List.of("JWT or sessions?", "JWT.", "JWT it is."), r.thread().stream().map(e -> e.body()).toList());

        Map<String, AgentStatus> statuses = local.statuses().read();
        assertEquals(AgentState.BLOCKED_CLARIFICATION, statuses.get("engineer").status(), statuses.toString());

        List<EventType> types = local.eventLog().all().events().stream().map(ClarificationEvent::event).toList();
        assertEquals(List.of(EventType.REQUESTED, EventType.REQUESTED, EventType.ANSWERED, EventType.RESOLVED), types);
        assertEquals(2, local.eventLog().read(EventType.REQUESTED).events().size());

        ActiveLedgers.Scan scan = local.activeLedgers().scan();
        assertEquals(List.of(3), scan.active().stream().map(Ledger::issueNumber).toList());
    }

    /**
     * An agent waits on two issues: blocked on #7, it is asked on #20. Once it answers there, it is
     * blocked on #7 again, not working; working once nothing is open for it anywhere.
     */
    @Test
    void anAgentGoesBackToWhatItStillWaitsOnElsewhere() {
        LocalMode local = local();
        String mine = local.engine().execute(ask(7, "JWT or sessions?")).record().id();
        String asked = local.engine().execute(new ClarifyCommand.Ask(20, "reviewer", "engineer", "Tests",
                "Why no test for the retry?", true, List.of(), null, null)).record().id();
        assertEquals(AgentState.CLARIFYING, local.statuses().read().get("engineer").status());

        local.engine().execute(new ClarifyCommand.Answer(asked, "engineer", "Added one."));
        AgentStatus engineer = local.statuses().read().get("engineer");
        assertEquals(AgentState.BLOCKED_CLARIFICATION, engineer.status(), engineer.toString());
        assertEquals(7, engineer.issue());
        assertEquals(mine, engineer.clarificationId());
        assertEquals("architect", engineer.waitingOn());
        ClarificationRecord waiting = local.ledgers().read(7).orElseThrow().find(mine).orElseThrow();
        assertEquals(waiting.created(), engineer.lastActivity(), "its last activity on #7: the question there");
        assertEquals(AgentState.WORKING, local.statuses().read().get("reviewer").status());

        local.engine().execute(new ClarifyCommand.Answer(mine, "architect", "JWT."));
        assertEquals(AgentStatus.working(7, local.ledgers().read(7).orElseThrow().find(mine).orElseThrow().thread()
                .get(1).timestamp()), local.statuses().read().get("engineer"));
    }

    @Test
    void aChangeThatWritesNothingOrFailsLeavesTheLedgerAsItWas() {
        LocalMode local = local();
        assertEquals("none", local.ledgers().update(5, "engineer", l -> Mutation.none("none")));
        assertFalse(local.ledgers().exists(5), "an update that wrote nothing made no ledger");
        local.engine().execute(ask(5, "First?"));
        Ledger before = local.ledgers().read(5).orElseThrow();
        ClarifyException e = assertThrows(ClarifyException.class, () -> local.ledgers().update(5, "engineer", l -> {
            throw new ClarifyException(ErrorCode.VALIDATION, "refused");
        }));
        assertEquals(ErrorCode.VALIDATION, e.code());
        assertEquals(before, local.ledgers().read(5).orElseThrow());
        assertThrows(ClarifyException.class, () -> local.engine().execute(
                new ClarifyCommand.Answer("CLR-5-009", "architect", "no such record")));
        assertEquals(before, local.ledgers().read(5).orElseThrow());
    }

    @Test
    void aRequestCarriedOutTwiceChangesTheLedgerOnce() {
        LocalMode local = local();
        String first = local.engine().execute(ask(2, "Once?"), "delivery/abc/0").record().id();
        String again = local.engine().execute(ask(2, "Once?"), "delivery/abc/0").record().id();
        assertEquals(first, again);
        assertEquals(1, local.ledgers().read(2).orElseThrow().clarifications().size());
    }

    @Test
    void concurrentWritersOfOneIssueLoseNothing() throws Exception {
        LockManager locks = LockManager.standard(Clock.systemUTC());
        RepositoryState state = state(locks);
        int threads = 4;
        int each = 15;
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        List<Future<List<String>>> done = new ArrayList<>();
        try {
            for (int t = 0; t < threads; t++) {
                int worker = t;
                done.add(pool.submit(() -> {
                    LocalMode local = local(state, locks);
                    List<String> ids = new ArrayList<>();
                    for (int i = 0; i < each; i++) {
                        ids.add(local.engine().execute(ask(1, "Question " + worker + "." + i)).record().id());
                    }
                    return ids;
                }));
            }
            Set<String> acknowledged = Collections.synchronizedSet(new TreeSet<>());
            for (Future<List<String>> f : done) {
                acknowledged.addAll(f.get());
            }
            assertEquals(threads * each, acknowledged.size(), "every id handed out once");
            Ledger ledger = state.ledgers().read(1).orElseThrow();
            Map<String, String> questions = new TreeMap<>();
            for (ClarificationRecord r : ledger.clarifications()) {
                questions.put(r.id(), r.thread().get(0).body());
            }
            assertEquals(acknowledged, questions.keySet(), "every acknowledged question is in the ledger");
            assertEquals(threads * each, new TreeSet<>(questions.values()).size(), "each with its own question");
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void statusesAreReplacedAsAWhole() {
        LockManager locks = LockManager.standard(Clock.systemUTC());
        RepositoryState state = state(locks);
        Instant at = Instant.parse("2026-11-25T10:00:00Z");
        state.statuses().update("engineer", m -> {
            Map<String, AgentStatus> next = new TreeMap<>(m);
            next.put("engineer", new AgentStatus(AgentState.WORKING, 4, at, null, null, null));
            return next;
        });
        state.statuses().update("architect", m -> {
            Map<String, AgentStatus> next = new TreeMap<>(m);
            next.put("architect", new AgentStatus(AgentState.IDLE, null, at, null, null, null));
            return next;
        });
        Map<String, AgentStatus> read = state.statuses().read();
        assertEquals(Set.of("architect", "engineer"), read.keySet());
        assertEquals(new AgentStatus(AgentState.WORKING, 4, at, null, null, null), read.get("engineer"));
    }
}
