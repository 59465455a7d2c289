package dev.agentx.clarify.routing;

import dev.agentx.clarify.events.ClarificationEvent;
import dev.agentx.clarify.protocol.ClarificationRecord;
import java.util.ArrayList;
import java.util.List;

/** The result of a command: the record as written, the events it caused and notes for the user. */
public record Outcome(int issue, ClarificationRecord record, List<ClarificationEvent> events, List<String> notes) {
    public Outcome {
        events = List.copyOf(events);
        notes = List.copyOf(notes);
    }

    /** This outcome followed by a later one on the same record (e.g. an automatic answer). */
    public Outcome then(Outcome later) {
        List<ClarificationEvent> ev = new ArrayList<>(events);
        ev.addAll(later.events);
        List<String> n = new ArrayList<>(notes);
        n.addAll(later.notes);
        return new Outcome(later.issue, later.record, ev, n);
    }
}
