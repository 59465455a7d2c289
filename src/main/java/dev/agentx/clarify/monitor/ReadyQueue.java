package dev.agentx.clarify.monitor;

import dev.agentx.clarify.protocol.ClarificationRecord;
import dev.agentx.clarify.protocol.Ledger;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * {@code agentx ready}: the open work. In Local Mode the issues are those with a clarification
 * ledger plus those listed in {@code .agentx/issues/}. Finished issues are left out unless all
 * are asked for: a listed issue whose state is {@code closed} or status {@code Done}, and an issue
 * known only by its ledger whose clarifications are all closed (nothing says work is left on it). An issue with an active (not resolved, not abandoned) blocking clarification is marked
 * {@code BLOCKED: Clarification pending} and listed after the ready ones; each group by number.
 */
public final class ReadyQueue {
    public static final String BLOCKED = "BLOCKED: Clarification pending";

    private ReadyQueue() {
    }

    /** An issue described in {@code .agentx/issues/N.json} (AgentX's local issue format). */
    public record Issue(int number, String title, String state, String status, List<String> labels) {
        public Issue {
            labels = labels == null ? List.of() : List.copyOf(labels);
        }

        public boolean closed() {
            return "closed".equalsIgnoreCase(state);
        }

        /** Closed, or its work is done (AgentX's status {@code Done}): nothing is ready to pick up. */
        public boolean finished() {
            return closed() || "done".equalsIgnoreCase(status == null ? null : status.strip());
        }
    }

    /**
     * @param issue what is known of the issue (a listed issue, or one known only by its ledger)
     * @param blockedBy its active blocking clarifications; empty: ready
     */
    public record Item(Issue issue, List<ClarificationRecord> blockedBy) {
        public Item {
            blockedBy = List.copyOf(blockedBy);
        }

        public boolean blocked() {
            return !blockedBy.isEmpty();
        }
    }

    /** The open work; with {@code all}, finished issues too. */
    public static List<Item> build(Collection<Integer> ledgerIssues, List<Issue> listed, List<Ledger> activeLedgers,
                                   boolean all) {
        Map<Integer, Issue> issues = new TreeMap<>();
        for (int n : new TreeSet<>(ledgerIssues)) {
            issues.put(n, new Issue(n, null, null, null, List.of()));
        }
        for (Issue i : listed) {
            issues.put(i.number(), i);
        }
        Map<Integer, List<ClarificationRecord>> blocking = new TreeMap<>();
        Set<Integer> active = new HashSet<>();
        for (Ledger l : activeLedgers) {
            if (!l.active().isEmpty()) {
                active.add(l.issueNumber());
            }
            List<ClarificationRecord> b = l.active().stream().filter(ClarificationRecord::blocking).toList();
            if (!b.isEmpty()) {
                blocking.put(l.issueNumber(), b);
            }
        }
        List<Item> out = new ArrayList<>();
        Set<Integer> listedNumbers = new HashSet<>();
        listed.forEach(i -> listedNumbers.add(i.number()));
        for (Issue i : issues.values()) {
            boolean finished = i.finished() || !listedNumbers.contains(i.number()) && !active.contains(i.number());
            if (all || !finished) {
                out.add(new Item(i, blocking.getOrDefault(i.number(), List.of())));
            }
        }
        out.sort(Comparator.comparing(Item::blocked).thenComparingInt(it -> it.issue().number()));
        return out;
    }
}
