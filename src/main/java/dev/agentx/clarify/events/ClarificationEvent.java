package dev.agentx.clarify.events;

import com.fasterxml.jackson.annotation.JsonPropertyOrder;
import dev.agentx.clarify.protocol.ClarificationRecord;
import dev.agentx.clarify.protocol.Status;
import java.time.Instant;

/** One line of {@code events.jsonl}, also published to in-process listeners. */
@JsonPropertyOrder({"event", "clarificationId", "issueNumber", "fromAgent", "toAgent", "topic", "blocking", "round",
        "status", "timestamp"})
public record ClarificationEvent(EventType event, String clarificationId, int issueNumber, String fromAgent,
                                 String toAgent, String topic, boolean blocking, int round, Status status,
                                 Instant timestamp) {
    public static ClarificationEvent of(EventType type, int issue, ClarificationRecord r, Instant at) {
        return of(type, issue, r, r.round(), r.status(), at);
    }

    /** An event of {@code r} in round {@code round} that left it {@code status} (the record may have moved on since). */
    public static ClarificationEvent of(EventType type, int issue, ClarificationRecord r, int round, Status status,
                                        Instant at) {
        return new ClarificationEvent(type, r.id(), issue, r.from(), r.to(), r.topic(), r.blocking(), round, status,
                at);
    }
}
