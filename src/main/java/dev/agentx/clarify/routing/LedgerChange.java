package dev.agentx.clarify.routing;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonProperty;
import com.fasterxml.jackson.annotation.JsonSubTypes;
import com.fasterxml.jackson.annotation.JsonTypeInfo;
import dev.agentx.clarify.events.ClarificationEvent;
import dev.agentx.clarify.events.EventType;
import dev.agentx.clarify.ledger.LedgerStore.Mutation;
import dev.agentx.clarify.ledger.SharedChange;
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
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * The changes a command makes to its issue's ledger, as values: the engine builds one outside the
 * lock from a validated command (with the time it ran and everything the workflow and the
 * settings decided), and whichever process holds the issue's lock carries it out (group commit:
 * see {@link dev.agentx.clarify.ledger.LedgerStore#submit}). The rules that need the locked
 * ledger live here: which transitions a record allows, who may make them, the round limit.
 *
 * <p>Every change carries {@code request}, an idempotency key: a change whose key the ledger holds
 * already (on a thread entry) changes nothing and returns {@link Outcome#replayed}. That is how a
 * command carried out again after a crash is recognised: GitHub Mode's keys (the delivery and the
 * command's place in it) are always written, since a delivery is re-run after a crash; a key the
 * hub made up for a local command ({@link #LOCAL}) is written only when another process carries
 * the change out, since only then can its submitter outlive a holder that wrote the ledger and
 * died before its reply. A ledger written by one process at a time so keeps SPEC-1's fields.
 *
 * <p>As text for another process ({@link LedgerChangeCodec}), a change is one flat JSON object
 * named by its {@code kind}; the text of an answer, a follow-up, a resolution, an escalation or an
 * abandonment is its {@code text}.
 */
@JsonTypeInfo(use = JsonTypeInfo.Id.NAME, property = "kind")
@JsonSubTypes({@JsonSubTypes.Type(value = LedgerChange.Ask.class, name = "ask"),
        @JsonSubTypes.Type(value = LedgerChange.Answer.class, name = "answer"),
        @JsonSubTypes.Type(value = LedgerChange.FollowUp.class, name = "followup"),
        @JsonSubTypes.Type(value = LedgerChange.Resolve.class, name = "resolve"),
        @JsonSubTypes.Type(value = LedgerChange.Escalate.class, name = "escalate"),
        @JsonSubTypes.Type(value = LedgerChange.Abandon.class, name = "abandon"),
        @JsonSubTypes.Type(value = LedgerChange.Accept.class, name = "accept"),
        @JsonSubTypes.Type(value = LedgerChange.Propose.class, name = "propose")})
@JsonInclude(JsonInclude.Include.NON_NULL)
public sealed interface LedgerChange extends SharedChange<Outcome> {
    /** How the keys the hub makes up for local commands begin. */
    String LOCAL = "local/";

    /** The idempotency key. */
    String request();

    /** The issue whose ledger the change is for. */
    int issue();

    /** The change, with {@code keyed}: whether the entry it adds carries its key. */
    Mutation<Outcome> apply(Ledger ledger, boolean keyed);

    @Override
    default Mutation<Outcome> apply(Ledger ledger) {
        return apply(ledger, !request().startsWith(LOCAL));
    }

    /**
     * The time a change is stamped with: when it was asked, or the latest time in the ledger if
     * that is later. Changes waiting for an issue's lock are carried out one after another by
     * whoever holds it, each with the time it was asked: without this, a change asked a moment
     * before another and carried out after it would read earlier in the thread than the entry
     * before it.
     */
    static Instant stamp(Ledger ledger, Instant at) {
        Instant latest = ledger.latest();
        return latest != null && at != null && latest.isAfter(at) ? latest : at;
    }

    /**
     * The outcome of this change found done in the ledger. A local command's key is found only when
     * a process carried the change out for its submitter and died before its reply (the key is
     * random, and written only then): the submitter heard nothing, so it gets the events that run
     * caused, rebuilt from the entry it wrote, to record them and route the question as its own.
     * A key of GitHub Mode found done is a delivery run again after a crash: nothing is done again.
     */
    default Outcome foundDone(int issue, Ledger.Applied done) {
        if (!request().startsWith(LOCAL)) {
            return Outcome.replayed(issue, done.record());
        }
        return Outcome.recovered(issue, done.record(), eventOf(issue, done).map(List::of).orElse(List.of()));
    }

    /**
     * The event the change that wrote {@code done}'s entry caused: a question asks (round 1) or
     * opens the next round, an answer answers (a person's acceptance of a proposal too, which
     * writes the answer it accepts; the proposal itself, written by an agent's answer under
     * approve, causes none), an escalation
     * escalates, a resolution resolves or abandons (the record's final status tells which). The
     * status is the one that change left; the round and time are the entry's.
     */
    static Optional<ClarificationEvent> eventOf(int issue, Ledger.Applied done) {
        ClarificationRecord r = done.record();
        ThreadEntry e = done.entry();
        java.util.function.BiFunction<EventType, Status, Optional<ClarificationEvent>> event = (type, status) ->
                Optional.of(ClarificationEvent.of(type, issue, r, e.round(), status, e.timestamp()));
        return switch (e.type()) {
            case QUESTION -> event.apply(EventType.REQUESTED, Status.PENDING);
            case ANSWER -> e.isProposal() ? Optional.empty() : event.apply(EventType.ANSWERED, Status.ANSWERED);
            case ESCALATION -> event.apply(EventType.ESCALATED, Status.ESCALATED);
            case RESOLUTION -> r.status() == Status.ABANDONED ? event.apply(EventType.ABANDONED, Status.ABANDONED)
                    : event.apply(EventType.RESOLVED, Status.RESOLVED);
        };
    }

    /** This change as carried out for another process: its key is written whatever it is. */
    default SharedChange<Outcome> forAnother() {
        return ledger -> apply(ledger, true);
    }

    /** A new question: a new record in round 1. */
    record Ask(int issue, String from, String to, String topic, boolean blocking, int maxRounds, Instant at,
               Instant staleAfter, List<String> options, String question, String openQuestionId, Autonomy autonomy,
               List<String> notes, String request) implements LedgerChange {
        public Ask {
            options = List.copyOf(options);
            notes = List.copyOf(notes);
        }

        @Override
        public Mutation<Outcome> apply(Ledger ledger, boolean keyed) {
            Optional<Ledger.Applied> done = ledger.applied(request);
            if (done.isPresent()) {
                return Mutation.none(foundDone(issue, done.get()));
            }
            if (openQuestionId != null) {
                Optional<ClarificationRecord> seen = ledger.clarifications().stream()
                        .filter(r -> r.from().equals(from)
                                && r.thread().stream().anyMatch(e -> openQuestionId.equals(e.openQuestionId())))
                        .findFirst();
                if (seen.isPresent()) {
                    return Mutation.none(new Outcome(issue, seen.get(), List.of(), List.of("Skipped open question '"
                            + openQuestionId + "' of " + from + ": already asked as " + seen.get().id() + ".")));
                }
            }
            String id = ledger.nextId().toString();
            Instant when = stamp(ledger, at);
            Instant stale = staleAfter == null || at == null ? staleAfter
                    : staleAfter.plus(java.time.Duration.between(at, when));
            ClarificationRecord rec = new ClarificationRecord(id, from, to, topic, blocking, Status.PENDING, 1,
                    maxRounds, when, stale, null, options,
                    List.of(new ThreadEntry(1, from, EntryType.QUESTION, question, when)
                            .withOpenQuestionId(openQuestionId).withRequest(keyed ? request : null)), autonomy);
            return Mutation.write(ledger.add(rec), new Outcome(issue, rec,
                    List.of(ClarificationEvent.of(EventType.REQUESTED, issue, rec, when)), notes));
        }
    }

    /**
     * A change of one existing record. An unknown id is refused with NOT_FOUND; a request found
     * done is replayed; otherwise the key goes on the entry the change adds.
     */
    sealed interface OnRecord extends LedgerChange {
        /** The record's id, canonical. */
        String id();

        /** The change of the record {@code r} of {@code ledger}; a refusal throws. */
        Mutation<Outcome> change(Ledger ledger, ClarificationRecord r);

        /** When it was asked. */
        Instant at();

        /** The same change stamped {@code when}. */
        OnRecord at(Instant when);

        @Override
        default int issue() {
            return ClarificationId.parse(id()).issue();
        }

        @Override
        default Mutation<Outcome> apply(Ledger ledger, boolean keyed) {
            ClarificationRecord r = ledger.find(id()).orElseThrow(() -> notFound(id()));
            Optional<Ledger.Applied> done = ledger.applied(request());
            if (done.isPresent()) {
                return Mutation.none(foundDone(ledger.issueNumber(), done.get()));
            }
            Instant when = stamp(ledger, at());
            Mutation<Outcome> m = (when == null || when.equals(at()) ? this : at(when)).change(ledger, r);
            if (!keyed || m.ledger() == null || m.result() == null
                    || m.result().record().thread().size() <= r.thread().size()) {
                return m;
            }
            ClarificationRecord next = m.result().record();
            List<ThreadEntry> thread = new ArrayList<>(next.thread());
            thread.set(thread.size() - 1, thread.get(thread.size() - 1).withRequest(request()));
            ClarificationRecord withKey = next.withThread(thread);
            Outcome o = m.result();
            return Mutation.write(m.ledger().replace(withKey), new Outcome(o.issue(), withKey, o.events(), o.notes()));
        }
    }

    /** The target's answer to the current round. {@code by} null: the record's target. */
    record Answer(String id, String by, String text, Integer choice, Instant at, String request) implements OnRecord {
        @Override
        public OnRecord at(Instant when) {
            return new Answer(id, by, text, choice, when, request);
        }

        @Override
        public Mutation<Outcome> change(Ledger ledger, ClarificationRecord r) {
            String who = by == null ? r.to() : Roles.canonical(by);
            if (!who.equals(r.to())) {
                throw new ClarifyException(ErrorCode.VALIDATION, r.id() + " is addressed to '" + r.to() + "'; '" + who
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
            ClarificationRecord next = r.with(Status.ANSWERED, ThreadEntry.answer(r.round(), who, text, at,
                    choiceFor(r, choice, text)));
            return written(ledger, next, EventType.ANSWERED, at);
        }
    }

    /**
     * The requester's next question, opening the next round; at the round limit the record is
     * escalated instead (the engine then refuses the follow-up with MAX_ROUNDS_EXCEEDED).
     */
    record FollowUp(String id, String by, @JsonProperty("text") String question, Instant at, String request)
            implements OnRecord {
        @Override
        public OnRecord at(Instant when) {
            return new FollowUp(id, by, question, when, request);
        }

        @Override
        public Mutation<Outcome> change(Ledger ledger, ClarificationRecord r) {
            String who = by == null ? r.from() : Roles.canonical(by);
            if (!who.equals(r.from())) {
                throw new ClarifyException(ErrorCode.VALIDATION, "Only the requester '" + r.from()
                        + "' may follow up on " + r.id() + ", not '" + who + "'.");
            }
            if (r.status() != Status.ANSWERED) {
                throw invalidState(r, "follow up", r.status().awaitingAnswer()
                        ? "round " + r.round() + " still waits for " + r.to() + "'s answer"
                        : r.status() == Status.ESCALATED ? "it waits for a human to resolve it" : "it is closed");
            }
            if (r.round() >= r.maxRounds()) {
                String summary = EscalationSummary.of(r, "round limit reached (" + r.maxRounds()
                        + " rounds); a follow-up would open round " + (r.round() + 1), question);
                ClarificationRecord next = r.with(Status.ESCALATED, new ThreadEntry(r.round(),
                        ClarificationEngine.HUB, EntryType.ESCALATION, summary, at));
                return written(ledger, next, EventType.ESCALATED, at);
            }
            int round = r.round() + 1;
            ClarificationRecord next = r.withRound(round, at.plus(r.sla()))
                    .with(Status.PENDING, new ThreadEntry(round, who, EntryType.QUESTION, question, at));
            return written(ledger, next, EventType.REQUESTED, at);
        }
    }

    /**
     * Closes the record as resolved. {@code by} null: the requester, or "human" while escalated.
     * {@code asRequester}: an agent closing its own question, refused unless {@code by} is the
     * requester and the record is not escalated (checked here, so that an escalation made after the
     * caller read the record is not closed behind the person it waits for).
     */
    record Resolve(String id, String by, @JsonProperty("text") String note, Instant at, String request,
                   boolean asRequester)
            implements OnRecord {
        @Override
        public OnRecord at(Instant when) {
            return new Resolve(id, by, note, when, request, asRequester);
        }

        public Resolve(String id, String by, String note, Instant at, String request) {
            this(id, by, note, at, request, false);
        }

        @Override
        public Mutation<Outcome> change(Ledger ledger, ClarificationRecord r) {
            if (r.status().terminal()) {
                throw invalidState(r, "resolve it", "it is already " + r.status().wire());
            }
            if (asRequester) {
                String who = by == null ? r.from() : Roles.canonical(by);
                if (!who.equals(r.from())) {
                    throw new ClarifyException(ErrorCode.VALIDATION, "Only the requester '" + r.from()
                            + "' may resolve " + r.id() + ", not '" + who + "'.");
                }
                if (r.status() == Status.ESCALATED) {
                    throw invalidState(r, "resolve it", "it waits for a person to resolve it");
                }
            }
            String who = by != null ? by : r.status() == Status.ESCALATED ? "human" : r.from();
            return closed(ledger, r, Status.RESOLVED, who, note == null ? "Resolved." : note, at, EventType.RESOLVED);
        }
    }

    /** Hands the record to a human. {@code by} null: "human". */
    record Escalate(String id, String by, @JsonProperty("text") String reason, Instant at, String request)
            implements OnRecord {
        @Override
        public OnRecord at(Instant when) {
            return new Escalate(id, by, reason, when, request);
        }

        @Override
        public Mutation<Outcome> change(Ledger ledger, ClarificationRecord r) {
            if (r.status() == Status.ESCALATED || r.status().terminal()) {
                throw invalidState(r, "escalate it", "it is already " + r.status().wire());
            }
            String who = by != null ? by : "human";
            String summary = EscalationSummary.of(r, reason == null ? "escalated by " + who : reason, null);
            ClarificationRecord next = r.with(Status.ESCALATED, new ThreadEntry(r.round(), who, EntryType.ESCALATION,
                    summary, at));
            return written(ledger, next, EventType.ESCALATED, at);
        }
    }

    /** Closes the record as abandoned. {@code by} null: "human". */
    record Abandon(String id, String by, @JsonProperty("text") String reason, Instant at, String request)
            implements OnRecord {
        @Override
        public OnRecord at(Instant when) {
            return new Abandon(id, by, reason, when, request);
        }

        @Override
        public Mutation<Outcome> change(Ledger ledger, ClarificationRecord r) {
            if (r.status().terminal()) {
                throw invalidState(r, "abandon it", "it is already " + r.status().wire());
            }
            return closed(ledger, r, Status.ABANDONED, by != null ? by : "human",
                    "Abandoned" + (reason == null ? "." : ": " + reason), at, EventType.ABANDONED);
        }
    }

    /** A person accepts the agent's proposed answer: it counts from now. {@code by} null or blank: "human". */
    record Accept(String id, String by, Instant at, String request) implements OnRecord {
        @Override
        public OnRecord at(Instant when) {
            return new Accept(id, by, when, request);
        }

        @Override
        public Mutation<Outcome> change(Ledger ledger, ClarificationRecord r) {
            ThreadEntry proposal = r.pendingProposal().orElseThrow(() -> invalidState(r, "accept an answer",
                    r.status().awaitingAnswer() ? "no agent answer to round " + r.round() + " waits for acceptance; "
                            + "answer it with 'agentx clarify answer " + r.id() + " \"...\"'"
                            : "only a proposed answer of a pending round can be accepted"));
            String who = by == null || by.isBlank() ? "human" : by.strip();
            ClarificationRecord next = r.with(Status.ANSWERED, proposal.acceptedAt(at, who));
            return written(ledger, next, EventType.ANSWERED, at);
        }
    }

    /**
     * An agent's answer under autonomy {@code approve}, written as a proposal: round {@code round}
     * stays pending until a person accepts it. {@code channel} names the channel it came through.
     */
    record Propose(String id, int round, String text, Integer choice, String channel, Instant at, String request)
            implements OnRecord {
        @Override
        public OnRecord at(Instant when) {
            return new Propose(id, round, text, choice, channel, when, request);
        }

        @Override
        public Mutation<Outcome> change(Ledger ledger, ClarificationRecord r) {
            if (!r.status().awaitingAnswer() || r.round() != round) {
                throw invalidState(r, "propose an answer to round " + round, "that round no longer waits");
            }
            ClarificationRecord next = r.with(r.status(), ThreadEntry.proposal(r.round(), r.to(), text, at,
                    choiceFor(r, choice, text)));
            return Mutation.write(ledger.replace(next), new Outcome(ledger.issueNumber(), next, List.of(),
                    List.of(r.to() + " proposed an answer through its " + channel + " channel; with autonomy "
                            + "'approve' it counts once a person in role " + r.to() + " accepts it: 'agentx clarify "
                            + "accept " + r.id() + "' (or answers it with 'agentx clarify answer " + r.id()
                            + " \"...\"').")));
        }
    }

    /** {@code r} closed as {@code status} by {@code who}, with a resolution entry saying {@code body}. */
    private static Mutation<Outcome> closed(Ledger ledger, ClarificationRecord r, Status status, String who,
                                            String body, Instant at, EventType type) {
        ClarificationRecord next = r.with(status, new ThreadEntry(r.round(), who, EntryType.RESOLUTION, body, at))
                .withResolvedAt(at);
        return written(ledger, next, type, at);
    }

    /** {@code next} in place of its record, with the event {@code type} of it. */
    static Mutation<Outcome> written(Ledger ledger, ClarificationRecord next, EventType type, Instant at) {
        return Mutation.write(ledger.replace(next), new Outcome(ledger.issueNumber(), next,
                List.of(ClarificationEvent.of(type, ledger.issueNumber(), next, at)), List.of()));
    }

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

    /** {@code id}: canonical (every caller has parsed it already). */
    static ClarifyException notFound(String id) {
        return new ClarifyException(ErrorCode.NOT_FOUND, "Clarification " + id + " not found in ledger. List the "
                + "issue's records with 'agentx clarify --issue " + ClarificationId.parse(id).issue() + "'.");
    }

    static ClarifyException invalidState(ClarificationRecord r, String action, String why) {
        return new ClarifyException(ErrorCode.INVALID_STATE, "Cannot " + action + ": " + r.id() + " is "
                + r.status().wire() + " (" + why + ").");
    }
}
