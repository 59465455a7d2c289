package dev.agentx.clarify.mcp;

import io.modelcontextprotocol.json.schema.JsonSchemaValidator;
import io.modelcontextprotocol.server.McpAsyncServerExchange;
import io.modelcontextprotocol.server.McpServerFeatures;
import io.modelcontextprotocol.spec.McpSchema;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;

/**
 * The tools of the {@link ToolCatalogue} as the MCP SDK's server takes them, for every transport:
 * a call runs its command on {@code commands} (it may read and write a ledger, or wait for a lock),
 * and its wait for an answer completes the SDK's result when the answer comes: no thread waits.
 */
public final class SdkTools {
    /**
     * No schema library: a call's arguments are {@link ToolArgs}'s to check (with errors that name
     * the argument, taking "42" for 42), and no tool declares an output schema.
     */
    public static final JsonSchemaValidator NO_SCHEMA_CHECK = (schema, content) ->
            JsonSchemaValidator.ValidationResponse.asValid(null);

    /** What a call does: its result, completed when any wait is over. */
    @FunctionalInterface
    public interface Call {
        CompletableFuture<ToolResult> run(McpAsyncServerExchange exchange, Map<String, Object> arguments);
    }

    private SdkTools() {
    }

    /** Each tool with {@code call}; the command part runs on {@code commands}. */
    public static List<McpServerFeatures.AsyncToolSpecification> specs(List<ToolCatalogue.Tool> tools, Scheduler commands,
                                                                       java.util.function.Function<String, Call> call) {
        return tools.stream().map(t -> {
            Call c = call.apply(t.name());
            return McpServerFeatures.AsyncToolSpecification.builder().tool(tool(t))
                    .callHandler((exchange, request) -> Mono.fromCallable(() -> c.run(exchange, request.arguments()))
                            .subscribeOn(commands).flatMap(Mono::fromFuture).map(SdkTools::result))
                    .build();
        }).toList();
    }

    /** A catalogue's tool as MCP lists it. */
    public static McpSchema.Tool tool(ToolCatalogue.Tool t) {
        @SuppressWarnings("unchecked")
        Map<String, Object> properties = (Map<String, Object>) t.inputSchema().get("properties");
        @SuppressWarnings("unchecked")
        List<String> required = (List<String>) t.inputSchema().get("required");
        return McpSchema.Tool.builder().name(t.name()).title(t.title()).description(t.description())
                .inputSchema(new McpSchema.JsonSchema("object", properties, required, false, null, null))
                .annotations(new McpSchema.ToolAnnotations(t.title(), t.readOnly(), false, t.readOnly(), false, null))
                .build();
    }

    /** A tool's result: the text for the model, the same facts as structured content. */
    public static McpSchema.CallToolResult result(ToolResult r) {
        return McpSchema.CallToolResult.builder().addTextContent(r.text()).structuredContent(r.data())
                .isError(r.error()).build();
    }
}
