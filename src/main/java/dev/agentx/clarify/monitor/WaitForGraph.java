package dev.agentx.clarify.monitor;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.Deque;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * Deadlock detection (docs/monitor.md): the wait-for graph has an edge requester -> target for
 * every blocking record waiting for its answer, across all issues (agents are the same on every
 * issue). Every cycle, of any length, is found and broken: repeatedly find a cycle, escalate the
 * request of its most downstream agent ({@link UpstreamOrder}), take that edge out, until no cycle
 * is left. Each escalation breaks at least one cycle, so the number of deadlocks reported is the
 * number of escalations needed; a cycle that shared the removed edge is broken with it. The search
 * visits agents and edges in a fixed order, so the same state always gives the same answer.
 */
public final class WaitForGraph {
    private WaitForGraph() {
    }

    public static List<Deadlock> breakCycles(List<WaitEdge> edges, UpstreamOrder order) {
        List<WaitEdge> remaining = new ArrayList<>(edges);
        remaining.sort(Comparator.comparing(WaitEdge::from).thenComparing(WaitEdge::to)
                .thenComparingInt(WaitEdge::issue).thenComparing(e -> e.record().clarificationId()));
        List<Deadlock> out = new ArrayList<>();
        for (Optional<List<WaitEdge>> cycle = findCycle(remaining); cycle.isPresent(); cycle = findCycle(remaining)) {
            List<WaitEdge> c = cycle.get();
            WaitEdge victim = c.stream().max(Comparator.comparing(WaitEdge::from, order.upstreamFirst())).orElseThrow();
            int at = c.indexOf(victim);
            List<WaitEdge> rotated = new ArrayList<>(c.subList(at, c.size()));
            rotated.addAll(c.subList(0, at));
            out.add(new Deadlock(rotated, victim));
            remaining.remove(victim);
        }
        return out;
    }

    /** A cycle as its edges in order, found by depth-first search; empty if the graph has none. */
    static Optional<List<WaitEdge>> findCycle(List<WaitEdge> edges) {
        Map<String, List<WaitEdge>> out = new TreeMap<>();
        for (WaitEdge e : edges) {
            List<WaitEdge> from = out.get(e.from());
            if (from == null) {
                from = new ArrayList<>();
                out.put(e.from(), from);
            }
            from.add(e);
        }
        Set<String> done = new HashSet<>();
        for (String start : new TreeSet<>(out.keySet())) {
            if (done.contains(start)) {
                continue;
            }
            Optional<List<WaitEdge>> found = search(start, out, done);
            if (found.isPresent()) {
                return found;
            }
        }
        return Optional.empty();
    }

    /** Iterative DFS from {@code start}; {@code path} holds the edges to the agent on top of the stack. */
    private static Optional<List<WaitEdge>> search(String start, Map<String, List<WaitEdge>> out, Set<String> done) {
        Map<String, Integer> onPath = new HashMap<>();
        List<WaitEdge> path = new ArrayList<>();
        Deque<String> stack = new ArrayDeque<>();
        Map<String, Integer> next = new HashMap<>();
        stack.push(start);
        onPath.put(start, 0);
        while (!stack.isEmpty()) {
            String agent = stack.peek();
            List<WaitEdge> edges = out.getOrDefault(agent, List.of());
            int i = next.getOrDefault(agent, 0);
            if (i >= edges.size()) {
                stack.pop();
                onPath.remove(agent);
                done.add(agent);
                if (!path.isEmpty()) {
                    path.remove(path.size() - 1);
                }
                continue;
            }
            next.put(agent, i + 1);
            WaitEdge e = edges.get(i);
            Integer back = onPath.get(e.to());
            if (back != null) {
                List<WaitEdge> cycle = new ArrayList<>(path.subList(back, path.size()));
                cycle.add(e);
                return Optional.of(cycle);
            }
            if (!done.contains(e.to())) {
                path.add(e);
                onPath.put(e.to(), path.size());
                stack.push(e.to());
            }
        }
        return Optional.empty();
    }
}
