package dev.agentx.clarify.monitor;

import java.util.List;
import java.util.stream.Collectors;

/**
 * A cycle of the wait-for graph and how it is broken: the request of the most downstream agent in
 * the cycle ({@code victim}, the first edge of {@code cycle}) is escalated; the others continue.
 */
public record Deadlock(List<WaitEdge> cycle, WaitEdge victim) {
    public Deadlock {
        cycle = List.copyOf(cycle);
    }

    /** The agents in wait-for order, back to the first: {@code engineer -> architect -> engineer}. */
    public String path() {
        return cycle.stream().map(WaitEdge::from).collect(Collectors.joining(" -> ")) + " -> " + cycle.get(0).from();
    }

    public List<String> ids() {
        return cycle.stream().map(WaitEdge::id).toList();
    }

    /** The escalation reason, one line. */
    public String why() {
        List<String> others = cycle.stream().filter(e -> e != victim).map(WaitEdge::id).toList();
        return path() + " (" + String.join(", ", ids()) + "): each waits on the next, so none can go on; "
                + victim.from() + " is the most downstream agent in the cycle, so its request " + victim.id()
                + " goes to a human and " + String.join(", ", others) + (others.size() == 1 ? " continues" : " continue");
    }
}
