package dev.agentx.clarify.github.mcp;

import dev.agentx.clarify.metrics.ServerMetrics;
import io.javalin.config.RoutesConfig;
import io.javalin.http.Context;
import io.modelcontextprotocol.common.McpTransportContext;
import io.modelcontextprotocol.json.McpJsonMapper;
import io.modelcontextprotocol.json.TypeRef;
import io.modelcontextprotocol.spec.HttpHeaders;
import io.modelcontextprotocol.spec.McpSchema;
import io.modelcontextprotocol.spec.McpStreamableServerSession;
import io.modelcontextprotocol.spec.McpStreamableServerTransportProvider;
import io.modelcontextprotocol.spec.ProtocolVersions;
import java.io.IOException;
import java.io.InputStream;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.publisher.Mono;

/**
 * MCP's Streamable HTTP transport (protocol 2025-03-26 and later) at {@code /mcp}, on the webhook
 * server's Javalin: POST for each client message (a request is answered on a server-sent event
 * stream of its own; a notification or response with 202), GET for the stream of the server's own
 * messages, or with {@code Last-Event-ID} to resume a stream whose connection broke, DELETE to end a
 * session. {@code Mcp-Session-Id} names the session from {@code initialize} on; {@code
 * MCP-Protocol-Version} is checked on every later request.
 *
 * <p>Every request is authenticated first ({@link BearerAuth}: 401 with {@code WWW-Authenticate}
 * before anything else of it is looked at), then rate-limited per caller, then its body is read
 * within the size limit. A session belongs to the caller that opened it. A request's answer stream
 * is written by whichever thread completes it: a call that waits for an answer holds no thread
 * (Jetty's async request, an {@link EventStream} and a subscription). The SDK's servlet transport
 * blocks a thread for each request until it is answered, so it is not used.
 */
final class StreamableHttp implements McpStreamableServerTransportProvider {
    private static final Logger LOG = LoggerFactory.getLogger(StreamableHttp.class);
    static final String PATH = "/mcp";
    /** The transport context's key of the {@link Caller}. */
    static final String CALLER = "agentx.caller";
    /** The transport context's key of the request's end: completes when it should end early. */
    static final String ENDED = "agentx.ended";
    /** A session unused this long, with nothing open, is forgotten. */
    static final Duration SESSION_IDLE = Duration.ofMinutes(30);
    private static final List<String> VERSIONS = List.of(ProtocolVersions.MCP_2025_03_26,
            ProtocolVersions.MCP_2025_06_18, ProtocolVersions.MCP_2025_11_25);

    private final McpJsonMapper json;
    private final BearerAuth auth;
    private final CallerLimits limits;
    private final McpSettings settings;
    private final ServerMetrics metrics;
    private final SecureRandom random = new SecureRandom();
    private final Map<String, HttpSession> sessions = new ConcurrentHashMap<>();
    private volatile McpStreamableServerSession.Factory factory;
    private volatile boolean closing;

    StreamableHttp(McpJsonMapper json, BearerAuth auth, CallerLimits limits, McpSettings settings,
                   ServerMetrics metrics) {
        this.json = json;
        this.auth = auth;
        this.limits = limits;
        this.settings = settings;
        this.metrics = metrics;
    }

    @Override
    public List<String> protocolVersions() {
        return VERSIONS;
    }

    @Override
    public void setSessionFactory(McpStreamableServerSession.Factory factory) {
        this.factory = factory;
    }

    /** Mounts POST, GET and DELETE {@code /mcp}. */
    void routes(RoutesConfig routes) {
        routes.post(PATH, ctx -> authenticated(ctx, this::post));
        routes.get(PATH, ctx -> authenticated(ctx, this::get));
        routes.delete(PATH, ctx -> authenticated(ctx, this::delete));
    }

    int sessions() {
        return sessions.size();
    }

    /** Forgets idle sessions and old streams, and keeps the open connections alive (every few seconds). */
    void tidy() {
        sessions.values().removeIf(s -> {
            if (s.idle(SESSION_IDLE)) {
                s.close();
                return true;
            }
            s.tidy();
            return false;
        });
    }

    @FunctionalInterface
    private interface Handler {
        void handle(Context ctx, Caller caller) throws IOException;
    }

    /** The filter in front of the transport: who calls, and whether within its rate; nothing of the request is read before. */
    private void authenticated(Context ctx, Handler next) throws IOException {
        if (closing) {
            reply(ctx, 503, null, "agentx serve is stopping; try again shortly.");
            return;
        }
        BearerAuth.Outcome who = auth.authenticate(ctx.header("Authorization"));
        if (who instanceof BearerAuth.Refused r) {
            metrics.mcpRefused("unauthenticated");
            if (r.challenge() != null) {
                ctx.header("WWW-Authenticate", r.challenge());
            }
            reply(ctx, r.status(), null, r.message());
            return;
        }
        Caller caller = ((BearerAuth.Known) who).caller();
        Optional<Duration> wait = limits.request(caller);
        if (wait.isPresent()) {
            ctx.header("Retry-After", String.valueOf(Math.max(1, wait.get().toSeconds())));
            reply(ctx, 429, null, "Too many requests: at most " + settings.requestsPerMinute() + " a minute per "
                    + "caller.");
            return;
        }
        metrics.mcpRequest(caller.kind(), ctx.method().name());
        next.handle(ctx, caller);
    }

    private void post(Context ctx, Caller caller) throws IOException {
        String accept = ctx.header("Accept");
        if (accept == null || !accept.contains("application/json") || !accept.contains("text/event-stream")) {
            reply(ctx, 406, null, "Accept must list application/json and text/event-stream.");
            return;
        }
        String type = ctx.header("Content-Type");
        if (type == null || !type.toLowerCase(Locale.ROOT).strip().startsWith("application/json")) {
            reply(ctx, 415, null, "Content-Type must be application/json.");
            return;
        }
        byte[] body = body(ctx);
        if (body == null) {
            return;
        }
        McpSchema.JSONRPCMessage message;
        try {
            if (body.length > 0 && body[0] == '[') {
                reply(ctx, 400, McpSchema.ErrorCodes.INVALID_REQUEST, "One JSON-RPC message per request: batches "
                        + "are not taken.");
                return;
            }
            message = McpSchema.deserializeJsonRpcMessage(json, new String(body, java.nio.charset.StandardCharsets.UTF_8));
        } catch (IOException | RuntimeException e) {
            reply(ctx, 400, McpSchema.ErrorCodes.PARSE_ERROR, "Not a JSON-RPC 2.0 message.");
            return;
        }
        if (message instanceof McpSchema.JSONRPCRequest r && McpSchema.METHOD_INITIALIZE.equals(r.method())) {
            initialize(ctx, caller, r);
            return;
        }
        HttpSession session = session(ctx, caller);
        if (session == null || !versionTaken(ctx)) {
            return;
        }
        McpTransportContext transport = McpTransportContext.create(Map.of(CALLER, caller));
        if (message instanceof McpSchema.JSONRPCNotification n) {
            if ("notifications/cancelled".equals(n.method()) && n.params() instanceof Map<?, ?> p) {
                session.cancel(p.get("requestId"));
            }
            session.sdk().accept(n).contextWrite(c -> c.put(McpTransportContext.KEY, transport))
                    .subscribe(null, e -> LOG.debug("mcp: a notification failed: {}", e.toString()));
            ctx.status(202);
            return;
        }
        if (message instanceof McpSchema.JSONRPCResponse r) {
            session.sdk().accept(r).subscribe(null, e -> LOG.debug("mcp: a response failed: {}", e.toString()));
            ctx.status(202);
            return;
        }
        McpSchema.JSONRPCRequest request = (McpSchema.JSONRPCRequest) message;
        CompletableFuture<Void> end = session.started(request.id());
        EventStream stream = session.newStream();
        CompletableFuture<Void> done = open(ctx, stream, 0);
        McpTransportContext withEnd = McpTransportContext.create(Map.of(CALLER, caller, ENDED, end));
        session.sdk().responseStream(request, stream).contextWrite(c -> c.put(McpTransportContext.KEY, withEnd))
                .doFinally(s -> session.finished(request.id()))
                .subscribe(null, e -> {
                    LOG.warn("mcp: request {} failed: {}", request.method(), e.toString());
                    stream.close();
                });
        ctx.future(() -> done);
    }

    /** {@code initialize}: a new session of this caller (within its sessions), answered as JSON with its id. */
    private void initialize(Context ctx, Caller caller, McpSchema.JSONRPCRequest r) {
        long mine = sessions.values().stream().filter(s -> s.caller().equals(caller)).count();
        if (mine >= settings.sessionsPerCaller()) {
            metrics.mcpRefused("sessions");
            reply(ctx, 429, null, "You hold " + mine + " sessions, the most one caller may: end one with DELETE "
                    + PATH + " first.");
            return;
        }
        McpSchema.InitializeRequest init;
        try {
            init = json.convertValue(r.params(), new TypeRef<McpSchema.InitializeRequest>() {
            });
        } catch (RuntimeException e) {
            reply(ctx, 400, McpSchema.ErrorCodes.INVALID_PARAMS, "initialize needs params with protocolVersion, "
                    + "capabilities and clientInfo.");
            return;
        }
        McpStreamableServerSession.McpStreamableServerSessionInit started = factory.startSession(init);
        String id = HexFormat.of().formatHex(bytes(16));
        HttpSession session = new HttpSession(id, caller, started.session(), json);
        sessions.put(id, session);
        ctx.future(() -> started.initResult().toFuture().handle((result, e) -> {
            if (e != null) {
                sessions.remove(id);
                reply(ctx, 500, McpSchema.ErrorCodes.INTERNAL_ERROR, "initialize failed: " + e.getMessage());
                return null;
            }
            ctx.header(HttpHeaders.MCP_SESSION_ID, id);
            ctx.status(200).contentType("application/json")
                    .result(write(McpSchema.JSONRPCResponse.result(r.id(), result)));
            return null;
        }));
    }

    private byte[] bytes(int n) {
        byte[] b = new byte[n];
        random.nextBytes(b);
        return b;
    }

    /** GET: the stream of the server's own messages, or with Last-Event-ID the rest of a broken stream. */
    private void get(Context ctx, Caller caller) {
        String accept = ctx.header("Accept");
        if (accept == null || !accept.contains("text/event-stream")) {
            reply(ctx, 406, null, "Accept must list text/event-stream.");
            return;
        }
        HttpSession session = session(ctx, caller);
        if (session == null || !versionTaken(ctx)) {
            return;
        }
        String last = ctx.header(HttpHeaders.LAST_EVENT_ID);
        if (last != null) {
            Map.Entry<EventStream, Long> resumed = session.resumed(last.strip());
            if (resumed == null) {
                reply(ctx, 404, null, "No stream of this session to resume from event " + last.strip() + ".");
                return;
            }
            CompletableFuture<Void> done = open(ctx, resumed.getKey(), resumed.getValue());
            ctx.future(() -> done);
            return;
        }
        EventStream listening = session.listening();
        if (listening != null && listening.attached()) {
            reply(ctx, 409, null, "This session's stream is open on another connection already.");
            return;
        }
        EventStream stream = listening != null ? listening : session.newStream();
        if (listening == null) {
            session.listening(stream);
            session.sdk().listeningStream(stream);
        }
        CompletableFuture<Void> done = open(ctx, stream, listening == null ? 0 : Long.MAX_VALUE);
        ctx.future(() -> done);
    }

    private void delete(Context ctx, Caller caller) {
        HttpSession session = session(ctx, caller);
        if (session == null) {
            return;
        }
        sessions.remove(session.id());
        session.close();
        ctx.status(200);
    }

    /** The response as an event stream written to {@code stream}'s events after {@code after}; completes when it ends. */
    private CompletableFuture<Void> open(Context ctx, EventStream stream, long after) {
        ctx.status(200).contentType("text/event-stream").header("Cache-Control", "no-cache")
                .header("X-Accel-Buffering", "no");
        CompletableFuture<Void> done = new CompletableFuture<>();
        EventStream.Connection c;
        try {
            // the servlet's own stream: Javalin's ctx.outputStream() (which may compress) does not pass
            // flush() on, so each event would wait in Jetty's buffer until the response ended
            c = new EventStream.Connection(ctx.res().getOutputStream(), done);
        } catch (IOException | RuntimeException e) {
            done.complete(null);
            return done;
        }
        stream.attach(c, after);
        // the client went away: the stream's events wait for its reconnection (the request goes on)
        done.whenComplete((v, e) -> stream.detach(c));
        return done;
    }

    /** The session {@code Mcp-Session-Id} names, if it is the caller's; else answered (400, 404) and null. */
    private HttpSession session(Context ctx, Caller caller) {
        String id = ctx.header(HttpHeaders.MCP_SESSION_ID);
        if (id == null || id.isBlank()) {
            reply(ctx, 400, McpSchema.ErrorCodes.INVALID_REQUEST, "Mcp-Session-Id is required: initialize first.");
            return null;
        }
        HttpSession s = sessions.get(id.strip());
        if (s == null || !s.caller().equals(caller)) {
            reply(ctx, 404, McpSchema.ErrorCodes.INVALID_REQUEST, "No such session: initialize a new one.");
            return null;
        }
        s.used();
        return s;
    }

    /** Whether MCP-Protocol-Version, when given, is one this server speaks; else answered 400. */
    private boolean versionTaken(Context ctx) {
        String v = ctx.header(HttpHeaders.PROTOCOL_VERSION);
        if (v == null || VERSIONS.contains(v.strip())) {
            return true;
        }
        reply(ctx, 400, McpSchema.ErrorCodes.INVALID_REQUEST, "Unsupported MCP-Protocol-Version " + v.strip()
                + "; this server speaks " + String.join(", ", VERSIONS) + ".");
        return false;
    }

    /** The body within the size limit, or null when it was refused (413, 400). */
    private byte[] body(Context ctx) throws IOException {
        long limit = settings.maxBodyBytes();
        if (ctx.contentLength() > limit) {
            metrics.mcpRefused("body_size");
            reply(ctx, 413, null, "The body is over " + limit + " bytes.");
            return null;
        }
        try (InputStream in = ctx.req().getInputStream()) {
            byte[] b = in.readNBytes((int) limit + 1);
            if (b.length > limit) {
                metrics.mcpRefused("body_size");
                reply(ctx, 413, null, "The body is over " + limit + " bytes.");
                return null;
            }
            return b;
        } catch (IOException e) {
            reply(ctx, 400, null, "The body could not be read.");
            return null;
        }
    }

    /** An error answer: a JSON-RPC error object when {@code code} is given, else plain text. */
    private void reply(Context ctx, int status, Integer code, String message) {
        if (code == null) {
            ctx.status(status).contentType("text/plain; charset=utf-8").result(message + "\n");
            return;
        }
        Map<String, Object> error = new LinkedHashMap<>();
        error.put("code", code);
        error.put("message", message);
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("jsonrpc", McpSchema.JSONRPC_VERSION);
        body.put("id", null);
        body.put("error", error);
        ctx.status(status).contentType("application/json").result(write(body));
    }

    private String write(Object value) {
        try {
            return json.writeValueAsString(value);
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    @Override
    public Mono<Void> notifyClients(String method, Object params) {
        return Mono.fromRunnable(() -> sessions.values().forEach(s -> s.sdk().sendNotification(method, params)
                .subscribe(null, e -> LOG.debug("mcp: a notification to {} failed: {}", s.id(), e.toString()))));
    }

    @Override
    public Mono<Void> notifyClient(String sessionId, String method, Object params) {
        HttpSession s = sessions.get(sessionId);
        return s == null ? Mono.empty() : s.sdk().sendNotification(method, params);
    }

    @Override
    public Mono<Void> closeGracefully() {
        return Mono.fromRunnable(this::close);
    }

    /** Stopping: new requests get 503; every session's waits end and their streams close. */
    @Override
    public void close() {
        closing = true;
        sessions.values().forEach(HttpSession::close);
        sessions.clear();
    }
}
