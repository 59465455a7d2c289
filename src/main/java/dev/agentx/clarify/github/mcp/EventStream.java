package dev.agentx.clarify.github.mcp;

import io.modelcontextprotocol.json.McpJsonMapper;
import io.modelcontextprotocol.json.TypeRef;
import io.modelcontextprotocol.spec.McpSchema;
import io.modelcontextprotocol.spec.McpStreamableServerTransport;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.publisher.Mono;

/**
 * One server-sent event stream of a session: the answer stream of one POSTed request, or the
 * stream a GET opened for the server's own messages. Each event has an id, {@code STREAM-N}, unique
 * in the session; the events are kept until the stream ended and its last event was read, so a
 * client whose connection broke reconnects with {@code Last-Event-ID} and is sent what came after
 * (MCP's resumability), then the rest of the stream as it comes. The stream is written to whichever
 * connection holds it now, or to none: a call that waits holds no thread, only this object.
 */
final class EventStream implements McpStreamableServerTransport {
    private static final Logger LOG = LoggerFactory.getLogger(EventStream.class);

    /** An event as sent: its number in the stream and its data. */
    private record Event(long number, String data) {
    }

    /** A connection the stream is written to: its output and what completes its response. */
    record Connection(OutputStream out, CompletableFuture<Void> done) {
    }

    private final String id;
    private final McpJsonMapper json;
    private final List<Event> events = new ArrayList<>();
    private long next = 1;
    private Connection connection;
    private boolean ended;
    /** When the stream ended (System.nanoTime), for how long its events are kept after. */
    private volatile long endedAt;

    EventStream(String id, McpJsonMapper json) {
        this.id = id;
        this.json = json;
    }

    String id() {
        return id;
    }

    /**
     * Writes to {@code c} from now on: first the events after {@code after} (0: all, for a new
     * connection a priming event with no data, so the client has an id to resume from), then each
     * new one. A stream that ended is written out and the connection's response completed.
     */
    synchronized void attach(Connection c, long after) {
        if (connection != null) {
            connection.done().complete(null); // one connection per stream: the newer wins
        }
        connection = c;
        try {
            if (after == 0 && events.isEmpty()) {
                write(c, "id: " + id + "-0\ndata: \n\n");
            }
            for (Event e : events) {
                if (e.number() > after) {
                    write(c, frame(e));
                }
            }
        } catch (IOException e) {
            detach(c);
            return;
        }
        if (ended) {
            c.done().complete(null);
            connection = null;
        }
    }

    /** The connection broke or was replaced: the events wait for the next one. */
    synchronized void detach(Connection c) {
        if (connection == c) {
            connection = null;
        }
        c.done().complete(null);
    }

    /** Whether a connection holds the stream now. */
    synchronized boolean attached() {
        return connection != null;
    }

    synchronized boolean ended() {
        return ended;
    }

    /** Whether it ended more than {@code keptNanos} ago and no connection holds it: its events can go. */
    synchronized boolean over(long keptNanos) {
        return ended && connection == null && System.nanoTime() - endedAt > keptNanos;
    }

    /** A comment line on the open connection, so that neither side's idle timeout ends it; false if it broke. */
    synchronized void keepAlive() {
        if (connection != null) {
            try {
                write(connection, ": keep-alive\n\n");
            } catch (IOException e) {
                detach(connection);
            }
        }
    }

    @Override
    public Mono<Void> sendMessage(McpSchema.JSONRPCMessage message) {
        return sendMessage(message, null);
    }

    @Override
    public Mono<Void> sendMessage(McpSchema.JSONRPCMessage message, String messageId) {
        return Mono.fromRunnable(() -> send(message));
    }

    private synchronized void send(McpSchema.JSONRPCMessage message) {
        String data;
        try {
            data = json.writeValueAsString(message);
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
        Event e = new Event(next++, data);
        events.add(e);
        if (connection != null) {
            try {
                write(connection, frame(e));
            } catch (IOException io) {
                LOG.debug("mcp: stream {} lost its connection; its events wait for a reconnection", id);
                detach(connection);
            }
        }
    }

    private String frame(Event e) {
        return "id: " + id + "-" + e.number() + "\nevent: message\ndata: " + e.data() + "\n\n";
    }

    private static void write(Connection c, String text) throws IOException {
        c.out().write(text.getBytes(StandardCharsets.UTF_8));
        c.out().flush();
    }

    @Override
    public <T> T unmarshalFrom(Object data, TypeRef<T> type) {
        return json.convertValue(data, type);
    }

    @Override
    public Mono<Void> closeGracefully() {
        return Mono.fromRunnable(this::close);
    }

    /** The stream is over: its connection's response completes; its events stay for a late reconnection. */
    @Override
    public synchronized void close() {
        if (!ended) {
            endedAt = System.nanoTime();
        }
        ended = true;
        if (connection != null) {
            connection.done().complete(null);
            connection = null;
        }
    }
}
