package dev.agentx.clarify.mcp;

import dev.agentx.clarify.monitor.MonitorReport;
import dev.agentx.clarify.routing.ClarificationEngine;
import dev.agentx.clarify.routing.ClarifyCommand;
import dev.agentx.clarify.routing.Outcome;
import java.util.List;
import java.util.function.Supplier;

/**
 * How the tools that change a thread carry out their engine command. {@code agentx mcp} runs it
 * on the project's engine and then the monitor pass the CLI runs ({@link #direct}); the server runs
 * it as it runs a {@code /clarify} comment's command, its effects on the issue committed with it.
 */
public interface ToolCommands {
    /** Carries out {@code command} (ask, follow-up, resolve, escalate), its question routed to the target. */
    Outcome execute(ClarifyCommand command);

    /** An agent's own answer, counted by the record's autonomy; {@code via} names where it came from. */
    Outcome agentAnswer(ClarifyCommand.Answer answer, String via);

    /** The monitor pass after a change, whose actions become the result's notes (none when it runs later). */
    MonitorReport monitorPass();

    /** The engine's commands as the CLI runs them, followed by {@code monitorPass}. */
    static ToolCommands direct(ClarificationEngine engine, Supplier<MonitorReport> monitorPass) {
        return new ToolCommands() {
            @Override
            public Outcome execute(ClarifyCommand command) {
                return engine.execute(command);
            }

            @Override
            public Outcome agentAnswer(ClarifyCommand.Answer answer, String via) {
                return engine.agentAnswer(answer, via);
            }

            @Override
            public MonitorReport monitorPass() {
                return monitorPass.get();
            }
        };
    }

    /** A pass that did nothing: the server runs its pass after the command, at its own pace. */
    MonitorReport NO_PASS = new MonitorReport(0, List.of(), List.of(), List.of());
}
