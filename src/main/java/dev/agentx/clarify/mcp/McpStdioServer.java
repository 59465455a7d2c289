package dev.agentx.clarify.mcp;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.agentx.clarify.ledger.LedgerCodec;
import dev.agentx.clarify.ledger.LedgerWatcher;
import dev.agentx.clarify.protocol.ClarificationRecord;
import dev.agentx.clarify.protocol.ClarifyException;
import dev.agentx.clarify.protocol.Ledger;
import dev.agentx.clarify.render.Ansi;
import dev.agentx.clarify.render.CliRenderer;
import io.modelcontextprotocol.json.McpJsonMapper;
import io.modelcontextprotocol.json.jackson.JacksonMcpJsonMapper;
import io.modelcontextprotocol.server.McpServer;
import io.modelcontextprotocol.server.McpServerFeatures;
import io.modelcontextprotocol.server.McpSyncServer;
import io.modelcontextprotocol.server.McpSyncServerExchange;
import io.modelcontextprotocol.spec.McpError;
import io.modelcontextprotocol.spec.McpSchema;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@code agentx mcp}: the clarification tools and threads served to one agent host over stdio with
 * the MCP Java SDK. Tools are {@link ClarifyTools}; each issue's ledger is a resource
 * {@code agentx://issue/N}. When a ledger changes (from this process or any other), the host gets
 * {@code notifications/resources/updated} for that issue, and {@code list_changed} when an issue
 * gets its first clarification. The session ends when the host closes standard input, once the
 * requests read before are answered.
 */
public final class McpStdioServer {
    private static final Logger LOG = LoggerFactory.getLogger(McpStdioServer.class);
    public static final String URI_PREFIX = "agentx://issue/";
    private static final Pattern URI = Pattern.compile("agentx://issue/([1-9][0-9]{0,8})");
    /** How often a waiting ask looks at its ledger when no change notification arrived. */
    static final Duration RECHECK = Duration.ofSeconds(30);

    private final McpWorkspace workspace;
    private final String version;
    private final CliRenderer text = new CliRenderer(Ansi.OFF);
    private final Set<Integer> listed = ConcurrentHashMap.newKeySet();

    public McpStdioServer(McpWorkspace workspace, String version) {
        this.workspace = workspace;
        this.version = version;
    }

    /** Serves one session on {@code in}/{@code out} until the host closes {@code in} and every request is answered. */
    public void serve(InputStream in, OutputStream out) throws InterruptedException {
        McpJsonMapper json = new JacksonMcpJsonMapper(new ObjectMapper());
        StdioTransport transport = new StdioTransport(json, in, out);
        try (LedgerWatcher watcher = new LedgerWatcher(workspace.ledgerDirectory(), RECHECK)) {
            // a cancelled call, or the end of the input, ends the waits at once
            transport.onEnd(watcher::wake);
            ClarifyTools tools = new ClarifyTools(workspace, watcher);
            List<McpServerFeatures.SyncToolSpecification> specs = new ArrayList<>();
            for (ToolCatalogue.Tool t : tools.tools()) {
                specs.add(new McpServerFeatures.SyncToolSpecification(tool(t), null, (exchange, request) -> result(
                        tools.call(t.name(), request.arguments(), StdioTransport.ended(exchange.transportContext())))));
            }
            List<McpServerFeatures.SyncResourceSpecification> resources = new ArrayList<>();
            for (int issue : workspace.ledgers().issues()) {
                listed.add(issue);
                resources.add(resource(issue));
            }
            McpSyncServer server = McpServer.sync(transport)
                    .serverInfo("agentx-clarify", version)
                    .instructions("Clarifications with the other agents of your pipeline, as '" + workspace.agent()
                            + "'. When a requirement or design is ambiguous, ask the role upstream with clarify_ask "
                            + "instead of guessing; check clarify_inbox for questions to answer.")
                    .capabilities(McpSchema.ServerCapabilities.builder().tools(false).resources(false, true).build())
                    .tools(specs)
                    .resources(resources)
                    .resourceTemplates(new McpServerFeatures.SyncResourceTemplateSpecification(
                            new McpSchema.ResourceTemplate(URI_PREFIX + "{number}", "issue",
                                    "An issue's clarifications",
                                    "Every clarification of an issue with its thread: the ledger as JSON and as text.",
                                    "application/json", null),
                            this::read))
                    .build();
            watcher.onChange(issue -> changed(server, issue));
            // a ledger made between the listing above and now was notified to no one: listed now
            for (int issue : workspace.ledgers().issues()) {
                if (!listed.contains(issue)) {
                    changed(server, issue);
                }
            }
            LOG.info("mcp: serving the clarification tools as {} over stdio", workspace.agent());
            transport.awaitClosed();
            server.closeGracefully();
        }
    }

    /** A ledger changed: the host hears of it (and of a new issue's resource). */
    private void changed(McpSyncServer server, int issue) {
        try {
            list(server, issue);
            server.notifyResourcesUpdated(new McpSchema.ResourcesUpdatedNotification(URI_PREFIX + issue));
        } catch (RuntimeException e) {
            LOG.debug("mcp: change notification for #{} not sent: {}", issue, e.toString());
        }
    }

    /** Lists the issue's resource once; adding it tells the host the list changed. */
    private void list(McpSyncServer server, int issue) {
        if (listed.add(issue)) {
            server.addResource(resource(issue));
        }
    }

    private McpServerFeatures.SyncResourceSpecification resource(int issue) {
        McpSchema.Resource resource = McpSchema.Resource.builder().uri(URI_PREFIX + issue).name("issue-" + issue)
                .title("Issue #" + issue + " clarifications")
                .description("The clarifications of issue #" + issue + " with their threads.")
                .mimeType("application/json").build();
        return new McpServerFeatures.SyncResourceSpecification(resource, this::read);
    }

    private McpSchema.ReadResourceResult read(McpSyncServerExchange exchange, McpSchema.ReadResourceRequest request) {
        Matcher m = URI.matcher(request.uri());
        if (!m.matches()) {
            throw McpError.builder(McpSchema.ErrorCodes.INVALID_PARAMS).message("Not an issue's clarifications: "
                    + request.uri() + "; expected " + URI_PREFIX + "N with N from 1.").build();
        }
        int issue = Integer.parseInt(m.group(1));
        Ledger ledger;
        try {
            ledger = workspace.ledgers().read(issue).orElse(Ledger.empty(issue));
        } catch (ClarifyException e) {
            // a damaged ledger, or one of a newer format: said as the tools say it, not as an internal error
            throw McpError.builder(McpSchema.ErrorCodes.INTERNAL_ERROR).message(e.code() + ": " + e.getMessage())
                    .data(Map.of("code", e.code().name(), "exitCode", e.code().exitCode())).build();
        }
        String jsonText = new String(new LedgerCodec().encode(ledger), StandardCharsets.UTF_8);
        StringBuilder b = new StringBuilder();
        for (ClarificationRecord r : ledger.clarifications()) {
            if (b.length() > 0) {
                b.append('\n');
            }
            b.append(text.record(r));
        }
        if (b.length() == 0) {
            b.append("No clarifications on issue #").append(issue).append(".\n");
        }
        return new McpSchema.ReadResourceResult(List.of(
                new McpSchema.TextResourceContents(request.uri(), "application/json", jsonText),
                new McpSchema.TextResourceContents(request.uri(), "text/plain", b.toString())));
    }

    private static McpSchema.Tool tool(ToolCatalogue.Tool t) {
        @SuppressWarnings("unchecked")
        Map<String, Object> properties = (Map<String, Object>) t.inputSchema().get("properties");
        @SuppressWarnings("unchecked")
        List<String> required = (List<String>) t.inputSchema().get("required");
        return McpSchema.Tool.builder().name(t.name()).title(t.title()).description(t.description())
                .inputSchema(new McpSchema.JsonSchema("object", properties, required, false, null, null))
                .annotations(new McpSchema.ToolAnnotations(t.title(), t.readOnly(), false, t.readOnly(), false, null))
                .build();
    }

    private static McpSchema.CallToolResult result(ToolResult r) {
        return McpSchema.CallToolResult.builder().addTextContent(r.text()).structuredContent(r.data())
                .isError(r.error()).build();
    }
}
