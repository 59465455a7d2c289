package dev.agentx.clarify.mcp;

import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Who waits for which issue's ledger to change: a waiting call subscribes with what to run on a
 * change, and whatever learns of changes (the ledger folder's watcher, the database's
 * notifications) says which issue changed, or that any may have (notifications were lost). A
 * subscription holds no thread: it is an entry here until the wait ends.
 */
public final class IssueChanges {
    private final Map<Integer, Set<Runnable>> byIssue = new ConcurrentHashMap<>();

    /** Runs {@code changed} after each change of the issue's ledger until the subscription is closed. */
    public Subscription subscribe(int issue, Runnable changed) {
        byIssue.computeIfAbsent(issue, i -> ConcurrentHashMap.newKeySet()).add(changed);
        return () -> byIssue.computeIfPresent(issue, (i, set) -> {
            set.remove(changed);
            return set.isEmpty() ? null : set;
        });
    }

    /** The issue's ledger changed: its subscribers look again. */
    public void changed(int issue) {
        Set<Runnable> waiting = byIssue.get(issue);
        if (waiting != null) {
            waiting.forEach(IssueChanges::tell);
        }
    }

    /** Any ledger may have changed (notifications were lost, or a periodic look): every subscriber looks again. */
    public void all() {
        byIssue.values().forEach(set -> set.forEach(IssueChanges::tell));
    }

    /**
     * A share of the subscribers looks again: those of the issues whose number is {@code part}
     * modulo {@code parts}. A periodic look at every wait, made one share at a time, spreads its
     * reads of the ledgers over the period instead of queueing them all at once in front of the
     * look a real change asks for.
     */
    public void some(int part, int parts) {
        byIssue.forEach((issue, set) -> {
            if (Math.floorMod(issue, parts) == part) {
                set.forEach(IssueChanges::tell);
            }
        });
    }

    /** The subscriptions open now. */
    public int size() {
        return byIssue.values().stream().mapToInt(Set::size).sum();
    }

    private static void tell(Runnable r) {
        try {
            r.run();
        } catch (RuntimeException e) {
            org.slf4j.LoggerFactory.getLogger(IssueChanges.class).warn("a waiting call's look failed: {}", e.toString(), e);
        }
    }

    /** An open subscription; closing it twice is harmless. */
    @FunctionalInterface
    public interface Subscription extends AutoCloseable {
        @Override
        void close();
    }
}
