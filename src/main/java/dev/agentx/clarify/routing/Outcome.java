package dev.agentx.clarify.routing;

import dev.agentx.clarify.events.ClarificationEvent;
import dev.agentx.clarify.protocol.ClarificationRecord;
import java.util.ArrayList;
import java.util.List;

/**
 * The result of a command: the record as written, the events it caused and notes for the user.
 * {@code replayed}: the command's request had been carried out before (its key is in the ledger),
 * so nothing was written now; the record is as that earlier run left it, or as it is now. Its
 * events are none, except for a local command carried out by another process that died before
 * its reply ({@link #recovered}): then the events that run caused, which nobody has recorded yet.
 * {@code mirrored}: the agent statuses of {@code events} were mirrored already, by the process that
 * carried the change out for this one (group commit: see LedgerChangeCodec).
 */
public record Outcome(int issue, ClarificationRecord record, List<ClarificationEvent> events, List<String> notes,
                      boolean replayed, boolean mirrored) {
    public Outcome {
        events = List.copyOf(events);
        notes = List.copyOf(notes);
    }

    public Outcome(int issue, ClarificationRecord record, List<ClarificationEvent> events, List<String> notes,
                   boolean replayed) {
        this(issue, record, events, notes, replayed, false);
    }

    public Outcome(int issue, ClarificationRecord record, List<ClarificationEvent> events, List<String> notes) {
        this(issue, record, events, notes, false);
    }

    /** A request found done in the ledger: nothing written, nothing to route or record again. */
    public static Outcome replayed(int issue, ClarificationRecord record) {
        return new Outcome(issue, record, List.of(), List.of(), true);
    }

    /**
     * A local command's change found done in the ledger by its own submitter: a process carried it
     * out for this one (group commit) and died before its reply, so neither recorded its events
     * nor routed its question. {@code events}: those of that run, as the ledger's entry tells them.
     */
    public static Outcome recovered(int issue, ClarificationRecord record, List<ClarificationEvent> events) {
        return new Outcome(issue, record, events, List.of(), true);
    }

    /** This outcome followed by a later one on the same record (e.g. an automatic answer). */
    public Outcome then(Outcome later) {
        List<ClarificationEvent> ev = new ArrayList<>(events);
        ev.addAll(later.events);
        List<String> n = new ArrayList<>(notes);
        n.addAll(later.notes);
        return new Outcome(later.issue, later.record, ev, n, false, mirrored && later.mirrored);
    }
}
