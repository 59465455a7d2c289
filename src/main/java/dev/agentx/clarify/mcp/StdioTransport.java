package dev.agentx.clarify.mcp;

import io.modelcontextprotocol.common.McpTransportContext;
import io.modelcontextprotocol.json.McpJsonMapper;
import io.modelcontextprotocol.json.TypeRef;
import io.modelcontextprotocol.spec.McpError;
import io.modelcontextprotocol.spec.McpSchema;
import io.modelcontextprotocol.spec.McpServerSession;
import io.modelcontextprotocol.spec.McpServerTransport;
import io.modelcontextprotocol.spec.McpServerTransportProvider;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.publisher.Mono;
import reactor.util.context.Context;

/**
 * MCP over stdio, one JSON-RPC message per line, for the one session of {@code agentx mcp}.
 *
 * <p>Every message goes out through one synchronized write, whichever thread sends it: a tool's
 * answer (from the thread that ran the tool) and a resource notification (from the ledger
 * watcher) can be sent at the same moment, and neither may be lost. A line that is not JSON is
 * answered with a parse error, one that is no JSON-RPC message with an invalid request error,
 * and the session goes on.
 *
 * <p>What the SDK's server session leaves undone on the server side is done here, before a message reaches
 * the session:
 * <ul>
 *   <li>The session serves no request before {@code notifications/initialized}; it would keep it
 *   unanswered for good. A request after {@code initialize} and before that notification (MCP
 *   forbids requests only before the initialize response) is served: the session is told of the
 *   notification first. A request before {@code initialize} gets an error, {@code ping} its
 *   empty result.</li>
 *   <li>A request whose params the SDK cannot take (none for {@code tools/call}) gets invalid
 *   params (-32602) naming what it needs, instead of an internal error.</li>
 *   <li>{@code notifications/cancelled} ends that request's wait ({@link #ended}), and its answer
 *   is not sent, as MCP specifies.</li>
 *   <li>When the input ends, every wait ends at once, and the input is taken as closed only once
 *   each request read before is answered.</li>
 * </ul>
 *
 * <p>The input is read from {@link #start}, before the SDK's server is built: a host's first
 * requests need none of it. Until {@link #open} hands the stream to the SDK's session, the
 * transport answers {@code initialize}, {@code tools/list} and {@code ping} itself ({@link Early}:
 * the same result objects, written by the same mapper, as the SDK's answers), and keeps every
 * other message, in the order read. {@link #open} gives the session those messages in that
 * order, the early {@code initialize} among them: the session learns the host's capabilities and
 * protocol version as if it had answered, and its answer to that request, already given, is not
 * sent again.
 */
final class StdioTransport implements McpServerTransportProvider {
    private static final Logger LOG = LoggerFactory.getLogger(StdioTransport.class);
    private static final String CANCELLED = "notifications/cancelled";
    /** The key of a request's end in its transport context: a future completed once it should end. */
    private static final String ENDED = "agentx.ended";
    /** The field of its params, a string, each of these requests needs (the SDK fails on it missing). */
    private static final Map<String, String> REQUIRED = Map.of(McpSchema.METHOD_INITIALIZE, "protocolVersion",
            McpSchema.METHOD_TOOLS_CALL, "name", McpSchema.METHOD_RESOURCES_READ, "uri");

    private final McpJsonMapper json;
    private final InputStream in;
    private final OutputStream out;
    private final Early early;
    /** Guards the hand-over: {@link #session}, {@link #pending} and {@link #earlyInitialize}. */
    private final Object handover = new Object();
    /** Messages read before {@link #open}, in the order read. */
    private final List<McpSchema.JSONRPCMessage> pending = new ArrayList<>();
    /** Whether the transport answered an initialize itself. */
    private boolean earlyInitialize;
    /** Ids of requests answered before the session had them: its own answers to them are not sent. */
    private final Set<Object> answeredEarly = new HashSet<>();
    /** The session, from the SDK's server, until {@link #open} makes it {@link #session}. */
    private McpServerSession created;
    /** Whether the input ended; guarded by {@link #requests}. */
    private boolean inputEnded;
    private final CountDownLatch closed = new CountDownLatch(1);
    /** Requests given to the session and not answered yet, by id; guarded by itself. */
    private final Map<Object, Request> requests = new HashMap<>();
    private volatile McpServerSession session;
    /**
     * Whether the host sent initialize, and whether the session was told it is initialized: the reader
     * thread's, and the thread of {@link #open} while it holds {@link #handover}.
     */
    private boolean initializing;
    private boolean initialized;

    StdioTransport(McpJsonMapper json, InputStream in, OutputStream out, Early early) {
        this.json = json;
        this.in = in;
        this.out = out;
        this.early = early;
    }

    /**
     * What the server answers to {@code initialize} and {@code tools/list}, known before its SDK
     * server is built: the very objects that server is built with.
     */
    record Early(McpSchema.ServerCapabilities capabilities, McpSchema.Implementation serverInfo, String instructions,
                 List<McpSchema.Tool> tools) {
    }

    /** A request being served: it ends when the host cancels it or the input ends. */
    private static final class Request {
        private volatile boolean cancelled;
        private final CompletableFuture<Void> end = new CompletableFuture<>();
    }

    /** Completes when the request of this transport context should end (never, for a context without one). */
    static CompletableFuture<?> ended(McpTransportContext context) {
        return context != null && context.get(ENDED) instanceof CompletableFuture<?> end ? end
                : new CompletableFuture<>();
    }

    /** Starts reading the input; until {@link #open}, the transport answers what it can itself. */
    void start() {
        Thread reader = new Thread(this::read, "agentx-mcp-stdin");
        reader.setDaemon(true);
        reader.start();
    }

    @Override
    public void setSessionFactory(McpServerSession.Factory factory) {
        McpServerSession s = factory.create(new Transport());
        synchronized (handover) {
            created = s;
        }
    }

    /** Hands the input to the SDK's session, once its server is built: first the messages read until now, in order. */
    void open() {
        synchronized (handover) {
            if (created == null) {
                throw new IllegalStateException("the SDK's server made no session on this transport");
            }
            session = created;
            for (McpSchema.JSONRPCMessage m : pending) {
                dispatch(m);
            }
            pending.clear();
            handover.notifyAll();
        }
    }

    /** Waits until the host closed standard input (or it failed) and every request read is answered. */
    void awaitClosed() throws InterruptedException {
        closed.await();
    }

    private void read() {
        try (BufferedReader lines = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8))) {
            for (String line = lines.readLine(); line != null; line = lines.readLine()) {
                if (!line.isBlank()) {
                    McpSchema.JSONRPCMessage message = parse(line);
                    if (message != null) {
                        accept(message);
                    }
                }
            }
        } catch (IOException e) {
            LOG.debug("mcp: standard input failed: {}", e.toString());
        } finally {
            synchronized (requests) {
                inputEnded = true;
                requests.values().forEach(r -> r.end.complete(null));
            }
            awaitOpen();
            awaitRequests();
            closed.countDown();
        }
    }

    /** A message read: the session's once it is open; before, answered here or kept for it. */
    private void accept(McpSchema.JSONRPCMessage message) {
        synchronized (handover) {
            if (session == null) {
                if (!answerEarly(message)) {
                    pending.add(message);
                }
                return;
            }
        }
        dispatch(message);
    }

    /**
     * Answers a request the SDK's session is not there for yet, as it would: {@code initialize}
     * (the first; kept for the session too), then {@code tools/list}; and {@code ping}. False for
     * any other message, and for one the session would refuse (then it refuses it once open).
     */
    private boolean answerEarly(McpSchema.JSONRPCMessage message) {
        if (!(message instanceof McpSchema.JSONRPCRequest r) || paramsProblem(r) != null) {
            return false;
        }
        Object result;
        if (McpSchema.METHOD_INITIALIZE.equals(r.method()) && !earlyInitialize) {
            McpSchema.InitializeRequest request;
            try {
                request = json.convertValue(r.params(), new TypeRef<McpSchema.InitializeRequest>() {
                });
            } catch (RuntimeException e) {
                return false; // the session answers what it makes of it
            }
            // the SDK's negotiation: the host's version if this transport speaks it, else its latest
            List<String> versions = protocolVersions();
            String version = versions.contains(request.protocolVersion()) ? request.protocolVersion()
                    : versions.get(versions.size() - 1);
            result = new McpSchema.InitializeResult(version, early.capabilities(), early.serverInfo(),
                    early.instructions());
            earlyInitialize = true;
            pending.add(message);
        } else if (McpSchema.METHOD_TOOLS_LIST.equals(r.method()) && earlyInitialize) {
            result = McpSchema.ListToolsResult.builder(early.tools()).build();
        } else if (McpSchema.METHOD_PING.equals(r.method())) {
            result = Map.of();
        } else {
            return false;
        }
        if (McpSchema.METHOD_INITIALIZE.equals(r.method())) {
            synchronized (answeredEarly) {
                answeredEarly.add(r.id());
            }
        }
        write(new McpSchema.JSONRPCResponse(McpSchema.JSONRPC_VERSION, r.id(), result, null));
        return true;
    }

    /** Waits until the session has the input (the messages read before included). */
    private void awaitOpen() {
        synchronized (handover) {
            while (session == null) {
                try {
                    handover.wait();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return;
                }
            }
        }
    }

    /** The line's message, or null when it is none (then answered with the error, id null unless it has one). */
    private McpSchema.JSONRPCMessage parse(String line) {
        Object value;
        try {
            value = json.readValue(line, Object.class);
        } catch (IOException | RuntimeException e) {
            LOG.warn("mcp: a line that is not JSON was answered with a parse error: {}", e.getMessage());
            reject(null, McpSchema.ErrorCodes.PARSE_ERROR, "Parse error: not JSON.");
            return null;
        }
        if (value instanceof Map<?, ?> map) {
            if (!McpSchema.JSONRPC_VERSION.equals(map.get("jsonrpc"))) {
                Object id = map.get("id");
                LOG.warn("mcp: a message without \"jsonrpc\": \"2.0\" was refused");
                reject(id instanceof String || id instanceof Number ? id : null, McpSchema.ErrorCodes.INVALID_REQUEST,
                        "Invalid request: \"jsonrpc\" must be \"2.0\".");
                return null;
            }
            try {
                return McpSchema.deserializeJsonRpcMessage(json, line);
            } catch (IOException | RuntimeException e) {
                Object id = map.get("id");
                LOG.warn("mcp: a JSON line that is no JSON-RPC message was refused: {}", e.getMessage());
                reject(id instanceof String || id instanceof Number ? id : null, McpSchema.ErrorCodes.INVALID_REQUEST,
                        "Invalid request: not a JSON-RPC 2.0 request, notification or response.");
                return null;
            }
        }
        LOG.warn("mcp: a JSON line that is no JSON-RPC message (no object) was refused");
        reject(null, McpSchema.ErrorCodes.INVALID_REQUEST,
                "Invalid request: a message is one JSON object (batches are not taken).");
        return null;
    }

    private void dispatch(McpSchema.JSONRPCMessage message) {
        if (message instanceof McpSchema.JSONRPCNotification n) {
            if (CANCELLED.equals(n.method())) {
                cancel(n.params());
                return;
            }
            if (McpSchema.METHOD_NOTIFICATION_INITIALIZED.equals(n.method())) {
                if (initialized) {
                    return; // the session was told already, when a request came first
                }
                initialized = true;
            }
            handle(message).subscribe(null, e -> LOG.warn("mcp: handling a notification failed: {}", e.toString()));
            return;
        }
        if (!(message instanceof McpSchema.JSONRPCRequest r)) {
            handle(message).subscribe(null, e -> LOG.warn("mcp: handling a response failed: {}", e.toString()));
            return;
        }
        String problem = paramsProblem(r);
        if (problem != null) {
            reject(r.id(), McpSchema.ErrorCodes.INVALID_PARAMS, problem);
            return;
        }
        if (McpSchema.METHOD_INITIALIZE.equals(r.method())) {
            initializing = true;
        } else if (!initialized) {
            if (McpSchema.METHOD_PING.equals(r.method())) {
                write(new McpSchema.JSONRPCResponse(McpSchema.JSONRPC_VERSION, r.id(), Map.of(), null));
                return;
            }
            if (!initializing) {
                reject(r.id(), McpSchema.ErrorCodes.INVALID_REQUEST, "Invalid request: the session is not "
                        + "initialized; send initialize first.");
                return;
            }
            initialized = true;
            handle(new McpSchema.JSONRPCNotification(McpSchema.JSONRPC_VERSION,
                    McpSchema.METHOD_NOTIFICATION_INITIALIZED, null))
                    .subscribe(null, e -> LOG.warn("mcp: initializing the session failed: {}", e.toString()));
        }
        Request request = new Request();
        synchronized (requests) {
            if (inputEnded) {
                request.end.complete(null); // read before the input ended, served after: its wait ends at once
            }
            requests.put(r.id(), request);
        }
        handle(message).contextWrite(Context.of(McpTransportContext.KEY, McpTransportContext.create(Map.of(ENDED,
                        request.end))))
                .doFinally(signal -> answered(r.id(), request))
                .subscribe(null, e -> LOG.warn("mcp: handling a request failed: {}", e.toString()));
    }

    private Mono<Void> handle(McpSchema.JSONRPCMessage message) {
        return session.handle(message);
    }

    /** What the SDK would fail on with an internal error in a request's params, or null. */
    private static String paramsProblem(McpSchema.JSONRPCRequest r) {
        String field = REQUIRED.get(r.method());
        if (field == null) {
            return null;
        }
        String needs = "Invalid params: " + r.method() + " needs params, an object with '" + field + "' (a string)"
                + (McpSchema.METHOD_TOOLS_CALL.equals(r.method()) ? " and optionally 'arguments' (an object)" : "");
        if (!(r.params() instanceof Map<?, ?> params)) {
            return needs + "; got " + (r.params() == null ? "none." : "no object.");
        }
        if (!(params.get(field) instanceof String)) {
            return needs + "; '" + field + "' is " + (params.get(field) == null ? "missing." : "no string.");
        }
        Object arguments = params.get("arguments");
        if (McpSchema.METHOD_TOOLS_CALL.equals(r.method()) && arguments != null && !(arguments instanceof Map)) {
            return needs + "; 'arguments' is no object.";
        }
        return null;
    }

    /** The host cancelled a request (MCP: notifications/cancelled): its wait ends and its answer is not sent. */
    private void cancel(Object params) {
        Object id = params instanceof Map<?, ?> p ? p.get("requestId") : null;
        Request request;
        synchronized (requests) {
            request = id == null ? null : requests.get(id);
            if (request != null) {
                request.cancelled = true;
            }
        }
        if (request == null) {
            LOG.debug("mcp: cancellation of {}, which is not being served, ignored", id);
            return;
        }
        LOG.debug("mcp: request {} cancelled by the host", id);
        request.end.complete(null);
    }

    private void answered(Object id, Request request) {
        synchronized (requests) {
            requests.remove(id, request);
            requests.notifyAll();
        }
    }

    /**
     * Whether the message is the answer to a request the host cancelled, which MCP says not to
     * send, or the session's answer to an initialize answered before it was there.
     */
    private boolean cancelled(McpSchema.JSONRPCMessage message) {
        if (!(message instanceof McpSchema.JSONRPCResponse r) || r.id() == null) {
            return false;
        }
        synchronized (answeredEarly) {
            if (answeredEarly.remove(r.id())) {
                if (r.error() != null) {
                    LOG.warn("mcp: the session refused initialize {}, answered before it started: {}", r.id(),
                            r.error().message());
                }
                return true;
            }
        }
        synchronized (requests) {
            Request request = requests.get(r.id());
            if (request == null || !request.cancelled) {
                return false;
            }
        }
        LOG.info("mcp: request {} was cancelled by the host: its answer is not sent", r.id());
        return true;
    }

    private void awaitRequests() {
        synchronized (requests) {
            while (!requests.isEmpty()) {
                try {
                    requests.wait();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return;
                }
            }
        }
    }

    /** An error answer; {@code id} null where the request's id could not be read (JSON-RPC 2.0 then says null). */
    private void reject(Object id, int code, String message) {
        Map<String, Object> error = new LinkedHashMap<>();
        error.put("code", code);
        error.put("message", message);
        Map<String, Object> response = new LinkedHashMap<>();
        response.put("jsonrpc", McpSchema.JSONRPC_VERSION);
        response.put("id", id);
        response.put("error", error);
        write(response);
    }

    /** One message, one line, one write: never two at once. */
    private void write(Object message) {
        try {
            String text = json.writeValueAsString(message);
            byte[] line = (text.replace("\r", "\\r").replace("\n", "\\n") + "\n").getBytes(StandardCharsets.UTF_8);
            synchronized (out) {
                out.write(line);
                out.flush();
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write to standard output: " + e.getMessage(), e);
        }
    }

    @Override
    public Mono<Void> notifyClients(String method, Object params) {
        McpServerSession s = session;
        return s == null ? Mono.error(McpError.builder(McpSchema.ErrorCodes.INTERNAL_ERROR).message("no session yet").build()) : s.sendNotification(method, params);
    }

    @Override
    public Mono<Void> closeGracefully() {
        McpServerSession s = session;
        return s == null ? Mono.empty() : s.closeGracefully();
    }

    private final class Transport implements McpServerTransport {
        @Override
        public Mono<Void> sendMessage(McpSchema.JSONRPCMessage message) {
            return Mono.fromRunnable(() -> {
                if (!cancelled(message)) {
                    write(message);
                }
            });
        }

        @Override
        public <T> T unmarshalFrom(Object data, TypeRef<T> type) {
            return json.convertValue(data, type);
        }

        @Override
        public Mono<Void> closeGracefully() {
            return Mono.empty();
        }
    }
}
