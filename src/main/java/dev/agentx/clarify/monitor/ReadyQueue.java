package dev.agentx.clarify.monitor;

import dev.agentx.clarify.protocol.ClarificationRecord;
import dev.agentx.clarify.protocol.Ledger;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * {@code agentx ready}: the open work. In Local Mode the issues are those with a clarification
 * ledger plus those listed in {@code .agentx/issues/}; a listed issue whose state is closed is
 * left out. An issue with an active (not resolved, not abandoned) blocking clarification is marked
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

    public static List<Item> build(Collection<Integer> ledgerIssues, List<Issue> listed, List<Ledger> activeLedgers) {
        Map<Integer, Issue> issues = new TreeMap<>();
        for (int n : new TreeSet<>(ledgerIssues)) {
            issues.put(n, new Issue(n, null, null, null, List.of()));
        }
        for (Issue i : listed) {
            issues.put(i.number(), i);
        }
        Map<Integer, List<ClarificationRecord>> blocking = new TreeMap<>();
        for (Ledger l : activeLedgers) {
            List<ClarificationRecord> b = l.active().stream().filter(ClarificationRecord::blocking).toList();
            if (!b.isEmpty()) {
                blocking.put(l.issueNumber(), b);
            }
        }
        List<Item> out = new ArrayList<>();
        for (Issue i : issues.values()) {
            if (!i.closed()) {
                out.add(new Item(i, blocking.getOrDefault(i.number(), List.of())));
            }
        }
        out.sort(Comparator.comparing(Item::blocked).thenComparingInt(it -> it.issue().number()));
        return out;
    }
}
