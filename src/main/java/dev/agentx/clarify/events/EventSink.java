package dev.agentx.clarify.events;

import java.util.List;

/** Receives the events of each operation, after its ledger write. */
@FunctionalInterface
public interface EventSink {
    EventSink NONE = events -> { };

    void publish(List<ClarificationEvent> events);
}
