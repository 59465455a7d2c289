package dev.agentx.clarify.protocol;

import com.fasterxml.jackson.annotation.JsonIgnore;
import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonProperty;
import com.fasterxml.jackson.annotation.JsonPropertyOrder;
import java.time.Instant;
import java.util.Objects;

/**
 * One entry of a clarification thread: a question, an answer, a resolution or an escalation.
 * The optional fields are written only when set, so a plain entry keeps the five fields of docs/protocol.md:
 *
 * @param choice answers: the 0-based index into the record's {@code options} that the answer chose
 * @param proposed answers: true while it is an agent's proposal waiting for a person to accept it
 *                 (autonomy {@code approve}); a proposal does not answer the round
 * @param acceptedBy answers: who accepted the proposal this answer confirms
 * @param openQuestionId questions: the id of the agent's open question this clarification was
 *                       ingested from ({@code agentx clarify ingest}), used to skip it next time
 * @param request the idempotency key of the request that wrote the entry (GitHub Mode: the delivery
 *                and the command's place in it), so that a request carried out again after a crash
 *                finds it done and changes nothing
 */
@JsonPropertyOrder({"round", "from", "type", "body", "timestamp", "choice", "proposed", "acceptedBy",
        "openQuestionId", "request"})
@JsonInclude(JsonInclude.Include.NON_NULL)
public record ThreadEntry(@JsonProperty(required = true) int round, @JsonProperty(required = true) String from,
                          @JsonProperty(required = true) EntryType type, @JsonProperty(required = true) String body,
                          @JsonProperty(required = true) Instant timestamp, Integer choice, Boolean proposed,
                          String acceptedBy, String openQuestionId, String request) {
    public ThreadEntry {
        Objects.requireNonNull(from, "from");
        Objects.requireNonNull(type, "type");
        Objects.requireNonNull(body, "body");
        Objects.requireNonNull(timestamp, "timestamp");
        if (choice != null && choice < 0) {
            throw new IllegalArgumentException("field 'choice' must be a 0-based option index, got " + choice);
        }
        proposed = Boolean.TRUE.equals(proposed) ? Boolean.TRUE : null;
    }

    public ThreadEntry(int round, String from, EntryType type, String body, Instant timestamp) {
        this(round, from, type, body, timestamp, null, null, null, null, null);
    }

    /** An entry written by no keyed request. */
    public ThreadEntry(int round, String from, EntryType type, String body, Instant timestamp, Integer choice,
                       Boolean proposed, String acceptedBy, String openQuestionId) {
        this(round, from, type, body, timestamp, choice, proposed, acceptedBy, openQuestionId, null);
    }

    /** An answer, with the option it chose (or null). */
    public static ThreadEntry answer(int round, String from, String body, Instant at, Integer choice) {
        return new ThreadEntry(round, from, EntryType.ANSWER, body, at, choice, null, null, null);
    }

    /** An agent's answer that waits for a person to accept it. */
    public static ThreadEntry proposal(int round, String from, String body, Instant at, Integer choice) {
        return new ThreadEntry(round, from, EntryType.ANSWER, body, at, choice, Boolean.TRUE, null, null);
    }

    /** A proposal that counts now, accepted by {@code by}. */
    public ThreadEntry acceptedAt(Instant at, String by) {
        return new ThreadEntry(round, from, EntryType.ANSWER, body, at, choice, null, by, null);
    }

    public ThreadEntry withOpenQuestionId(String id) {
        return new ThreadEntry(round, from, type, body, timestamp, choice, proposed, acceptedBy, id, request);
    }

    /** This entry as written by the request {@code key}. */
    public ThreadEntry withRequest(String key) {
        return new ThreadEntry(round, from, type, body, timestamp, choice, proposed, acceptedBy, openQuestionId, key);
    }

    /** An answer that counts (not a pending proposal). */
    @JsonIgnore
    public boolean isAnswer() {
        return type == EntryType.ANSWER && proposed == null;
    }

    @JsonIgnore
    public boolean isProposal() {
        return type == EntryType.ANSWER && proposed != null;
    }
}
