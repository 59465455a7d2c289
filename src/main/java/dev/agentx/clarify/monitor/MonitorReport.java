package dev.agentx.clarify.monitor;

import dev.agentx.clarify.routing.Outcome;
import java.util.List;

/**
 * What a monitor pass looked at ({@code active} records) and did. {@code outcomes} are the engine's results of its actions
 * (stale marks, recorded answers, escalations), for adapters that publish them, as GitHub Mode
 * posts them to the issue.
 */
public record MonitorReport(int active, List<MonitorAction> actions, List<String> warnings,
                            List<Outcome> outcomes) {
    public MonitorReport {
        actions = List.copyOf(actions);
        warnings = List.copyOf(warnings);
        outcomes = List.copyOf(outcomes);
    }
}
