package dev.agentx.clarify.events;

import java.util.List;

/**
 * The record of what happened to clarifications: appended after each ledger write, read back by
 * the digest and the dashboard. The ledgers stay the source of truth; the log only records.
 */
public interface EventLog extends EventSink {
    /**
     * The events of one type, oldest first. An entry that is not a valid event is skipped and
     * counted, never fatal.
     */
    Read read(EventType type);

    /** Every event, oldest first (copying a store). */
    Read all();

    /** What {@link #read(EventType)} found: the matching events, oldest first, and the entries it could not read. */
    record Read(List<ClarificationEvent> events, int unreadableLines) {
        public Read {
            events = List.copyOf(events);
        }
    }
}
