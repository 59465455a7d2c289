package dev.agentx.clarify.protocol;

import com.fasterxml.jackson.annotation.JsonIgnore;
import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonProperty;
import com.fasterxml.jackson.annotation.JsonPropertyOrder;
import com.fasterxml.jackson.annotation.JsonSetter;
import com.fasterxml.jackson.annotation.Nulls;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * One clarification: docs/protocol.md record. {@code options} is present only when the
 * question offered choices; {@code autonomy} only when it is not {@code full} (null means full);
 * {@code reaskedAt} only while the record is {@code stale}: when the monitor asked the target again,
 * which starts the second SLA period. {@code resolvedAt} is written as null while unset; the other
 * fields not marked required may be left out. Instances are immutable; transitions return new records.
 */
@JsonPropertyOrder({"id", "from", "to", "topic", "blocking", "status", "round", "maxRounds",
        "created", "staleAfter", "reaskedAt", "resolvedAt", "options", "autonomy", "thread"})
public record ClarificationRecord(
        @JsonProperty(required = true) String id,
        @JsonProperty(required = true) String from,
        @JsonProperty(required = true) String to,
        @JsonProperty(required = true) String topic,
        @JsonProperty(required = true) boolean blocking,
        @JsonProperty(required = true) Status status,
        @JsonProperty(required = true) int round,
        @JsonProperty(required = true) int maxRounds,
        @JsonProperty(required = true) Instant created,
        @JsonProperty(required = true) Instant staleAfter,
        @JsonInclude(JsonInclude.Include.ALWAYS) @JsonSetter(nulls = Nulls.SKIP) Instant resolvedAt,
        @JsonInclude(JsonInclude.Include.NON_EMPTY) List<String> options,
        @JsonProperty(required = true) List<ThreadEntry> thread,
        @JsonInclude(JsonInclude.Include.NON_NULL) Autonomy autonomy,
        @JsonInclude(JsonInclude.Include.NON_NULL) Instant reaskedAt) {

    public ClarificationRecord {
        Objects.requireNonNull(id, "id");
        Objects.requireNonNull(from, "from");
        Objects.requireNonNull(to, "to");
        Objects.requireNonNull(topic, "topic");
        Objects.requireNonNull(status, "status");
        Objects.requireNonNull(created, "created");
        Objects.requireNonNull(staleAfter, "staleAfter");
        options = options == null ? List.of() : List.copyOf(options);
        thread = thread == null ? List.of() : List.copyOf(thread);
        autonomy = autonomy == Autonomy.FULL ? null : autonomy;
        reaskedAt = status == Status.STALE ? reaskedAt : null;
    }

    /** A record that was not asked again by the monitor. */
    public ClarificationRecord(String id, String from, String to, String topic, boolean blocking, Status status,
                               int round, int maxRounds, Instant created, Instant staleAfter, Instant resolvedAt,
                               List<String> options, List<ThreadEntry> thread, Autonomy autonomy) {
        this(id, from, to, topic, blocking, status, round, maxRounds, created, staleAfter, resolvedAt, options,
                thread, autonomy, null);
    }

    /** A record with full autonomy (the default). */
    public ClarificationRecord(String id, String from, String to, String topic, boolean blocking, Status status,
                               int round, int maxRounds, Instant created, Instant staleAfter, Instant resolvedAt,
                               List<String> options, List<ThreadEntry> thread) {
        this(id, from, to, topic, blocking, status, round, maxRounds, created, staleAfter, resolvedAt, options,
                thread, null);
    }

    /** The autonomy answers through automatic channels have; never null. */
    @JsonIgnore
    public Autonomy effectiveAutonomy() {
        return autonomy == null ? Autonomy.FULL : autonomy;
    }

    public ClarificationRecord withAutonomy(Autonomy a) {
        return new ClarificationRecord(id, from, to, topic, blocking, status, round, maxRounds, created,
                staleAfter, resolvedAt, options, thread, a, reaskedAt);
    }

    @JsonIgnore
    public ClarificationId clarificationId() {
        return ClarificationId.parse(id);
    }

    public Optional<ThreadEntry> lastOf(EntryType type) {
        for (int i = thread.size() - 1; i >= 0; i--) {
            if (thread.get(i).type() == type) {
                return Optional.of(thread.get(i));
            }
        }
        return Optional.empty();
    }

    @JsonIgnore
    public Optional<ThreadEntry> lastQuestion() {
        return lastOf(EntryType.QUESTION);
    }

    /** The newest answer that counts (an agent's proposal waiting for acceptance does not). */
    @JsonIgnore
    public Optional<ThreadEntry> lastAnswer() {
        for (int i = thread.size() - 1; i >= 0; i--) {
            if (thread.get(i).isAnswer()) {
                return Optional.of(thread.get(i));
            }
        }
        return Optional.empty();
    }

    /**
     * The proposal that waits for a person (autonomy approve): a proposed answer in the current
     * round with no answer after it, while the round still awaits its answer.
     */
    @JsonIgnore
    public Optional<ThreadEntry> pendingProposal() {
        return status.awaitingAnswer() ? proposalOf(thread, round) : Optional.empty();
    }

    /** The newest entry of {@code round} in {@code thread} if it is a proposal (nothing answered it since). */
    public static Optional<ThreadEntry> proposalOf(List<ThreadEntry> thread, int round) {
        for (int i = thread.size() - 1; i >= 0; i--) {
            ThreadEntry e = thread.get(i);
            if (e.round() != round || e.type() == EntryType.QUESTION || e.isAnswer()) {
                return Optional.empty();
            }
            if (e.isProposal()) {
                return Optional.of(e);
            }
        }
        return Optional.empty();
    }

    /** The answer SLA: staleAfter is always the newest question's time plus the SLA. */
    @JsonIgnore
    public Duration sla() {
        Optional<ThreadEntry> question = lastQuestion();
        Instant asked = question.isPresent() ? question.get().timestamp() : created;
        Duration d = Duration.between(asked, staleAfter);
        return d.isNegative() || d.isZero() ? Duration.ofMinutes(30) : d;
    }

    /** Number of rounds whose question got an answer. */
    @JsonIgnore
    public int answeredRounds() {
        return (int) thread.stream().filter(ThreadEntry::isAnswer).count();
    }

    public ClarificationRecord with(Status newStatus, ThreadEntry entry) {
        List<ThreadEntry> t = new ArrayList<>(thread);
        if (entry != null) {
            t.add(entry);
        }
        return new ClarificationRecord(id, from, to, topic, blocking, newStatus, round, maxRounds, created,
                staleAfter, resolvedAt, options, t, autonomy, reaskedAt);
    }

    /** The record with {@code newThread} as its thread, all else the same. */
    public ClarificationRecord withThread(List<ThreadEntry> newThread) {
        return new ClarificationRecord(id, from, to, topic, blocking, status, round, maxRounds, created,
                staleAfter, resolvedAt, options, newThread, autonomy, reaskedAt);
    }

    public ClarificationRecord withRound(int newRound, Instant newStaleAfter) {
        return new ClarificationRecord(id, from, to, topic, blocking, status, newRound, maxRounds, created,
                newStaleAfter, resolvedAt, options, thread, autonomy, reaskedAt);
    }

    public ClarificationRecord withResolvedAt(Instant at) {
        return new ClarificationRecord(id, from, to, topic, blocking, status, round, maxRounds, created,
                staleAfter, at, options, thread, autonomy, reaskedAt);
    }

    public ClarificationRecord withStaleAfter(Instant at) {
        return new ClarificationRecord(id, from, to, topic, blocking, status, round, maxRounds, created,
                at, resolvedAt, options, thread, autonomy, reaskedAt);
    }

    /** Marked stale and asked again at {@code at}: the second SLA period runs from then. */
    public ClarificationRecord reasked(Instant at) {
        return new ClarificationRecord(id, from, to, topic, blocking, Status.STALE, round, maxRounds, created,
                staleAfter, resolvedAt, options, thread, autonomy, at);
    }

    /**
     * When a {@code stale} record is escalated: a full SLA period after the monitor asked again,
     * however late that pass ran ({@code staleAfter + SLA} when the moment is not on record, as in
     * a ledger written by hand).
     */
    @JsonIgnore
    public Instant escalatesAt() {
        return (reaskedAt != null ? reaskedAt : staleAfter).plus(sla());
    }
}
