package dev.agentx.clarify.cli;

import dev.agentx.clarify.app.LocalMode;
import dev.agentx.clarify.mcp.McpStdioServer;
import dev.agentx.clarify.mcp.McpWorkspace;
import dev.agentx.clarify.monitor.MonitorReport;
import dev.agentx.clarify.monitor.ReadyQueue;
import dev.agentx.clarify.protocol.ClarifyException;
import dev.agentx.clarify.protocol.ErrorCode;
import dev.agentx.clarify.protocol.Roles;
import java.util.List;
import java.util.Set;
import java.util.function.Supplier;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** {@code agentx mcp}: the clarification tools for an agent host, over MCP on stdio (docs/mcp.md). */
@Command(name = "mcp", mixinStandardHelpOptions = true,
        description = {"Serve the clarification tools to an agent host over MCP (stdio), acting as one agent's role.",
                "The host (VS Code, Claude Code, Cursor, ...) starts it, talks JSON-RPC on stdin and stdout, "
                        + "and ends it by closing stdin; logs go to stderr. It works on this project's "
                        + "ledgers, as every other command does.",
                "Tools: clarify_ask (with wait_seconds it also waits for the answer), clarify_answer, "
                        + "clarify_followup, clarify_resolve, clarify_escalate, clarify_wait, clarify_inbox, "
                        + "clarify_show and clarify_status. Each issue's threads are the resource "
                        + "agentx://issue/N, with change notifications."},
        footer = {"", "Examples:",
                "  agentx mcp --agent engineer",
                "  AGENTX_AGENT=architect agentx --root ~/src/shop mcp",
                "", "A host's configuration (the command and its arguments):",
                "  {\"command\": \"agentx\", \"args\": [\"mcp\", \"--agent\", \"engineer\"]}"})
final class McpCommand implements Runnable {
    /** The variable a host's configuration may set instead of {@code --agent}. */
    static final String AGENT_ENV = "AGENTX_AGENT";

    private final CliContext ctx;

    @Option(names = "--agent", paramLabel = "NAME", description = "The role the tools act as, e.g. engineer "
            + "or pm (default: $" + AGENT_ENV + "); a role of the project's workflows or config.")
    String agent;

    McpCommand(CliContext ctx) {
        this.ctx = ctx;
    }

    /**
     * Starts the logging system on a thread of its own while the role is checked: the SDK's and
     * Reactor's classes make their loggers when they load, on the way to the first answers. The
     * session starts once the thread is done, so that no logger is made while the system starts
     * (SLF4J would hand out stand-ins and warn on stderr when it replays what they logged).
     */
    private static Thread startLogging() {
        Thread t = new Thread(new Runnable() {
            // a class rather than a lambda: a lambda's bootstrap costs every start
            @Override
            public void run() {
                org.slf4j.LoggerFactory.getILoggerFactory();
            }
        }, "prepare-logging");
        t.setDaemon(true);
        t.start();
        return t;
    }

    @Override
    public void run() {
        String who = agent != null ? agent : ctx.env.get(AGENT_ENV);
        if (who == null || who.isBlank()) {
            throw new ClarifyException(ErrorCode.USAGE, "agentx mcp acts as one agent's role: give --agent NAME "
                    + "(or set " + AGENT_ENV + "), e.g. --agent engineer.");
        }
        ctx.noteIfNoProject();
        Thread logging = startLogging();
        LocalMode local = ctx.local();
        // the role as the ledgers write it (pm -> product-manager), once: every tool compares it with
        // a record's requester and target
        String role = Roles.canonical(who);
        Set<String> known = local.knownAgents();
        if (!known.contains(role)) {
            throw new ClarifyException(ErrorCode.USAGE, "Unknown agent '" + who.strip() + "' ("
                    + (agent != null ? "--agent" : AGENT_ENV) + "): agentx mcp acts as a role of this project's "
                    + "workflows or config. Known agents: " + String.join(", ", known) + " (aliases: pm, ux).");
        }
        // one process per agent session: a tool call returns after its ledger write, and the
        // statuses follow from this process's writer thread (docs/protocol.md, Agent statuses)
        local.statuses().writeBehind();
        McpWorkspace workspace = new McpWorkspace(role, ctx.clock, local.engine(), local.ledgers(),
                local.statuses(), local.activeLedgers(), new Supplier<MonitorReport>() {
                    @Override
                    public MonitorReport get() {
                        return local.monitor().run();
                    }
                }, new Supplier<List<ReadyQueue.Issue>>() {
                    @Override
                    public List<ReadyQueue.Issue> get() {
                        return new LocalIssues().read(local.issuesDirectory()).issues();
                    }
                }, local.files().ledgers().directory());
        try {
            logging.join();
            new McpStdioServer(workspace, Main.version()).serve(ctx.stdin, ctx.stdout);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
