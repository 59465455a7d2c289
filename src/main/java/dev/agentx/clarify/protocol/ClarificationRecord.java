package dev.agentx.clarify.protocol;

import com.fasterxml.jackson.annotation.JsonIgnore;
import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyOrder;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * One clarification: SPEC-1 section 4.2 record. {@code options} is present only when the
 * question offered choices. Instances are immutable; transitions return new records.
 */
@JsonPropertyOrder({"id", "from", "to", "topic", "blocking", "status", "round", "maxRounds",
        "created", "staleAfter", "resolvedAt", "options", "thread"})
public record ClarificationRecord(
        String id,
        String from,
        String to,
        String topic,
        boolean blocking,
        Status status,
        int round,
        int maxRounds,
        Instant created,
        Instant staleAfter,
        @JsonInclude(JsonInclude.Include.ALWAYS) Instant resolvedAt,
        @JsonInclude(JsonInclude.Include.NON_EMPTY) List<String> options,
        List<ThreadEntry> thread) {

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

    @JsonIgnore
    public Optional<ThreadEntry> lastAnswer() {
        return lastOf(EntryType.ANSWER);
    }

    /** The answer SLA: staleAfter is always the newest question's time plus the SLA. */
    @JsonIgnore
    public Duration sla() {
        Instant asked = lastQuestion().map(ThreadEntry::timestamp).orElse(created);
        Duration d = Duration.between(asked, staleAfter);
        return d.isNegative() || d.isZero() ? Duration.ofMinutes(30) : d;
    }

    /** Number of rounds whose question got an answer. */
    @JsonIgnore
    public int answeredRounds() {
        return (int) thread.stream().filter(e -> e.type() == EntryType.ANSWER).count();
    }

    public ClarificationRecord with(Status newStatus, ThreadEntry entry) {
        List<ThreadEntry> t = new ArrayList<>(thread);
        if (entry != null) {
            t.add(entry);
        }
        return new ClarificationRecord(id, from, to, topic, blocking, newStatus, round, maxRounds, created,
                staleAfter, resolvedAt, options, t);
    }

    public ClarificationRecord withRound(int newRound, Instant newStaleAfter) {
        return new ClarificationRecord(id, from, to, topic, blocking, status, newRound, maxRounds, created,
                newStaleAfter, resolvedAt, options, thread);
    }

    public ClarificationRecord withResolvedAt(Instant at) {
        return new ClarificationRecord(id, from, to, topic, blocking, status, round, maxRounds, created,
                staleAfter, at, options, thread);
    }

    public ClarificationRecord withStaleAfter(Instant at) {
        return new ClarificationRecord(id, from, to, topic, blocking, status, round, maxRounds, created,
                at, resolvedAt, options, thread);
    }
}
