package dev.agentx.clarify.monitor;

import dev.agentx.clarify.protocol.ClarificationRecord;

/** One edge of the wait-for graph: the requester of a blocking record waits on its target. */
public record WaitEdge(int issue, ClarificationRecord record) {
    public String from() {
        return record.from();
    }

    public String to() {
        return record.to();
    }

    public String id() {
        return record.id();
    }

    /**
     * Whether a record is an edge: blocking and waiting for its target's answer ({@code pending}
     * or {@code stale}). An answered record no longer waits on the target, and an escalated one
     * waits on a human, not on an agent.
     */
    public static boolean waits(ClarificationRecord r) {
        return r.blocking() && r.status().awaitingAnswer();
    }
}
