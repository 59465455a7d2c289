package dev.agentx.clarify.monitor;

import dev.agentx.clarify.protocol.ClarifyException;
import dev.agentx.clarify.protocol.Roles;
import dev.agentx.clarify.workflow.WorkflowSource;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Upstream priority for breaking deadlocks (docs/protocol.md): product-manager, architect,
 * ux-designer, engineer, reviewer, then the other agents in workflow step order, unknown agents
 * last. Among unknown agents the order is by name, so the choice is always the same.
 */
public final class UpstreamOrder {
    /** Looked up on first use: the CLI must not start the logging system unless something is logged. */
    private static Logger log() {
        return LoggerFactory.getLogger(UpstreamOrder.class);
    }

    private final List<String> known;

    /** @param workflowAgents agents in workflow step order; the built-in roles keep their own rank */
    public UpstreamOrder(Collection<String> workflowAgents) {
        Set<String> all = new LinkedHashSet<>(Roles.PRIORITY);
        all.addAll(workflowAgents);
        this.known = List.copyOf(all);
    }

    public static UpstreamOrder builtIn() {
        return new UpstreamOrder(List.of());
    }

    /**
     * The order from the workflows: the default workflow's agents first (in step order), then those
     * of the other workflows by workflow name. A workflow that does not load is left out (and
     * logged): it cannot be the workflow of a record the monitor looks at.
     */
    public static UpstreamOrder of(String defaultWorkflow, WorkflowSource workflows) {
        List<String> names = new ArrayList<>();
        names.add(defaultWorkflow);
        workflows.names().stream().filter(n -> !n.equals(defaultWorkflow)).sorted().forEach(names::add);
        List<String> agents = new ArrayList<>();
        for (String name : names) {
            try {
                agents.addAll(workflows.workflow(name).agents());
            } catch (ClarifyException e) {
                log().warn("workflow {} left out of the upstream order: {}", name, e.getMessage());
            }
        }
        return new UpstreamOrder(agents);
    }

    /** Every agent this order knows, most upstream first. */
    public List<String> agents() {
        return known;
    }

    /** 0 for the most upstream agent; unknown agents rank after every known one. */
    public int rank(String agent) {
        int i = known.indexOf(agent);
        return i < 0 ? Integer.MAX_VALUE : i;
    }

    /** Most upstream first; unknown agents last, by name. */
    public Comparator<String> upstreamFirst() {
        return Comparator.comparingInt(this::rank).thenComparing(Comparator.naturalOrder());
    }
}
