package dev.agentx.clarify.monitor;

import dev.agentx.clarify.protocol.ClarificationRecord;
import java.time.Instant;
import java.util.List;

/**
 * What one look at the active records found (docs/monitor.md): stale ones,
 * stuck ones, deadlocks, and the records the monitor escalated earlier that still wait for a
 * human. {@code active} says how many records were looked at; {@code warnings} name ledgers that
 * could not be read.
 */
public record Findings(int active, List<Stale> stale, List<Stuck> stuck, List<Deadlock> deadlocks,
                       List<Flagged> escalated, List<String> warnings) {
    public Findings {
        stale = List.copyOf(stale);
        stuck = List.copyOf(stuck);
        deadlocks = List.copyOf(deadlocks);
        escalated = List.copyOf(escalated);
        warnings = List.copyOf(warnings);
    }

    public boolean nothing() {
        return stale.isEmpty() && stuck.isEmpty() && deadlocks.isEmpty() && escalated.isEmpty();
    }

    /** Where a record is in the stale path. */
    public enum Phase {
        /** {@code pending} past {@code staleAfter}: the monitor marks it stale and asks again. */
        OVERDUE,
        /** {@code stale}, asked again (or holding a proposal, not asked again), second SLA still running. */
        WAITING,
        /** {@code stale} past a full SLA after it was asked again: the monitor escalates it. */
        SECOND_TIMEOUT
    }

    /**
     * A record past its SLA.
     *
     * @param escalatesAt when the second timeout escalates it (a full SLA after it went stale)
     */
    public record Stale(int issue, ClarificationRecord record, Phase phase, Instant escalatesAt) {
        /** One line for people: what happened and what comes next. */
        public String why() {
            String sla = CliDuration.format(record.sla());
            if (record.pendingProposal().isPresent()) {
                // autonomy approve: the agent answered, a person has not accepted, and the monitor
                // does not ask the agent again
                String missed = record.to() + "'s proposed answer to round " + record.round()
                        + " was not accepted within the SLA (" + sla + ", due " + record.staleAfter() + ")";
                return switch (phase) {
                    case OVERDUE -> missed;
                    case WAITING -> missed + "; escalates after " + escalatesAt;
                    case SECOND_TIMEOUT -> missed + " nor within another SLA after it went stale (due " + escalatesAt
                            + ")";
                };
            }
            return switch (phase) {
                case OVERDUE -> record.to() + " has not answered round " + record.round() + " within the SLA (" + sla
                        + ", due " + record.staleAfter() + ")";
                case WAITING -> record.to() + " was asked again after missing the SLA (" + sla + ", due "
                        + record.staleAfter() + "); escalates after " + escalatesAt;
                case SECOND_TIMEOUT -> record.to() + " did not answer round " + record.round()
                        + " within the SLA (" + sla + ", due " + record.staleAfter()
                        + ") nor within another SLA after being asked again (due " + escalatesAt + ")";
            };
        }
    }

    /** A stuck record and why. */
    public record Stuck(int issue, ClarificationRecord record, String why) {
    }

    /** A record the monitor escalated, still waiting for a human to resolve or abandon it. */
    public record Flagged(int issue, ClarificationRecord record, Cause cause, String why) {
    }
}
