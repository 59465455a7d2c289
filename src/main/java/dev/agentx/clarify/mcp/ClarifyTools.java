package dev.agentx.clarify.mcp;

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
import java.util.concurrent.CompletableFuture;
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

    /** The tools on {@code workspace}, acting as its agent; waits for answers subscribe to {@code waits}. */
    public ClarifyTools(McpWorkspace workspace, Waits waits) {
        this.ws = workspace;
        AnswerWait answers = new AnswerWait(workspace.ledgers(), waits);
        this.commands = new CommandTools(workspace, workspace.agent(), answers);
        this.reads = new ReadTools(workspace, workspace.agent(), answers);
    }

    public List<ToolCatalogue.Tool> tools() {
        return ToolCatalogue.tools();
    }

    public String agent() {
        return ws.agent();
    }

    /** Runs one tool call and waits for its result. Never throws: every failure is a result with {@code error} set. */
    public ToolResult call(String name, Map<String, Object> arguments) {
        return call(name, arguments, new CompletableFuture<>()).join();
    }

    /**
     * Runs one tool call: its command now, on the calling thread; a wait for an answer is a
     * subscription that completes the result later, holding no thread. The wait ends early once
     * {@code ended} completes (the host cancelled the call or closed the session), and the result
     * says what there is then: {@code waited.outcome} {@code ended}. The result never completes
     * exceptionally: every failure is a result with {@code error} set.
     */
    public CompletableFuture<ToolResult> call(String name, Map<String, Object> arguments, CompletableFuture<?> ended) {
        CompletableFuture<ToolResult> result;
        try {
            Optional<ToolCatalogue.Tool> tool = ToolCatalogue.named(name);
            if (tool.isEmpty()) {
                return CompletableFuture.completedFuture(ToolResult.failed(ErrorCode.USAGE, "Unknown tool '" + name
                        + "'; the tools are " + tools().stream().map(ToolCatalogue.Tool::name).toList() + "."));
            }
            ToolArgs a = new ToolArgs(name, arguments, tool.get().arguments());
            result = switch (name) {
                case "clarify_ask" -> commands.ask(a, ended);
                case "clarify_answer" -> CompletableFuture.completedFuture(commands.answer(a));
                case "clarify_followup" -> commands.followUp(a, ended);
                case "clarify_resolve" -> CompletableFuture.completedFuture(commands.resolve(a));
                case "clarify_escalate" -> CompletableFuture.completedFuture(commands.escalate(a));
                case "clarify_wait" -> reads.await(a, ended);
                case "clarify_inbox" -> CompletableFuture.completedFuture(reads.inbox());
                case "clarify_show" -> CompletableFuture.completedFuture(reads.show(a));
                case "clarify_status" -> CompletableFuture.completedFuture(reads.status());
                default -> throw new IllegalStateException("the tool " + name + " is listed but does nothing");
            };
        } catch (RuntimeException e) {
            return CompletableFuture.completedFuture(failure(name, e));
        }
        return result.exceptionally(e -> failure(name, e instanceof java.util.concurrent.CompletionException
                && e.getCause() != null ? e.getCause() : e));
    }

    /** A call's failure as its result, with our error code. */
    private ToolResult failure(String name, Throwable t) {
        if (t instanceof ClarificationEngine.RoundLimitException e) {
            ClarificationRecord r = e.outcome().record();
            String detail = text.entry(r, r.thread().get(r.thread().size() - 1)).stripTrailing();
            return ToolResult.failed(e.code(), e.getMessage(), detail);
        }
        if (t instanceof ClarifyException e) {
            return ToolResult.failed(e.code(), e.getMessage());
        }
        if (t instanceof UncheckedIOException e) {
            LOG.warn("{} failed: {}", name, e.getMessage(), e);
            return ToolResult.failed(ErrorCode.INTERNAL, e.getMessage());
        }
        LOG.warn("{} failed", name, t);
        return ToolResult.failed(ErrorCode.INTERNAL, t + " (please report this with the tool call you made)");
    }
}
