package dev.agentx.clarify.status;

import dev.agentx.clarify.protocol.ClarificationRecord;
import dev.agentx.clarify.protocol.Ledger;
import dev.agentx.clarify.protocol.Status;
import dev.agentx.clarify.protocol.ThreadEntry;
import java.time.Instant;
import java.util.Collection;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.Function;
import java.util.function.Supplier;

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
 *
 * <p>An agent has one status, but may wait on several issues: blocked on #7, it is asked on #20
 * and shows {@code clarifying} there. When nothing is open for it on #20 any more, it goes back to
 * what its records on the other issues make of it, the newest open one ({@link Elsewhere}: blocked
 * on #7 still), and to {@code working} only when nothing is open for it anywhere.
 */
public final class StatusRules {
    /** What an escalated requester waits on. */
    public static final String HUMAN = "human";

    private StatusRules() {
    }

    /**
     * What an agent's records on issues other than one make of it: its status from the newest of
     * them still open for it (see {@link #derive}), or null when none is.
     */
    @FunctionalInterface
    public interface Elsewhere {
        /** Looks at no other issue: an agent whose records on one issue close goes back to working. */
        Elsewhere NONE = (agent, issue) -> null;

        AgentStatus open(String agent, int issue);
    }

    /**
     * {@link Elsewhere} over the ledgers {@code active} gives (the active ones: a closed ledger
     * holds nothing open), read once, on first use.
     */
    public static Elsewhere elsewhere(Supplier<? extends Collection<Ledger>> active) {
        return new Elsewhere() {
            private Collection<Ledger> ledgers;

            @Override
            public AgentStatus open(String agent, int issue) {
                if (ledgers == null) {
                    ledgers = active.get();
                }
                return newestOpen(ledgers, agent, issue);
            }
        };
    }

    /**
     * {@link Elsewhere} over the ledgers {@code openFor} gives for an agent: at least every ledger
     * with a record that holds it open ({@link ClarificationRecord#holdsOpen}), so that the look-up
     * costs what is open for that agent, not every ledger there is.
     */
    public static Elsewhere elsewhere(Function<String, ? extends Collection<Ledger>> openFor) {
        return (agent, issue) -> newestOpen(openFor.apply(agent), agent, issue);
    }

    private static AgentStatus newestOpen(Collection<Ledger> ledgers, String agent, int issue) {
        AgentStatus newest = null;
        for (Ledger l : ledgers) {
            if (l.issueNumber() == issue) {
                continue;
            }
            AgentStatus s = fromRecords(l, agent);
            if (s != null && s.status() != AgentState.WORKING
                    && (newest == null || s.lastActivity().isAfter(newest.lastActivity()))) {
                newest = s;
            }
        }
        return newest;
    }

    /**
     * The statuses with those of {@code agents} brought in line with {@code ledger}: {@link #apply}
     * of what {@link #derive} makes of them.
     */
    public static Map<String, AgentStatus> reconcile(Map<String, AgentStatus> current, Ledger ledger,
                                                     Collection<String> agents) {
        return reconcile(current, ledger, agents, Elsewhere.NONE);
    }

    /** {@link #reconcile(Map, Ledger, Collection)}, going back to what {@code elsewhere} says is open. */
    public static Map<String, AgentStatus> reconcile(Map<String, AgentStatus> current, Ledger ledger,
                                                     Collection<String> agents, Elsewhere elsewhere) {
        return apply(current, ledger.issueNumber(), derive(ledger, agents), elsewhere);
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

    /** {@link #apply(Map, int, Map, Elsewhere)} looking at no other issue. */
    public static Map<String, AgentStatus> apply(Map<String, AgentStatus> current, int issue,
                                                 Map<String, AgentStatus> derived) {
        return apply(current, issue, derived, Elsewhere.NONE);
    }

    /**
     * The statuses with what {@code issue} made of some agents ({@link #derive}) put in: each
     * replaces the agent's status unless the status is newer (a hook ran since), and a
     * {@code working} from this issue does not replace a clarification on another issue: an
     * agent's work on another record is not disturbed. A {@code working} that would end the
     * agent's clarification on this issue gives way to what {@code elsewhere} finds still open for
     * it on another issue, as that issue's records make it, their {@code lastActivity} included:
     * a status always carries the time of the issue it names, so that the next change of that
     * issue, which is never older, replaces it even when its writer comes after one of another
     * issue whose operation is later (with the other issue's time it would look newer than that
     * change, and stay).
     */
    public static Map<String, AgentStatus> apply(Map<String, AgentStatus> current, int issue,
                                                 Map<String, AgentStatus> derived, Elsewhere elsewhere) {
        Map<String, AgentStatus> out = new TreeMap<>(current);
        for (Map.Entry<String, AgentStatus> d : derived.entrySet()) {
            AgentStatus s = out.get(d.getKey());
            AgentStatus now = d.getValue();
            boolean newer = s == null || s.lastActivity() == null || !s.lastActivity().isAfter(now.lastActivity());
            boolean otherIssue = s != null && (s.issue() == null || s.issue() != issue);
            boolean clarifying = s != null && (s.status() == AgentState.CLARIFYING
                    || s.status() == AgentState.BLOCKED_CLARIFICATION);
            if (!newer || otherIssue && clarifying && now.status() == AgentState.WORKING) {
                continue;
            }
            if (clarifying && now.status() == AgentState.WORKING) {
                AgentStatus open = elsewhere.open(d.getKey(), issue);
                if (open != null) {
                    now = open;
                }
            }
            out.put(d.getKey(), now);
        }
        return out;
    }

    /** The status the agent's records in the ledger give it, or null if it has none there. */
    static AgentStatus fromRecords(Ledger ledger, String agent) {
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
            boolean waits = r.holdsOpen(agent);
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
