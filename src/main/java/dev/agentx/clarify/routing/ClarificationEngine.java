package dev.agentx.clarify.routing;

import dev.agentx.clarify.channel.AnswerChannel;
import dev.agentx.clarify.channel.Delivery;
import dev.agentx.clarify.channel.QuestionRequest;
import dev.agentx.clarify.config.AgentxConfig;
import dev.agentx.clarify.events.ClarificationEvent;
import dev.agentx.clarify.events.EventSink;
import dev.agentx.clarify.events.EventType;
import dev.agentx.clarify.ledger.LedgerStore.Mutation;
import dev.agentx.clarify.ledger.LedgerStore;
import dev.agentx.clarify.protocol.Autonomy;
import dev.agentx.clarify.protocol.ClarificationId;
import dev.agentx.clarify.protocol.ClarificationRecord;
import dev.agentx.clarify.protocol.ClarifyException;
import dev.agentx.clarify.protocol.EntryType;
import dev.agentx.clarify.protocol.ErrorCode;
import dev.agentx.clarify.protocol.Ledger;
import dev.agentx.clarify.protocol.Roles;
import dev.agentx.clarify.protocol.Status;
import dev.agentx.clarify.protocol.ThreadEntry;
import dev.agentx.clarify.status.AgentStatusStore;
import dev.agentx.clarify.workflow.Step;
import dev.agentx.clarify.workflow.Workflow;
import dev.agentx.clarify.workflow.WorkflowSource;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The hub ("Agent X"): checks scope, validates, records each step in the issue's ledger under its
 * lock, routes questions to the target's answer channel (outside the lock), and enforces the
 * round limit. Plain Java: every effect goes through the injected interfaces.
 */
public final class ClarificationEngine {
    /** Looked up on first use: the CLI must not start the logging system unless something is logged. */
    private static Logger log() {
        return LoggerFactory.getLogger(ClarificationEngine.class);
    }

    /** Name the hub writes under when it acts by itself (round-limit escalation). */
    public static final String HUB = "agentx";
    public static final int DEFAULT_BLOCKING_ROUNDS = 5;
    public static final int DEFAULT_NON_BLOCKING_ROUNDS = 6;
    public static final int DEFAULT_SLA_MINUTES = 30;

    private final Clock clock;
    private final LedgerStore ledgers;
    private final AgentStatusStore statuses;
    private final EventSink events;
    private final WorkflowSource workflows;
    private final AgentxConfig config;
    private final AnswerChannel channel;
    private final LedgerChangeCodec changes = new LedgerChangeCodec(this::mirrorForOthers);

    public ClarificationEngine(Clock clock, LedgerStore ledgers, AgentStatusStore statuses, EventSink events,
                               WorkflowSource workflows, AgentxConfig config, AnswerChannel channel) {
        this.clock = clock;
        this.ledgers = ledgers;
        this.statuses = statuses;
        this.events = events;
        this.workflows = workflows;
        this.config = config;
        this.channel = channel;
    }

    public LedgerStore ledgers() {
        return ledgers;
    }

    /** Runs one command. A refusal throws {@link ClarifyException} and writes nothing, except MAX_ROUNDS_EXCEEDED. */
    public Outcome execute(ClarifyCommand command) {
        return execute(command, null);
    }

    /**
     * Carries out the command as the request {@code request} (an idempotency key; null: none). The
     * key is written on the thread entry the command adds, in the same ledger write; a command whose
     * key the ledger already holds writes nothing and returns {@link Outcome#replayed}, so a request
     * carried out again after a crash (GitHub Mode re-running a delivery whose progress note was
     * lost) changes nothing and routes nothing.
     */
    public Outcome execute(ClarifyCommand command, String request) {
        return execute(command, request, true);
    }

    /**
     * As {@link #execute(ClarifyCommand, String)}; {@code routeNow} false leaves a new question
     * unrouted: the caller puts it to the target's channel with {@link #route(Outcome)} once the
     * unit the command ran in committed (GitHub Mode: a delivery's transaction, which must not
     * wait on a channel's network call).
     */
    public Outcome execute(ClarifyCommand command, String request, boolean routeNow) {
        if (command instanceof ClarifyCommand.Ask a) {
            return ask(a, request, routeNow);
        } else if (command instanceof ClarifyCommand.Answer a) {
            return answer(a, request);
        } else if (command instanceof ClarifyCommand.FollowUp f) {
            return followUp(f, request, routeNow);
        } else if (command instanceof ClarifyCommand.Resolve r) {
            return resolve(r, request);
        } else if (command instanceof ClarifyCommand.Escalate e) {
            return escalate(e, request);
        } else if (command instanceof ClarifyCommand.Abandon a) {
            return abandon(a, request);
        } else if (command instanceof ClarifyCommand.Accept a) {
            return accept(a, request);
        }
        throw new IllegalArgumentException("unknown command " + command);
    }

    private Instant now() {
        return clock.instant().truncatedTo(ChronoUnit.MILLIS);
    }

    // ---- ask ---------------------------------------------------------------------------------

    private Outcome ask(ClarifyCommand.Ask a, String request, boolean routeNow) {
        int issue = Validation.issue(a.issue());
        Workflow wf = workflows.workflow(a.workflow() == null || a.workflow().isBlank()
                ? config.defaultWorkflow() : a.workflow());
        String from = knownAgent("requesting", a.from(), wf);
        String to = knownAgent("target", a.to(), wf);
        if (from.equals(to)) {
            throw new ClarifyException(ErrorCode.VALIDATION, "An agent cannot clarify with itself ('" + from + "').");
        }
        String question = Validation.text("question", a.question());
        String topic = a.topic() == null ? Validation.deriveTopic(question) : Validation.topic(a.topic());
        List<String> options = Validation.options(a.options());
        Step step = scope(wf, from, to);

        List<String> notes = new ArrayList<>();
        boolean blocking = a.blocking();
        if (blocking && !step.blockingAllowed()) {
            blocking = false;
            notes.add("Downgraded to non-blocking: step '" + step.id() + "' of workflow '" + wf.name()
                    + "' sets clarify_blocking_allowed = false.");
        }
        int maxRounds = step.maxRounds() != null ? step.maxRounds()
                : blocking ? DEFAULT_BLOCKING_ROUNDS : DEFAULT_NON_BLOCKING_ROUNDS;
        Duration sla = Duration.ofMinutes(step.slaMinutes() != null ? step.slaMinutes() : DEFAULT_SLA_MINUTES);
        Autonomy autonomy = config.autonomyFor(to, wf.autonomy());
        Instant now = now();
        LedgerChange.Ask change = new LedgerChange.Ask(issue, from, to, topic, blocking, maxRounds, now, now.plus(sla),
                options, question, a.openQuestionId(), autonomy, notes, key(request), a.codeLine());
        Outcome outcome = written(from, () -> submit(from, change));
        if (outcome.events().isEmpty()) {
            return outcome; // asked before (the same request or open question): nothing written, nothing routed
        }
        return routeNow ? routeOwn(outcome) : outcome;
    }

    private String knownAgent(String role, String name, Workflow wf) {
        String canonical = Roles.canonical(name);
        if (canonical == null || canonical.isEmpty()) {
            throw new ClarifyException(ErrorCode.VALIDATION, "The " + role + " agent is missing.");
        }
        Set<String> known = new LinkedHashSet<>(config.knownRoles());
        known.addAll(wf.agents());
        if (!known.contains(canonical)) {
            throw new ClarifyException(ErrorCode.VALIDATION, "Unknown " + role + " agent '" + name + "'. Known agents: "
                    + String.join(", ", known) + " (aliases: pm, ux).");
        }
        return canonical;
    }

    private static Step scope(Workflow wf, String from, String to) {
        Step step = wf.stepOf(from).orElseThrow(() -> new ClarifyException(ErrorCode.SCOPE_VIOLATION,
                "Agent '" + from + "' has no step in workflow '" + wf.name() + "', so it cannot clarify with '" + to
                        + "'. Pick the issue's workflow (the CLI's --workflow, the MCP tool's 'workflow', a type: label on "
                        + "GitHub), or add a step for '" + from + "'."));
        if (!step.canClarify().contains(to)) {
            throw new ClarifyException(ErrorCode.SCOPE_VIOLATION, "Agent '" + from + "' cannot clarify with '" + to
                    + "'. Allowed: " + step.canClarify() + " (can_clarify of step '" + step.id() + "' in workflow '"
                    + wf.name() + "').");
        }
        return step;
    }

    // ---- answer / follow-up ------------------------------------------------------------------

    private Outcome answer(ClarifyCommand.Answer a, String request) {
        String text = Validation.text("answer", a.text());
        String id = canonical(a.id());
        return written(w -> w.record().to(), () -> onRecord(a.actor(), new LedgerChange.Answer(id, a.by(), text,
                a.choice(), now(), key(request))));
    }

    private Outcome followUp(ClarifyCommand.FollowUp f, String request, boolean routeNow) {
        String question = Validation.text("question", f.question());
        String id = canonical(f.id());
        String key = key(request);
        Outcome o = written(w -> w.record().from(), () -> onRecord(f.actor(), new LedgerChange.FollowUp(id, f.by(),
                question, now(), key)));
        if (o.replayed()) {
            // carried out before: refused again if that run met the round limit, else nothing to route
            boolean limit = ledgers.read(o.issue()).flatMap(l -> l.applied(key))
                    .map(done -> done.entry().type() == EntryType.ESCALATION).orElse(false);
            if (limit) {
                throw roundLimit(o);
            }
            // a recovered one (carried out for this process by one that died before its reply) is routed now
            return routeNow && !o.events().isEmpty() ? routeOwn(o) : o;
        }
        if (o.record().status() == Status.ESCALATED) {
            throw roundLimit(o); // only the round-limit branch above escalates here
        }
        return routeNow ? route(o) : o;
    }

    /**
     * Routes the question this command asked. A recovered outcome's record is as it is now: its
     * question is put to the channel only while that round still waits (moved on, it was answered
     * or routed by someone else since).
     */
    private Outcome routeOwn(Outcome asked) {
        if (asked.replayed() && asked.events().stream().noneMatch(e -> e.event() == EventType.REQUESTED
                && e.round() == asked.record().round())) {
            return asked;
        }
        return route(asked);
    }

    /** The refusal of a follow-up past the round limit, whose escalation {@code o} wrote (or had written). */
    public static RoundLimitException roundLimit(Outcome o) {
        ClarificationRecord r = o.record();
        return new RoundLimitException(r.id() + " reached max rounds (" + r.maxRounds() + "). Auto-escalated: "
                + "a human decides with 'agentx clarify resolve " + r.id() + " -m \"<decision>\"'.", o);
    }

    /** MAX_ROUNDS_EXCEEDED: the follow-up was refused and the record escalated (that escalation was written). */
    public static final class RoundLimitException extends ClarifyException {
        private final transient Outcome outcome;

        RoundLimitException(String message, Outcome outcome) {
            super(ErrorCode.MAX_ROUNDS_EXCEEDED, message);
            this.outcome = outcome;
        }

        public Outcome outcome() {
            return outcome;
        }
    }

    // ---- closing -----------------------------------------------------------------------------

    private Outcome resolve(ClarifyCommand.Resolve c, String request) {
        String note = Validation.optionalText("note", c.note());
        String id = canonical(c.id());
        return written(w -> w.record().from(), () -> onRecord(c.actor(), new LedgerChange.Resolve(id, c.by(), note,
                now(), key(request), c.asRequester())));
    }

    private Outcome escalate(ClarifyCommand.Escalate c, String request) {
        String reason = Validation.optionalText("reason", c.reason());
        String id = canonical(c.id());
        return written(w -> w.record().from(), () -> onRecord(c.actor(), new LedgerChange.Escalate(id, c.by(),
                reason, now(), key(request))));
    }

    /**
     * Escalates on the monitor's behalf (stale twice, stuck, deadlock): same transition as a manual
     * escalation, written under the hub's name. Returns null if the record is no longer open to it.
     */
    public Outcome escalateByHub(String id, String reason, java.util.function.Predicate<ClarificationRecord> still) {
        return escalateByHub(id, reason, (ledger, r) -> still.test(r));
    }

    /**
     * {@link #escalateByHub(String, String, java.util.function.Predicate)} with a condition that may
     * look at the whole locked ledger (the monitor's stuck rule compares a record with the others
     * of its issue). Returns null if the record is no longer open to it.
     */
    public Outcome escalateByHub(String id, String reason,
                                 java.util.function.BiPredicate<Ledger, ClarificationRecord> still) {
        Instant now = now();
        Outcome o = written(w -> HUB, () -> onRecord(id, HUB, (ledger, r) -> {
            if (r.status() == Status.ESCALATED || r.status().terminal() || !still.test(ledger, r)) {
                return Mutation.none(null);
            }
            // a manual escalation's transition, under the hub's name (no key: only one process runs the monitor's change)
            return new LedgerChange.Escalate(r.id(), HUB, reason, now, null).change(ledger, r);
        }));
        return o;
    }

    /**
     * The monitor's first timeout: a {@code pending} record past its {@code staleAfter} becomes
     * {@code stale} (event clarification-stale). The condition is checked again under the ledger's
     * lock, so however many monitors run, only one of them makes the change; it gets the outcome
     * (and then asks the target again), the others get null. No thread entry is written: the ledger format's
     * entry types have none for it. The moment is kept as {@code reaskedAt}: the second timeout is a
     * full SLA after it, however late this pass ran.
     */
    public Outcome markStale(String id) {
        Instant now = now();
        Outcome o = written(w -> HUB, () -> onRecord(id, HUB, (ledger, r) -> {
            if (r.status() != Status.PENDING || !now.isAfter(r.staleAfter())) {
                return Mutation.none(null);
            }
            return LedgerChange.written(ledger, r.reasked(now), EventType.STALE, now);
        }));
        return o;
    }

    private Outcome abandon(ClarifyCommand.Abandon c, String request) {
        String reason = Validation.optionalText("reason", c.reason());
        String id = canonical(c.id());
        return written(w -> w.record().from(), () -> onRecord(c.actor(), new LedgerChange.Abandon(id, c.by(), reason,
                now(), key(request))));
    }

    // ---- helpers -----------------------------------------------------------------------------

    /** A change of one record under its issue's lock, for the monitor's conditional changes (no request key). */
    @FunctionalInterface
    private interface RecordChange {
        Mutation<Outcome> apply(Ledger ledger, ClarificationRecord record);
    }

    private Outcome onRecord(String idText, String actor, RecordChange change) {
        String id = canonical(idText);
        int issue = ClarificationId.parse(id).issue();
        if (!ledgers.exists(issue)) {
            throw LedgerChange.notFound(id);
        }
        return ledgers.update(issue, actor, ledger -> change.apply(ledger,
                ledger.find(id).orElseThrow(() -> LedgerChange.notFound(id))));
    }

    /**
     * Carries out a change of one record. An issue without a ledger is refused before locking, so
     * that an unknown id leaves no trace on disk (no lock files beside a ledger that does not
     * exist); an unknown id on an existing ledger is refused under the lock, which writes nothing then.
     */
    private Outcome onRecord(String actor, LedgerChange.OnRecord change) {
        if (!ledgers.exists(change.issue())) {
            throw LedgerChange.notFound(change.id());
        }
        return submit(actor, change);
    }

    private Outcome submit(String actor, LedgerChange change) {
        return ledgers.submit(change.issue(), actor, change, changes);
    }

    /** The canonical form of a clarification id (VALIDATION if it is not one). */
    private static String canonical(String id) {
        return ClarificationId.parse(id).toString();
    }

    /**
     * The request key of a change: the caller's (GitHub Mode: the delivery and the command's place
     * in it), else a new random one, so that every entry a change adds names the change that wrote
     * it and a change carried out twice (a holder that wrote the ledger and died before its reply)
     * is recognised.
     */
    private static String key(String request) {
        if (request != null) {
            return request;
        }
        java.util.concurrent.ThreadLocalRandom r = java.util.concurrent.ThreadLocalRandom.current();
        return LedgerChange.LOCAL + Long.toHexString(r.nextLong() | Long.MIN_VALUE) + Long.toHexString(r.nextLong() | Long.MIN_VALUE);
    }

    /** The write, then the statuses and events that mirror it, as one unit of the store (see {@link LedgerStore#atomically}). */
    private Outcome written(String actor, java.util.function.Supplier<Outcome> write) {
        return written(w -> actor, write);
    }

    private Outcome written(java.util.function.Function<Outcome, String> actor, java.util.function.Supplier<Outcome> write) {
        return ledgers.atomically(() -> {
            Outcome o = write.get();
            if (o != null) {
                afterWrite(actor.apply(o), o);
            }
            return o;
        });
    }

    /**
     * After the ledger write (its lock released): agent statuses, then the event log and listeners.
     * They mirror the ledger; a failure here is logged, never reported as a failed command.
     */
    public void afterWrite(String actor, Outcome o) {
        if (o.events().isEmpty()) {
            return;
        }
        if (!o.mirrored()) {
            try {
                statuses.mirror(actor, o.issue(), agentsOf(o));
            } catch (RuntimeException e) {
                log().warn("agent statuses not updated after {}: {}", o.record().id(), e.getMessage());
            }
        }
        try {
            events.publish(o.events());
        } catch (RuntimeException e) {
            log().warn("events not recorded after {}: {}", o.record().id(), e.getMessage());
        }
    }

    private static Set<String> agentsOf(Outcome o) {
        Set<String> agents = new TreeSet<>();
        for (ClarificationEvent e : o.events()) {
            agents.add(e.fromAgent());
            agents.add(e.toAgent());
        }
        return agents;
    }

    /**
     * The statuses of other processes' changes this process carried out in one ledger write (see
     * LedgerStore#submit), mirrored from the ledger it holds in memory before they get their
     * replies, so that none of them has to read the ledger for it. Stored at once (left to the
     * holder of the status file's lock if it is busy), whatever this process does with its own.
     */
    private void mirrorForOthers(int issue, List<Outcome> outcomes) {
        Set<String> agents = new TreeSet<>();
        for (Outcome o : outcomes) {
            agents.addAll(agentsOf(o));
        }
        if (!agents.isEmpty()) {
            statuses.mirror(HUB, issue, agents);
            statuses.flush();
        }
    }

    /**
     * Puts the newest question of {@code asked} (a command's outcome) to the target's channel,
     * outside any lock; records an immediate answer. An outcome with no pending question, or whose
     * channel delivered the question and recorded nothing (a person answers later), is returned as
     * it is, the same instance: callers tell by that that nothing changed.
     */
    public Outcome route(Outcome asked) {
        ClarificationRecord r = asked.record();
        if (r.status() != Status.PENDING) {
            return asked;
        }
        QuestionRequest request = new QuestionRequest(r.id(), asked.issue(), r.from(), r.to(), r.topic(), r.round(),
                r.lastQuestion().map(ThreadEntry::body).orElse(""), r.options(), r.thread());
        Delivery d;
        try {
            d = channel.ask(request);
        } catch (RuntimeException e) {
            d = new Delivery.Failed(e.toString());
        }
        return delivered(asked, d);
    }

    /**
     * Records what the target's channel delivered for the record's current round, as route() does
     * after an ask: an answer by the record's autonomy (a proposal under approve), a failure as a
     * note with the record as it is now. For callers that ask the channel themselves (the
     * monitor asking a stale question again). Never call it under a ledger lock.
     */
    public Outcome delivered(int issue, ClarificationRecord asked, Delivery d) {
        return delivered(new Outcome(issue, asked, List.of(), List.of()), d);
    }

    private Outcome delivered(Outcome asked, Delivery d) {
        ClarificationRecord r = asked.record();
        if (d instanceof Delivery.Answered ans) {
            try {
                return asked.then(channelAnswer(r, ans));
            } catch (ClarifyException e) {
                return withNote(asked, "The " + ans.channel() + " answer of " + r.to() + " was not recorded: "
                        + e.getMessage());
            }
        }
        if (d instanceof Delivery.Failed f) {
            log().warn("channel of {} failed for {}: {}", r.to(), r.id(), f.error());
            return afterChannelFailure(asked, f);
        }
        return asked;
    }

    // ---- answer channels: choices, autonomy, proposals and acceptance (issue 5) ---------------

    /**
     * Records an automatic channel's answer by the record's autonomy: full counts at once; notify
     * counts and says the target role's people are told; approve (blocking questions) records a
     * proposal that counts only once a person accepts it.
     */
    private Outcome channelAnswer(ClarificationRecord r, Delivery.Answered ans) {
        return byAutonomy(r, new ClarifyCommand.Answer(r.id(), r.to(), ans.text(), ans.choice()), ans.channel());
    }

    /**
     * An agent's own answer, given in its session ({@code agentx mcp}) rather than through a
     * channel: it counts by the record's autonomy just as a channel's answer does (approve: a
     * blocking round's answer is a proposal a person accepts; notify: it counts, and the people in
     * the role are told). An answer by another role than the target is refused as any answer is.
     */
    public Outcome agentAnswer(ClarifyCommand.Answer a, String channel) {
        String id = canonical(a.id());
        int issue = ClarificationId.parse(id).issue();
        ClarificationRecord r = ledgers.read(issue).flatMap(l -> l.find(id)).orElseThrow(() -> LedgerChange.notFound(id));
        if (a.by() == null || !Roles.canonical(a.by()).equals(r.to()) || !r.status().awaitingAnswer()
                || r.effectiveAutonomy() == Autonomy.FULL) {
            // counts at once, or is refused as any answer is (not the target's, or the round does not wait)
            return answer(a, null);
        }
        return byAutonomy(r, a, channel);
    }

    /** {@code a}, the target's answer of {@code r}'s round through {@code channel}, counted by the record's autonomy. */
    private Outcome byAutonomy(ClarificationRecord r, ClarifyCommand.Answer a, String channel) {
        Autonomy autonomy = r.effectiveAutonomy();
        if (autonomy == Autonomy.APPROVE && r.blocking()) {
            return propose(r, new Delivery.Answered(a.text(), a.choice(), channel));
        }
        Outcome answered = answer(a, null);
        List<String> notes = new ArrayList<>(List.of(r.to() + " answered through its " + channel + " channel."));
        if (autonomy == Autonomy.NOTIFY) {
            List<String> people = config.roles().getOrDefault(r.to(), List.of());
            notes.add("notify: " + r.to() + "'s agent answered " + r.id() + " on its own; telling the people in role "
                    + r.to() + (people.isEmpty() ? " (none listed under [roles])" : ": " + String.join(", ", people))
                    + ".");
        }
        return new Outcome(answered.issue(), answered.record(), answered.events(), notes);
    }

    /** Writes the agent's answer as a proposal: the round stays pending until a person accepts it. */
    private Outcome propose(ClarificationRecord asked, Delivery.Answered ans) {
        String text = Validation.text("answer", ans.text());
        return onRecord(asked.to(), new LedgerChange.Propose(asked.id(), asked.round(), text, ans.choice(),
                ans.channel(), now(), key(null)));
    }

    private Outcome accept(ClarifyCommand.Accept c, String request) {
        String id = canonical(c.id());
        return written(w -> w.record().to(), () -> onRecord(c.actor(), new LedgerChange.Accept(id, c.by(), now(),
                key(request))));
    }

    /** After a failed channel: the record as it is now (the channel may have escalated it) with a note. */
    private Outcome afterChannelFailure(Outcome asked, Delivery.Failed f) {
        ClarificationRecord r = asked.record();
        ClarificationRecord now = ledgers.read(asked.issue()).flatMap(l -> l.find(r.id())).orElse(r);
        String note = now.status() == Status.ESCALATED
                ? "Could not get an answer from " + r.to() + ": " + f.error() + ". Escalated: a human decides with "
                + "'agentx clarify resolve " + r.id() + " -m \"<decision>\"'."
                : "No answer from " + r.to() + ": " + f.error()
                + ". The question stays pending; the monitor asks again when it goes stale.";
        return withNote(new Outcome(asked.issue(), now, asked.events(), asked.notes()), note);
    }

    private static Outcome withNote(Outcome o, String note) {
        List<String> notes = new ArrayList<>(o.notes());
        notes.add(note);
        return new Outcome(o.issue(), o.record(), o.events(), notes);
    }
}
