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
import io.modelcontextprotocol.json.jackson2.JacksonMcpJsonMapper;
import io.modelcontextprotocol.server.McpServer;
import io.modelcontextprotocol.server.McpServerFeatures;
import io.modelcontextprotocol.server.McpAsyncServer;
import io.modelcontextprotocol.server.McpAsyncServerExchange;
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
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

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

    /**
     * Serves one session on {@code in}/{@code out} until the host closes {@code in} and every request is answered.
     * The input is read, and {@code initialize} and {@code tools/list} answered, while the tools and
     * the SDK's server are built ({@link StdioTransport}): a host's start waits for neither.
     */
    public void serve(InputStream in, OutputStream out) throws InterruptedException {
        McpJsonMapper json = new JacksonMcpJsonMapper(new ObjectMapper());
        StdioTransport.Early early = early(workspace.agent(), version);
        StdioTransport transport = new StdioTransport(json, in, out, early);
        transport.start();
        IssueChanges changes = new IssueChanges();
        ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "agentx-mcp-waits");
            t.setDaemon(true);
            return t;
        });
        try (LedgerWatcher watcher = new LedgerWatcher(workspace.ledgerDirectory(), RECHECK)) {
            // a waiting call reads its ledger on the watcher's thread (or the timer's): a file, at once
            Waits waits = new Waits(changes, timer, Runnable::run);
            watcher.onChange(changes::changed);
            watcher.onOverflow(changes::all);
            // where notifications do not arrive, waiting calls look again every RECHECK
            timer.scheduleWithFixedDelay(changes::all, RECHECK.toMillis(), RECHECK.toMillis(), TimeUnit.MILLISECONDS);
            ClarifyTools tools = new ClarifyTools(workspace, waits);
            List<McpServerFeatures.AsyncResourceSpecification> resources = new ArrayList<>();
            for (int issue : workspace.ledgers().issues()) {
                listed.add(issue);
                resources.add(resource(issue));
            }
            McpAsyncServer server = McpServer.async(transport)
                    .jsonMapper(json)
                    // ToolArgs checks a call's arguments against the catalogue's schema
                    .jsonSchemaValidator(SdkTools.NO_SCHEMA_CHECK).validateToolInputs(false)
                    .serverInfo(early.serverInfo())
                    .instructions(early.instructions())
                    .capabilities(early.capabilities())
                    .tools(SdkTools.specs(tools.tools(), Schedulers.boundedElastic(), name -> (exchange, args) ->
                            tools.call(name, args, StdioTransport.ended(exchange.transportContext()))))
                    .resources(resources)
                    .resourceTemplates(new McpServerFeatures.AsyncResourceTemplateSpecification(
                            new McpSchema.ResourceTemplate(URI_PREFIX + "{number}", "issue",
                                    "An issue's clarifications",
                                    "Every clarification of an issue with its thread: the ledger as JSON and as text.",
                                    "application/json", null),
                            this::read))
                    .build();
            transport.open();
            watcher.onChange(issue -> changed(server, transport, issue));
            // a ledger made between the listing above and now was notified to no one: listed now
            for (int issue : workspace.ledgers().issues()) {
                if (!listed.contains(issue)) {
                    changed(server, transport, issue);
                }
            }
            LOG.info("mcp: serving the clarification tools as {} over stdio", workspace.agent());
            transport.awaitClosed();
            server.closeGracefully().block();
        } finally {
            timer.shutdownNow();
        }
    }

    /**
     * What the server tells a host in {@code initialize} and lists in {@code tools/list}: plain
     * data, made without the tools' handlers, the engine or the SDK's server.
     */
    static StdioTransport.Early early(String agent, String version) {
        return new StdioTransport.Early(
                // logging too: the SDK's server adds it to whatever it is given, and serves logging/setLevel
                McpSchema.ServerCapabilities.builder().logging().tools(false).resources(false, true).build(),
                new McpSchema.Implementation("agentx-clarify", version),
                "Clarifications with the other agents of your pipeline, as '" + agent + "'. When a requirement or "
                        + "design is ambiguous, ask the role upstream with clarify_ask instead of guessing; check "
                        + "clarify_inbox for questions to answer.",
                ToolCatalogue.tools().stream().map(SdkTools::tool).toList());
    }

    /**
     * A ledger changed: the host hears of it (and of a new issue's resource). The session's one host
     * hears of every issue's change, subscribed or not: sent on the transport, as the SDK's server
     * sends {@code resources/updated} only to sessions that subscribed.
     */
    private void changed(McpAsyncServer server, StdioTransport transport, int issue) {
        try {
            list(server, issue);
            transport.notifyClients(McpSchema.METHOD_NOTIFICATION_RESOURCES_UPDATED,
                    new McpSchema.ResourcesUpdatedNotification(URI_PREFIX + issue)).block();
        } catch (RuntimeException e) {
            LOG.debug("mcp: change notification for #{} not sent: {}", issue, e.toString());
        }
    }

    /** Lists the issue's resource once; adding it tells the host the list changed. */
    private void list(McpAsyncServer server, int issue) {
        if (listed.add(issue)) {
            server.addResource(resource(issue)).block();
        }
    }

    private McpServerFeatures.AsyncResourceSpecification resource(int issue) {
        McpSchema.Resource resource = McpSchema.Resource.builder().uri(URI_PREFIX + issue).name("issue-" + issue)
                .title("Issue #" + issue + " clarifications")
                .description("The clarifications of issue #" + issue + " with their threads.")
                .mimeType("application/json").build();
        return new McpServerFeatures.AsyncResourceSpecification(resource, this::read);
    }

    /** Reads the issue's ledger off the caller's thread (the input's reader). */
    private Mono<McpSchema.ReadResourceResult> read(McpAsyncServerExchange exchange,
                                                    McpSchema.ReadResourceRequest request) {
        return Mono.fromCallable(() -> readNow(request)).subscribeOn(Schedulers.boundedElastic());
    }

    private McpSchema.ReadResourceResult readNow(McpSchema.ReadResourceRequest request) {
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
}
