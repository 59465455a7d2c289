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
import dev.agentx.clarify.protocol.OptionsParser;
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
import java.util.Optional;
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
        boolean isBlocking = blocking;
        Outcome outcome = written(from, () -> ledgers.update(issue, from, ledger -> {
            Optional<Ledger.Applied> done = request == null ? Optional.empty() : ledger.applied(request);
            if (done.isPresent()) {
                return Mutation.none(Outcome.replayed(issue, done.get().record()));
            }
            if (a.openQuestionId() != null) {
                Optional<ClarificationRecord> seen = ingested(ledger, from, a.openQuestionId());
                if (seen.isPresent()) {
                    return Mutation.none(new Outcome(issue, seen.get(), List.of(), List.of("Skipped open question '"
                            + a.openQuestionId() + "' of " + from + ": already asked as " + seen.get().id() + ".")));
                }
            }
            String id = ledger.nextId().toString();
            ClarificationRecord rec = new ClarificationRecord(id, from, to, topic, isBlocking, Status.PENDING, 1,
                    maxRounds, now, now.plus(sla), null, options,
                    List.of(new ThreadEntry(1, from, EntryType.QUESTION, question, now)
                            .withOpenQuestionId(a.openQuestionId()).withRequest(request)), autonomy);
            return Mutation.write(ledger.add(rec), new Outcome(issue, rec,
                    List.of(ClarificationEvent.of(EventType.REQUESTED, issue, rec, now)), notes));
        }));
        if (outcome.events().isEmpty()) {
            return outcome; // asked before (the same request or open question): nothing written, nothing routed
        }
        return routeNow ? route(outcome) : outcome;
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
                        + "'. Pick the issue's workflow with --workflow, or add a step for '" + from + "'."));
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
        Instant now = now();
        Outcome o = written(w -> w.record().to(), () -> onRecord(a.id(), a.actor(), request, (ledger, r) -> {
            String by = a.by() == null ? r.to() : Roles.canonical(a.by());
            if (!by.equals(r.to())) {
                throw new ClarifyException(ErrorCode.VALIDATION, r.id() + " is addressed to '" + r.to() + "'; '" + by
                        + "' cannot answer it.");
            }
            if (!r.status().awaitingAnswer()) {
                throw invalidState(r, "answer it", switch (r.status()) {
                    case ANSWERED -> "round " + r.round() + " is already answered; the requester may follow up with "
                            + "'agentx clarify followup " + r.id() + " \"...\"' or resolve it";
                    case ESCALATED -> "it waits for a human: resolve it with 'agentx clarify resolve " + r.id()
                            + " -m \"<decision>\"'";
                    default -> "it is closed";
                });
            }
            ClarificationRecord next = r.with(Status.ANSWERED, ThreadEntry.answer(r.round(), by, text, now,
                    choiceFor(r, a.choice(), text)));
            return Mutation.write(ledger.replace(next), outcome(ledger, next, EventType.ANSWERED, now));
        }));
        return o;
    }

    private Outcome followUp(ClarifyCommand.FollowUp f, String request, boolean routeNow) {
        String question = Validation.text("question", f.question());
        Instant now = now();
        Outcome o = written(w -> w.record().from(), () -> onRecord(f.id(), f.actor(), request, (ledger, r) -> {
            String by = f.by() == null ? r.from() : Roles.canonical(f.by());
            if (!by.equals(r.from())) {
                throw new ClarifyException(ErrorCode.VALIDATION, "Only the requester '" + r.from()
                        + "' may follow up on " + r.id() + ", not '" + by + "'.");
            }
            if (r.status() != Status.ANSWERED) {
                throw invalidState(r, "follow up", r.status().awaitingAnswer()
                        ? "round " + r.round() + " still waits for " + r.to() + "'s answer"
                        : r.status() == Status.ESCALATED ? "it waits for a human to resolve it" : "it is closed");
            }
            if (r.round() >= r.maxRounds()) {
                String summary = EscalationSummary.of(r, "round limit reached (" + r.maxRounds()
                        + " rounds); a follow-up would open round " + (r.round() + 1), question);
                ClarificationRecord next = r.with(Status.ESCALATED, new ThreadEntry(r.round(), HUB,
                        EntryType.ESCALATION, summary, now));
                return Mutation.write(ledger.replace(next), outcome(ledger, next, EventType.ESCALATED, now));
            }
            int round = r.round() + 1;
            ClarificationRecord next = r.withRound(round, now.plus(r.sla()))
                    .with(Status.PENDING, new ThreadEntry(round, by, EntryType.QUESTION, question, now));
            return Mutation.write(ledger.replace(next), outcome(ledger, next, EventType.REQUESTED, now));
        }));
        if (o.replayed()) {
            // carried out before: refused again if that run met the round limit, else nothing to route
            boolean limit = ledgers.read(o.issue()).flatMap(l -> l.applied(request))
                    .map(done -> done.entry().type() == EntryType.ESCALATION).orElse(false);
            if (limit) {
                throw roundLimit(o);
            }
            return o;
        }
        if (o.record().status() == Status.ESCALATED) {
            throw roundLimit(o); // only the round-limit branch above escalates here
        }
        return routeNow ? route(o) : o;
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
        Instant now = now();
        Outcome o = written(w -> w.record().from(), () -> onRecord(c.id(), c.actor(), request, (ledger, r) -> {
            if (r.status().terminal()) {
                throw invalidState(r, "resolve it", "it is already " + r.status().wire());
            }
            String by = c.by() != null ? c.by() : r.status() == Status.ESCALATED ? "human" : r.from();
            ClarificationRecord next = r.with(Status.RESOLVED, new ThreadEntry(r.round(), by, EntryType.RESOLUTION,
                    note == null ? "Resolved." : note, now)).withResolvedAt(now);
            return Mutation.write(ledger.replace(next), outcome(ledger, next, EventType.RESOLVED, now));
        }));
        return o;
    }

    private Outcome escalate(ClarifyCommand.Escalate c, String request) {
        String reason = Validation.optionalText("reason", c.reason());
        Instant now = now();
        Outcome o = written(w -> w.record().from(), () -> onRecord(c.id(), c.actor(), request, (ledger, r) -> {
            if (r.status() == Status.ESCALATED || r.status().terminal()) {
                throw invalidState(r, "escalate it", "it is already " + r.status().wire());
            }
            String by = c.by() != null ? c.by() : "human";
            String summary = EscalationSummary.of(r, reason == null ? "escalated by " + by : reason, null);
            ClarificationRecord next = r.with(Status.ESCALATED, new ThreadEntry(r.round(), by, EntryType.ESCALATION,
                    summary, now));
            return Mutation.write(ledger.replace(next), outcome(ledger, next, EventType.ESCALATED, now));
        }));
        return o;
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
        Outcome o = written(w -> HUB, () -> onRecord(id, HUB, null, (ledger, r) -> {
            if (r.status() == Status.ESCALATED || r.status().terminal() || !still.test(ledger, r)) {
                return Mutation.none(null);
            }
            String summary = EscalationSummary.of(r, reason, null);
            ClarificationRecord next = r.with(Status.ESCALATED, new ThreadEntry(r.round(), HUB, EntryType.ESCALATION,
                    summary, now));
            return Mutation.write(ledger.replace(next), outcome(ledger, next, EventType.ESCALATED, now));
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
        Outcome o = written(w -> HUB, () -> onRecord(id, HUB, null, (ledger, r) -> {
            if (r.status() != Status.PENDING || !now.isAfter(r.staleAfter())) {
                return Mutation.none(null);
            }
            ClarificationRecord next = r.reasked(now);
            return Mutation.write(ledger.replace(next), outcome(ledger, next, EventType.STALE, now));
        }));
        return o;
    }

    private Outcome abandon(ClarifyCommand.Abandon c, String request) {
        String reason = Validation.optionalText("reason", c.reason());
        Instant now = now();
        Outcome o = written(w -> w.record().from(), () -> onRecord(c.id(), c.actor(), request, (ledger, r) -> {
            if (r.status().terminal()) {
                throw invalidState(r, "abandon it", "it is already " + r.status().wire());
            }
            String by = c.by() != null ? c.by() : "human";
            ClarificationRecord next = r.with(Status.ABANDONED, new ThreadEntry(r.round(), by, EntryType.RESOLUTION,
                    "Abandoned" + (reason == null ? "." : ": " + reason), now)).withResolvedAt(now);
            return Mutation.write(ledger.replace(next), outcome(ledger, next, EventType.ABANDONED, now));
        }));
        return o;
    }

    // ---- helpers -----------------------------------------------------------------------------

    @FunctionalInterface
    private interface RecordChange {
        Mutation<Outcome> apply(Ledger ledger, ClarificationRecord record);
    }

    /**
     * Applies {@code change} to the record under the issue's lock. With a {@code request} key: a
     * request the ledger holds already is {@link Outcome#replayed}; otherwise the key goes on the
     * entry the change adds (a change that adds none, e.g. a refusal, carries no key).
     */
    private Outcome onRecord(String idText, String actor, String request, RecordChange change) {
        ClarificationId id = ClarificationId.parse(idText);
        String canonicalId = id.toString();
        // An issue without a ledger is refused before locking, so that an unknown id leaves no trace
        // on disk (no lock files beside a ledger that does not exist); an unknown id on an existing
        // ledger is refused under the lock, which writes nothing then.
        if (!ledgers.exists(id.issue())) {
            throw notFound(canonicalId);
        }
        return ledgers.update(id.issue(), actor, ledger -> {
            ClarificationRecord r = ledger.find(canonicalId).orElseThrow(() -> notFound(canonicalId));
            if (request == null) {
                return change.apply(ledger, r);
            }
            Optional<Ledger.Applied> done = ledger.applied(request);
            if (done.isPresent()) {
                return Mutation.none(Outcome.replayed(id.issue(), done.get().record()));
            }
            Mutation<Outcome> m = change.apply(ledger, r);
            if (m.ledger() == null || m.result() == null || m.result().record().thread().size() <= r.thread().size()) {
                return m;
            }
            ClarificationRecord next = m.result().record();
            List<ThreadEntry> thread = new ArrayList<>(next.thread());
            thread.set(thread.size() - 1, thread.get(thread.size() - 1).withRequest(request));
            ClarificationRecord keyed = next.withThread(thread);
            Outcome o = m.result();
            return Mutation.write(m.ledger().replace(keyed), new Outcome(o.issue(), keyed, o.events(), o.notes()));
        });
    }

    private static ClarifyException notFound(String id) {
        return new ClarifyException(ErrorCode.NOT_FOUND, "Clarification " + id + " not found in ledger. List the "
                + "issue's records with 'agentx clarify --issue N'.");
    }

    private static ClarifyException invalidState(ClarificationRecord r, String action, String why) {
        return new ClarifyException(ErrorCode.INVALID_STATE, "Cannot " + action + ": " + r.id() + " is "
                + r.status().wire() + " (" + why + ").");
    }

    private static Outcome outcome(Ledger ledger, ClarificationRecord next, EventType type, Instant now) {
        return new Outcome(ledger.issueNumber(), next, List.of(ClarificationEvent.of(type, ledger.issueNumber(), next, now)),
                List.of());
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
        try {
            Set<String> agents = new TreeSet<>();
            for (ClarificationEvent e : o.events()) {
                agents.add(e.fromAgent());
                agents.add(e.toAgent());
            }
            statuses.mirror(actor, o.issue(), agents);
        } catch (RuntimeException e) {
            log().warn("agent statuses not updated after {}: {}", o.record().id(), e.getMessage());
        }
        try {
            events.publish(o.events());
        } catch (RuntimeException e) {
            log().warn("events not recorded after {}: {}", o.record().id(), e.getMessage());
        }
    }

    /**
     * Puts the newest question of {@code asked} (a command's outcome) to the target's channel,
     * outside any lock; records an immediate answer. An outcome with no pending question is
     * returned as it is.
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

    /** The option an answer chose: the given 0-based index (checked), else the one its text names, else null. */
    private static Integer choiceFor(ClarificationRecord r, Integer given, String text) {
        if (given == null) {
            return OptionsParser.choose(r.options(), text).orElse(null);
        }
        if (given < 0 || given >= r.options().size()) {
            throw new ClarifyException(ErrorCode.VALIDATION, r.id() + (r.options().isEmpty() ? " offers no options"
                    : " offers options 1 to " + r.options().size()) + "; choice " + (given + 1) + " is not one of them.");
        }
        return given;
    }

    /** The record opened earlier on this ledger by {@code from} for its open question {@code questionId}. */
    private static Optional<ClarificationRecord> ingested(Ledger ledger, String from, String questionId) {
        return ledger.clarifications().stream()
                .filter(r -> r.from().equals(from)
                        && r.thread().stream().anyMatch(e -> questionId.equals(e.openQuestionId())))
                .findFirst();
    }

    /**
     * Records an automatic channel's answer by the record's autonomy: full counts at once; notify
     * counts and says the target role's people are told; approve (blocking questions) records a
     * proposal that counts only once a person accepts it.
     */
    private Outcome channelAnswer(ClarificationRecord r, Delivery.Answered ans) {
        Autonomy autonomy = r.effectiveAutonomy();
        if (autonomy == Autonomy.APPROVE && r.blocking()) {
            return propose(r, ans);
        }
        Outcome answered = answer(new ClarifyCommand.Answer(r.id(), r.to(), ans.text(), ans.choice()), null);
        List<String> notes = new ArrayList<>(List.of(r.to() + " answered through its " + ans.channel() + " channel."));
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
        Instant now = now();
        return onRecord(asked.id(), asked.to(), null, (ledger, r) -> {
            if (!r.status().awaitingAnswer() || r.round() != asked.round()) {
                throw invalidState(r, "propose an answer to round " + asked.round(), "that round no longer waits");
            }
            ClarificationRecord next = r.with(r.status(), ThreadEntry.proposal(r.round(), r.to(), text, now,
                    choiceFor(r, ans.choice(), text)));
            return Mutation.write(ledger.replace(next), new Outcome(ledger.issueNumber(), next, List.of(),
                    List.of(r.to() + " proposed an answer through its " + ans.channel() + " channel; with autonomy "
                            + "'approve' it counts once a person in role " + r.to() + " accepts it: 'agentx clarify "
                            + "accept " + r.id() + "' (or answers it with 'agentx clarify answer " + r.id()
                            + " \"...\"').")));
        });
    }

    private Outcome accept(ClarifyCommand.Accept c, String request) {
        Instant now = now();
        Outcome o = written(w -> w.record().to(), () -> onRecord(c.id(), c.actor(), request, (ledger, r) -> {
            ThreadEntry proposal = r.pendingProposal().orElseThrow(() -> invalidState(r, "accept an answer",
                    r.status().awaitingAnswer() ? "no agent answer to round " + r.round() + " waits for acceptance; "
                            + "answer it with 'agentx clarify answer " + r.id() + " \"...\"'"
                            : "only a proposed answer of a pending round can be accepted"));
            String by = c.by() == null || c.by().isBlank() ? "human" : c.by().strip();
            ClarificationRecord next = r.with(Status.ANSWERED, proposal.acceptedAt(now, by));
            return Mutation.write(ledger.replace(next), outcome(ledger, next, EventType.ANSWERED, now));
        }));
        return o;
    }

    /** After a failed channel: the record as it is now (the channel may have escalated it) with a note. */
    private Outcome afterChannelFailure(Outcome asked, Delivery.Failed f) {
        ClarificationRecord r = asked.record();
        ClarificationRecord now = ledgers.read(asked.issue()).flatMap(l -> l.find(r.id())).orElse(r);
        String note = now.status() == Status.ESCALATED
                ? "Could not get an answer from " + r.to() + ": " + f.error() + ". Escalated: a human decides with "
                + "'agentx clarify resolve " + r.id() + " -m \"<decision>\"'."
                : "Could not reach " + r.to() + ": " + f.error()
                + ". The question stays pending; the monitor asks again when it goes stale.";
        return withNote(new Outcome(asked.issue(), now, asked.events(), asked.notes()), note);
    }

    private static Outcome withNote(Outcome o, String note) {
        List<String> notes = new ArrayList<>(o.notes());
        notes.add(note);
        return new Outcome(o.issue(), o.record(), o.events(), notes);
    }
}
