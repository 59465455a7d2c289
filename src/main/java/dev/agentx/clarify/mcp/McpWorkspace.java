package dev.agentx.clarify.mcp;

import dev.agentx.clarify.ledger.ActiveLedgers;
import dev.agentx.clarify.ledger.LedgerStore;
import dev.agentx.clarify.monitor.MonitorReport;
import dev.agentx.clarify.monitor.ReadyQueue;
import dev.agentx.clarify.protocol.ClarificationId;
import dev.agentx.clarify.protocol.ClarificationRecord;
import dev.agentx.clarify.protocol.ClarifyException;
import dev.agentx.clarify.protocol.ErrorCode;
import dev.agentx.clarify.routing.ClarificationEngine;
import dev.agentx.clarify.status.AgentStatusStore;
import java.nio.file.Path;
import java.time.Clock;
import java.util.List;
import java.util.Objects;
import java.util.function.Supplier;

/**
 * What the MCP tools work on: one project's engine and stores as Local Mode wires them, and the
 * agent that calls them. Every tool acts as {@code agent}; the engine checks what that agent may do
 * exactly as it does for the CLI.
 *
 * @param agent           the role as the ledgers name it ({@code product-manager}, not {@code pm}):
 *                        the tools compare it with a record's requester and target
 * @param monitorPass     the monitor pass the CLI runs after a clarify command, run after each
 *                        tool that changes a ledger
 * @param listedIssues    the issues of {@code .agentx/issues/}, for the ready queue
 * @param ledgerDirectory the folder of the ledger files, watched for changes by {@code agentx mcp}
 *                        (null on the server, whose changes are told otherwise)
 * @param commands        how the tools' engine commands are carried out
 */
public record McpWorkspace(String agent, Clock clock, ClarificationEngine engine, LedgerStore ledgers,
                           AgentStatusStore statuses, ActiveLedgers activeLedgers,
                           Supplier<MonitorReport> monitorPass, Supplier<List<ReadyQueue.Issue>> listedIssues,
                           Path ledgerDirectory, ToolCommands commands) {
    /** Local Mode's: the commands run on {@code engine}, then {@code monitorPass}. */
    public McpWorkspace(String agent, Clock clock, ClarificationEngine engine, LedgerStore ledgers,
                        AgentStatusStore statuses, ActiveLedgers activeLedgers, Supplier<MonitorReport> monitorPass,
                        Supplier<List<ReadyQueue.Issue>> listedIssues, Path ledgerDirectory) {
        this(agent, clock, engine, ledgers, statuses, activeLedgers, monitorPass, listedIssues, ledgerDirectory,
                ToolCommands.direct(engine, monitorPass));
    }

    /** The same workspace acting as {@code role} (the server's callers each act as their own). */
    public McpWorkspace as(String role) {
        return new McpWorkspace(role, clock, engine, ledgers, statuses, activeLedgers, monitorPass, listedIssues,
                ledgerDirectory, commands);
    }

    public McpWorkspace {
        Objects.requireNonNull(agent, "agent");
        Objects.requireNonNull(clock, "clock");
        Objects.requireNonNull(engine, "engine");
        Objects.requireNonNull(ledgers, "ledgers");
        Objects.requireNonNull(statuses, "statuses");
        Objects.requireNonNull(activeLedgers, "activeLedgers");
        Objects.requireNonNull(monitorPass, "monitorPass");
        Objects.requireNonNull(listedIssues, "listedIssues");
        Objects.requireNonNull(commands, "commands");
    }

    /** The record {@code id} as its ledger holds it; NOT_FOUND, saying how to list the issue's records, if none. */
    public ClarificationRecord find(ClarificationId id) {
        return ledgers.read(id.issue()).flatMap(l -> l.find(id.toString()))
                .orElseThrow(() -> new ClarifyException(ErrorCode.NOT_FOUND, "Clarification " + id
                        + " not found in ledger. List the issue's records with clarify_show and issue "
                        + id.issue() + "."));
    }
}
