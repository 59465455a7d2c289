package dev.agentx.clarify.monitor;

import java.util.List;

/** What a monitor pass looked at and did. */
public record MonitorReport(int ledgers, int active, List<MonitorAction> actions, List<String> warnings) {
    public MonitorReport {
        actions = List.copyOf(actions);
        warnings = List.copyOf(warnings);
    }
}
