package dev.agentx.clarify.mcp;

import dev.agentx.clarify.ledger.LedgerWatcher;
import dev.agentx.clarify.protocol.ClarificationRecord;
import dev.agentx.clarify.protocol.ClarifyException;
import dev.agentx.clarify.protocol.ErrorCode;
import dev.agentx.clarify.render.Ansi;
import dev.agentx.clarify.render.CliRenderer;
import dev.agentx.clarify.routing.ClarificationEngine;
import java.io.UncheckedIOException;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.BooleanSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The clarification tools an agent host calls over MCP, for one workspace and the agent it acts
 * as: a call is looked up in the {@link ToolCatalogue}, its arguments checked against the tool's
 * schema ({@link ToolArgs}), and its work done through the engine by {@link CommandTools} (the
 * tools that run the same engine command as the matching {@code agentx clarify} command, then the
 * monitor pass the CLI runs after it) or {@link ReadTools} (the tools that only read), waiting for
 * answers with {@link AnswerWait}. Every call answers with text for the model and the same facts
 * as data, or a failure with our error code. Nothing here knows the MCP SDK: {@link McpStdioServer}
 * adapts it.
 */
public final class ClarifyTools {
    private static final Logger LOG = LoggerFactory.getLogger(ClarifyTools.class);

    private final McpWorkspace ws;
    private final CommandTools commands;
    private final ReadTools reads;
    private final CliRenderer text = new CliRenderer(Ansi.OFF);

    /** The tools on {@code workspace}, acting as its agent; {@code watcher} wakes waits when a ledger changes. */
    public ClarifyTools(McpWorkspace workspace, LedgerWatcher watcher) {
        this.ws = workspace;
        AnswerWait waits = new AnswerWait(workspace.ledgers(), watcher);
        this.commands = new CommandTools(workspace, workspace.agent(), waits);
        this.reads = new ReadTools(workspace, workspace.agent(), waits);
    }

    public List<ToolCatalogue.Tool> tools() {
        return ToolCatalogue.tools();
    }

    public String agent() {
        return ws.agent();
    }

    /** Runs one tool call. Never throws: every failure is a result with {@code error} set. */
    public ToolResult call(String name, Map<String, Object> arguments) {
        return call(name, arguments, () -> false);
    }

    /**
     * As {@link #call(String, Map)}; a wait for an answer ends early once {@code ended} is true (the
     * host cancelled the call or closed the session) and the result says what there is then:
     * {@code waited.outcome} {@code ended}. Whoever sets it calls {@link LedgerWatcher#wake()}.
     */
    public ToolResult call(String name, Map<String, Object> arguments, BooleanSupplier ended) {
        try {
            Optional<ToolCatalogue.Tool> tool = ToolCatalogue.named(name);
            if (tool.isEmpty()) {
                return ToolResult.failed(ErrorCode.USAGE, "Unknown tool '" + name + "'; the tools are "
                        + tools().stream().map(ToolCatalogue.Tool::name).toList() + ".");
            }
            ToolArgs a = new ToolArgs(name, arguments, tool.get().arguments());
            return switch (name) {
                case "clarify_ask" -> commands.ask(a, ended);
                case "clarify_answer" -> commands.answer(a);
                case "clarify_followup" -> commands.followUp(a, ended);
                case "clarify_resolve" -> commands.resolve(a);
                case "clarify_escalate" -> commands.escalate(a);
                case "clarify_wait" -> reads.await(a, ended);
                case "clarify_inbox" -> reads.inbox();
                case "clarify_show" -> reads.show(a);
                case "clarify_status" -> reads.status();
                default -> throw new IllegalStateException("the tool " + name + " is listed but does nothing");
            };
        } catch (ClarificationEngine.RoundLimitException e) {
            ClarificationRecord r = e.outcome().record();
            String detail = text.entry(r, r.thread().get(r.thread().size() - 1)).stripTrailing();
            return ToolResult.failed(e.code(), e.getMessage(), detail);
        } catch (ClarifyException e) {
            return ToolResult.failed(e.code(), e.getMessage());
        } catch (UncheckedIOException e) {
            LOG.warn("{} failed: {}", name, e.getMessage(), e);
            return ToolResult.failed(ErrorCode.INTERNAL, e.getMessage());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return ToolResult.failed(ErrorCode.INTERNAL, "the server is shutting down; the wait was cut short.");
        } catch (RuntimeException e) {
            LOG.warn("{} failed", name, e);
            return ToolResult.failed(ErrorCode.INTERNAL, e + " (please report this with the tool call you made)");
        }
    }
}
