package dev.agentx.clarify.status;

import dev.agentx.clarify.protocol.ClarificationRecord;
import dev.agentx.clarify.protocol.Ledger;
import dev.agentx.clarify.protocol.Status;
import dev.agentx.clarify.protocol.ThreadEntry;
import java.time.Instant;
import java.util.Collection;
import java.util.Map;
import java.util.TreeMap;

/**
 * How the ledgers move agent statuses (docs/protocol.md): a blocking request puts the requester
 * in {@code blocked-clarification}; the target is {@code clarifying} while it owes an answer; both
 * go back to {@code working} when answered or closed, unless another of their records on the issue
 * is still open. An escalated blocking record blocks its requester on {@code human} until a human
 * closes it. A non-blocking request leaves its requester's status alone.
 *
 * <p>What an issue makes of an agent is a function of the issue's ledger as it is now, not of the
 * change just made: {@link #reconcile} may run late, more than once, or after a later change of
 * the same issue was already reconciled, and the result is the same. That is what lets the file
 * store write {@code agent-status.json} behind the command (its writer reads the ledger when it
 * gets to it) without a late write ever putting back a status the ledger has moved past.
 */
public final class StatusRules {
    /** What an escalated requester waits on. */
    public static final String HUMAN = "human";

    private StatusRules() {
    }

    /**
     * The statuses with those of {@code agents} brought in line with {@code ledger}: {@link #apply}
     * of what {@link #derive} makes of them.
     */
    public static Map<String, AgentStatus> reconcile(Map<String, AgentStatus> current, Ledger ledger,
                                                     Collection<String> agents) {
        return apply(current, ledger.issueNumber(), derive(ledger, agents));
    }

    /**
     * What the issue's ledger makes of each of {@code agents} that has a record there: while any of
     * its records waits on it (a question it owes, a blocking question it asked, its blocking record
     * escalated) what the newest such record makes of it, clarifying or blocked (on {@code human}
     * while escalated); with none open, working. The status's last activity is that of the agent's
     * newest record on the issue, so the status moves on whenever any of them does.
     */
    public static Map<String, AgentStatus> derive(Ledger ledger, Collection<String> agents) {
        Map<String, AgentStatus> out = new TreeMap<>();
        for (String agent : agents) {
            AgentStatus derived = fromRecords(ledger, agent);
            if (derived != null) {
                out.put(agent, derived);
            }
        }
        return out;
    }

    /**
     * The statuses with what {@code issue} made of some agents ({@link #derive}) put in: each
     * replaces the agent's status unless the status is newer (a hook ran since), and a
     * {@code working} from this issue does not replace a clarification on another issue: an
     * agent's work on another record is not disturbed.
     */
    public static Map<String, AgentStatus> apply(Map<String, AgentStatus> current, int issue,
                                                 Map<String, AgentStatus> derived) {
        Map<String, AgentStatus> out = new TreeMap<>(current);
        for (Map.Entry<String, AgentStatus> d : derived.entrySet()) {
            AgentStatus s = out.get(d.getKey());
            AgentStatus now = d.getValue();
            boolean newer = s == null || s.lastActivity() == null || !s.lastActivity().isAfter(now.lastActivity());
            boolean otherIssue = s != null && (s.issue() == null || s.issue() != issue);
            boolean clarifyingElsewhere = otherIssue && (s.status() == AgentState.CLARIFYING
                    || s.status() == AgentState.BLOCKED_CLARIFICATION);
            if (newer && !(clarifyingElsewhere && now.status() == AgentState.WORKING)) {
                out.put(d.getKey(), now);
            }
        }
        return out;
    }

    /** The status the agent's records in the ledger give it, or null if it has none there. */
    private static AgentStatus fromRecords(Ledger ledger, String agent) {
        Instant at = null;
        ClarificationRecord open = null;
        Instant openAt = null;
        for (ClarificationRecord r : ledger.clarifications()) {
            boolean requester = r.from().equals(agent) && r.blocking();
            if (!requester && !r.to().equals(agent)) {
                continue;
            }
            Instant t = lastActivity(r);
            if (at == null || t.isAfter(at)) {
                at = t;
            }
            boolean waits = r.status().awaitingAnswer() || requester && r.status() == Status.ESCALATED;
            if (waits && (open == null || !t.isBefore(openAt))) { // ledger order breaks ties: the later record
                open = r;
                openAt = t;
            }
        }
        if (at == null) {
            return null;
        }
        int issue = ledger.issueNumber();
        if (open == null) {
            return AgentStatus.working(issue, at);
        }
        if (!open.from().equals(agent)) {
            return AgentStatus.clarifying(issue, at, open.id(), open.from());
        }
        return AgentStatus.blocked(issue, at, open.id(), open.status() == Status.ESCALATED ? HUMAN : open.to());
    }

    /** The record's last activity: its newest entry, its closing, or its creation. */
    static Instant lastActivity(ClarificationRecord r) {
        Instant t = r.created();
        for (ThreadEntry e : r.thread()) {
            if (e.timestamp().isAfter(t)) {
                t = e.timestamp();
            }
        }
        if (r.resolvedAt() != null && r.resolvedAt().isAfter(t)) {
            t = r.resolvedAt();
        }
        return t;
    }
}
