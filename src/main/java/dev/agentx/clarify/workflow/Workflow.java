package dev.agentx.clarify.workflow;

import dev.agentx.clarify.protocol.Autonomy;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * A workflow: its steps in order. {@code source} says where it was loaded from, for messages;
 * {@code autonomy} is the {@code [workflow]} table's {@code autonomy}, or null when it sets none.
 */
public record Workflow(String name, String description, String type, List<Step> steps, String source,
                       Autonomy autonomy) {
    public Workflow {
        steps = List.copyOf(steps);
    }

    public Workflow(String name, String description, String type, List<Step> steps, String source) {
        this(name, description, type, steps, source, null);
    }

    /**
     * The requester's step: the first step of that agent that declares clarify fields, else its
     * first step (AgentX's feature workflow has the engineer in two steps).
     */
    public Optional<Step> stepOf(String agent) {
        Optional<Step> declaring = steps.stream()
                .filter(s -> s.agent().equals(agent) && s.declaresClarify()).findFirst();
        return declaring.isPresent() ? declaring : steps.stream().filter(s -> s.agent().equals(agent)).findFirst();
    }

    /** Every agent the workflow names, in step order: step agents and clarify targets. */
    public Set<String> agents() {
        Set<String> out = new LinkedHashSet<>();
        for (Step s : steps) {
            out.add(s.agent());
        }
        for (Step s : steps) {
            out.addAll(s.canClarify());
        }
        return out;
    }
}
