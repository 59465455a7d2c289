package dev.agentx.clarify.monitor;

import dev.agentx.clarify.protocol.ClarificationRecord;
import dev.agentx.clarify.protocol.EntryType;
import dev.agentx.clarify.protocol.Ledger;
import dev.agentx.clarify.protocol.Status;
import dev.agentx.clarify.protocol.ThreadEntry;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.function.Supplier;

/**
 * The monitor's rules over a snapshot of the active ledgers, with no I/O: stale, stuck, deadlock,
 * in that order. A record that one rule escalates is left out of the later ones, so a pass never
 * escalates a record twice and never breaks a cycle that an earlier escalation already broke.
 */
public final class Detector {
    private Detector() {
    }

    /**
     * @param ledgers the ledgers holding active records
     * @param order the upstream order; asked for only when there is a cycle to break
     */
    public static Findings detect(List<Ledger> ledgers, Instant now, Supplier<UpstreamOrder> order,
                                  List<String> warnings) {
        List<Findings.Stale> stale = new ArrayList<>();
        List<Findings.Stuck> stuck = new ArrayList<>();
        List<Findings.Flagged> escalated = new ArrayList<>();
        Set<String> escalating = new HashSet<>();
        int active = 0;
        for (Ledger ledger : ledgers) {
            for (ClarificationRecord r : ledger.active()) {
                active++;
                Optional<Findings.Stale> s = stale(ledger.issueNumber(), r, now);
                if (s.isPresent()) {
                    stale.add(s.get());
                }
                if (s.isPresent() && s.get().phase() == Findings.Phase.SECOND_TIMEOUT) {
                    escalating.add(r.id());
                    continue;
                }
                Optional<String> why = StuckRules.reason(ledger, r);
                if (why.isPresent()) {
                    stuck.add(new Findings.Stuck(ledger.issueNumber(), r, why.get()));
                    escalating.add(r.id());
                }
                Optional<Findings.Flagged> f = flagged(ledger.issueNumber(), r);
                if (f.isPresent()) {
                    escalated.add(f.get());
                }
            }
        }
        List<WaitEdge> edges = new ArrayList<>();
        for (Ledger ledger : ledgers) {
            for (ClarificationRecord r : ledger.active()) {
                if (WaitEdge.waits(r) && !escalating.contains(r.id())) {
                    edges.add(new WaitEdge(ledger.issueNumber(), r));
                }
            }
        }
        List<Deadlock> deadlocks = hasCycle(edges) ? WaitForGraph.breakCycles(edges, order.get()) : List.of();
        return new Findings(active, stale, stuck, deadlocks, escalated, warnings);
    }

    private static boolean hasCycle(List<WaitEdge> edges) {
        return edges.size() > 1 && WaitForGraph.findCycle(edges).isPresent();
    }

    /** The record's place on the stale path, if it is on it. */
    static Optional<Findings.Stale> stale(int issue, ClarificationRecord r, Instant now) {
        if (r.status() == Status.PENDING && now.isAfter(r.staleAfter())) {
            // a monitor pass asks again now: the second SLA runs from then
            return Optional.of(new Findings.Stale(issue, r, Findings.Phase.OVERDUE, now.plus(r.sla())));
        }
        if (r.status() == Status.STALE) {
            Instant second = r.escalatesAt();
            Findings.Phase phase = now.isAfter(second) ? Findings.Phase.SECOND_TIMEOUT : Findings.Phase.WAITING;
            return Optional.of(new Findings.Stale(issue, r, phase, second));
        }
        return Optional.empty();
    }

    /** The second timeout, checked again under the ledger's lock before escalating. */
    static boolean secondTimeout(ClarificationRecord r, Instant now) {
        return r.status() == Status.STALE && now.isAfter(r.escalatesAt());
    }

    private static Optional<Findings.Flagged> flagged(int issue, ClarificationRecord r) {
        if (r.status() != Status.ESCALATED) {
            return Optional.empty();
        }
        Optional<ThreadEntry> last = r.lastOf(EntryType.ESCALATION);
        if (last.isEmpty()) {
            return Optional.empty();
        }
        return Cause.of(last.get()).map(c -> new Findings.Flagged(issue, r, c, Cause.why(last.get(), c)));
    }
}
