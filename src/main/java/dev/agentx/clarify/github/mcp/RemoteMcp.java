package dev.agentx.clarify.github.mcp;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.agentx.clarify.app.LocalMode;
import dev.agentx.clarify.github.RepoRef;
import dev.agentx.clarify.github.RepositoryNames;
import dev.agentx.clarify.github.api.GitHubGateway;
import dev.agentx.clarify.github.handlers.Actors;
import dev.agentx.clarify.github.handlers.IssueContext;
import dev.agentx.clarify.github.handlers.IssueMirror;
import dev.agentx.clarify.github.outbox.Outbox;
import dev.agentx.clarify.mcp.SdkTools;
import dev.agentx.clarify.mcp.ToolCatalogue;
import dev.agentx.clarify.mcp.ToolResult;
import dev.agentx.clarify.mcp.Waits;
import dev.agentx.clarify.metrics.ServerMetrics;
import dev.agentx.clarify.protocol.ErrorCode;
import dev.agentx.clarify.store.UnitOfWork;
import io.javalin.config.RoutesConfig;
import io.modelcontextprotocol.json.McpJsonMapper;
import io.modelcontextprotocol.json.jackson2.JacksonMcpJsonMapper;
import io.modelcontextprotocol.server.McpAsyncServer;
import io.modelcontextprotocol.server.McpServer;
import io.modelcontextprotocol.spec.McpSchema;
import java.nio.file.Path;
import java.time.Clock;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.Optional;
import java.util.function.BiFunction;
import java.util.function.Consumer;
import java.util.function.Function;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

/**
 * {@code /mcp} of {@code agentx serve}: the clarification tools of {@code agentx mcp}, each also
 * taking {@code repository}, served to remote agents over Streamable HTTP ({@link StreamableHttp})
 * with the MCP SDK's async server. Who calls is a bearer token's ({@link BearerAuth}); what one
 * caller may use is {@link CallerLimits}'s; what a call does is {@link RemoteTools}'s. A waiting
 * call is a subscription to its repository's ledger changes ({@link RepositoryChanges}): the
 * threads here are a few for commands, two that read ledgers again when told of a change, and
 * one timer.
 */
public final class RemoteMcp implements AutoCloseable {
    /** Threads that run the tools' commands (each a short ledger write; a lock wait at worst). */
    static final int COMMAND_THREADS = 8;
    /** How often open streams get a keep-alive and idle sessions are forgotten. */
    static final long TIDY_SECONDS = 15;

    private final StreamableHttp transport;
    private final McpAsyncServer server;
    private final RepositoryChanges changes;
    private final ScheduledExecutorService timer;
    private final ExecutorService readers;
    private final ExecutorService commands;
    private final CallerLimits limits;

    /**
     * {@code ledgerFolder}: a repository's ledger folder on the file store (its waits watch it), or
     * null on PostgreSQL (the database's notifications are handed to {@link #changed}), by the
     * repository's state key (its id); {@code listen} starts listening for them, run once, at the
     * first wait. {@code names} finds a named repository's id; {@code lookup} asks GitHub for the id
     * of a name not recorded, as an installation sees the repository (empty: it cannot see it).
     */
    public RemoteMcp(McpSettings settings, GitHubGateway github, Clock clock, ServerMetrics metrics, String version,
                     RepositoryNames names, BiFunction<Long, RepoRef, Optional<RepoRef>> lookup,
                     Function<RepoRef, LocalMode> repositories, Actors actors,
                     IssueMirror mirror, Outbox outbox, UnitOfWork unit, Consumer<IssueContext> afterCommand,
                     Function<String, Path> ledgerFolder, Runnable listen) {
        McpJsonMapper json = new JacksonMcpJsonMapper(new ObjectMapper());
        this.timer = Executors.newSingleThreadScheduledExecutor(named("agentx-mcp-timer"));
        this.readers = Executors.newFixedThreadPool(2, named("agentx-mcp-read"));
        this.commands = Executors.newFixedThreadPool(COMMAND_THREADS, named("agentx-mcp-call"));
        this.changes = new RepositoryChanges(ledgerFolder, listen);
        this.limits = new CallerLimits(settings, clock, metrics);
        BearerAuth auth = new BearerAuth(new UserTokens(github, clock),
                new ActionsTokens(settings.oidcIssuer(), settings.oidcAudience(), clock));
        this.transport = new StreamableHttp(json, auth, limits, settings, metrics);
        RemoteTools tools = new RemoteTools(names, lookup, repositories, github, actors, mirror, outbox, unit, afterCommand,
                changes, timer, readers, limits, metrics, clock);
        Scheduler calls = Schedulers.fromExecutorService(commands, "agentx-mcp-call");
        this.server = McpServer.async(transport)
                .jsonMapper(json)
                .jsonSchemaValidator(SdkTools.NO_SCHEMA_CHECK).validateToolInputs(false)
                .serverInfo("agentx-clarify", version)
                .instructions("Clarifications with the other agents and people of a repository's pipeline, as "
                        + "the role your token has there ([roles] of its agentx.toml). Name the repository "
                        + "(OWNER/NAME) in every call. When a requirement or design is ambiguous, ask the role "
                        + "upstream with clarify_ask instead of guessing; check clarify_inbox for questions to answer.")
                .capabilities(McpSchema.ServerCapabilities.builder().tools(false).build())
                .tools(SdkTools.specs(ToolCatalogue.withRepository(), calls, name -> (exchange, args) -> {
                    Object caller = exchange.transportContext().get(StreamableHttp.CALLER);
                    if (!(caller instanceof Caller c)) {
                        return CompletableFuture.completedFuture(ToolResult.failed(ErrorCode.INTERNAL,
                                "no caller on this session"));
                    }
                    Object ended = exchange.transportContext().get(StreamableHttp.ENDED);
                    return tools.call(c, name, args, ended instanceof CompletableFuture<?> f ? f
                            : new CompletableFuture<>());
                }))
                .build();
        timer.scheduleWithFixedDelay(this::tidy, TIDY_SECONDS, TIDY_SECONDS, TimeUnit.SECONDS);
        // every waiting call looks again once a RECHECK, a share of them each second: a thousand
        // waits read their ledgers at ~33 a second, not all at once in front of a real change's look
        int parts = (int) Waits.RECHECK.toSeconds();
        AtomicInteger tick = new AtomicInteger();
        timer.scheduleWithFixedDelay(() -> changes.some(Math.floorMod(tick.getAndIncrement(), parts), parts), 1, 1,
                TimeUnit.SECONDS);
        metrics.gauge(ServerMetrics.MCP_SESSIONS, "Sessions open at /mcp.", g -> g.call(transport.sessions()));
        metrics.gauge(ServerMetrics.MCP_WAITS, "Calls at /mcp waiting for an answer.", g -> g.call(limits.waiting()));
    }

    private void tidy() {
        try {
            transport.tidy();
        } catch (RuntimeException e) {
            org.slf4j.LoggerFactory.getLogger(RemoteMcp.class).warn("mcp: tidying the sessions failed: {}",
                    e.toString(), e);
        }
    }

    /** Mounts {@code /mcp} (POST, GET, DELETE) on the webhook server. */
    public void routes(RoutesConfig routes) {
        transport.routes(routes);
    }

    /** A ledger changed (a database notification from any replica): its waiting calls look at it. */
    public void changed(String repository, int issue) {
        changes.changed(repository, issue);
    }

    /** Notifications may have been missed (listening began again): every waiting call looks. */
    public void missed() {
        changes.all();
    }

    /** Calls waiting for an answer now (for the bench and tests). */
    public int waiting() {
        return limits.waiting();
    }

    private static java.util.concurrent.ThreadFactory named(String name) {
        AtomicInteger n = new AtomicInteger();
        return r -> {
            Thread t = new Thread(r, name + "-" + n.incrementAndGet());
            t.setDaemon(true);
            return t;
        };
    }

    /** Stopping: the sessions' waits end (their calls answer what there is), then the threads stop. */
    @Override
    public void close() {
        transport.close();
        server.closeGracefully().block(java.time.Duration.ofSeconds(5));
        changes.close();
        commands.shutdown();
        readers.shutdown();
        timer.shutdownNow();
    }
}
