package dev.agentx.clarify.github.mcp;

import io.modelcontextprotocol.json.McpJsonMapper;
import io.modelcontextprotocol.spec.McpStreamableServerSession;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * One MCP session over Streamable HTTP ({@code Mcp-Session-Id}): the SDK's session, the caller that
 * opened it (only that caller may use it: for anyone else it does not exist), its event streams by
 * id, and the requests it serves, each with what ends it early (the host cancelled it, or the
 * session was deleted).
 */
final class HttpSession {
    /** How long a stream's events are kept after it ended, for a client reconnecting late. */
    static final Duration STREAM_KEPT = Duration.ofMinutes(2);

    private final String id;
    private final Caller caller;
    private final McpStreamableServerSession sdk;
    private final McpJsonMapper json;
    private final Map<String, EventStream> streams = new ConcurrentHashMap<>();
    private final Map<Object, CompletableFuture<Void>> running = new ConcurrentHashMap<>();
    private final AtomicLong streamNumbers = new AtomicLong();
    /** When the session was last used (System.nanoTime). */
    private volatile long lastUsed = System.nanoTime();
    private volatile EventStream listening;

    HttpSession(String id, Caller caller, McpStreamableServerSession sdk, McpJsonMapper json) {
        this.id = id;
        this.caller = caller;
        this.sdk = sdk;
        this.json = json;
    }

    String id() {
        return id;
    }

    Caller caller() {
        return caller;
    }

    McpStreamableServerSession sdk() {
        return sdk;
    }

    void used() {
        lastUsed = System.nanoTime();
    }

    /** A new stream of this session; its id ({@code s1}, {@code s2}...) begins its events' ids. */
    EventStream newStream() {
        EventStream s = new EventStream("s" + streamNumbers.incrementAndGet(), json);
        streams.put(s.id(), s);
        return s;
    }

    /** The stream a {@code Last-Event-ID} ({@code STREAM-N}) names, and N; null if there is none. */
    Map.Entry<EventStream, Long> resumed(String lastEventId) {
        int dash = lastEventId.lastIndexOf('-');
        if (dash < 1) {
            return null;
        }
        EventStream s = streams.get(lastEventId.substring(0, dash));
        try {
            long n = Long.parseLong(lastEventId.substring(dash + 1));
            return s == null || n < 0 ? null : Map.entry(s, n);
        } catch (NumberFormatException e) {
            return null;
        }
    }

    /** The stream a GET holds for the server's own messages, if any holds it now. */
    EventStream listening() {
        return listening;
    }

    void listening(EventStream s) {
        listening = s;
    }

    /** A request being served, by its JSON-RPC id; its end completes when it should end early. */
    CompletableFuture<Void> started(Object requestId) {
        CompletableFuture<Void> end = new CompletableFuture<>();
        running.put(requestId, end);
        return end;
    }

    void finished(Object requestId) {
        running.remove(requestId);
    }

    /** The host cancelled a request ({@code notifications/cancelled}): its wait ends. */
    void cancel(Object requestId) {
        CompletableFuture<Void> end = running.get(requestId);
        if (end != null) {
            end.complete(null);
        }
    }

    /** Whether a request is served or a connection is open: such a session is not idle. */
    boolean busy() {
        return !running.isEmpty() || streams.values().stream().anyMatch(EventStream::attached);
    }

    /** Whether it was not used for {@code idle} and serves nothing. */
    boolean idle(Duration idle) {
        return !busy() && System.nanoTime() - lastUsed > idle.toNanos();
    }

    /** Forgets the streams that ended long enough ago; keeps each stream alive. */
    void tidy() {
        streams.values().removeIf(s -> s.over(STREAM_KEPT.toNanos()));
        streams.values().forEach(EventStream::keepAlive);
    }

    /** The session is over: its requests end, its streams close. */
    void close() {
        running.values().forEach(end -> end.complete(null));
        streams.values().forEach(EventStream::close);
        sdk.close();
    }
}
