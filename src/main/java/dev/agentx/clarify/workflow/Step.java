package dev.agentx.clarify.workflow;

import java.util.List;

/**
 * A workflow step: who works in it and whom that agent may clarify with.
 *
 * @param maxRounds {@code clarify_max_rounds}, or null for the default (5 blocking, 6 non-blocking)
 * @param slaMinutes {@code clarify_sla_minutes}, or null for the default 30
 * @param declaresClarify whether the step sets any clarify field
 */
public record Step(String id, String agent, List<String> canClarify, Integer maxRounds, Integer slaMinutes,
                   boolean blockingAllowed, boolean declaresClarify) {
    public Step {
        canClarify = canClarify == null ? List.of() : List.copyOf(canClarify);
    }
}
