package dev.agentx.clarify.mcp;

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
import java.util.concurrent.CountDownLatch;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.publisher.Mono;

/**
 * MCP over stdio, one JSON-RPC message per line, for the one session of {@code agentx mcp}.
 *
 * <p>Every message goes out through one synchronized write, whichever thread sends it: a tool's
 * answer (from the thread that ran the tool) and a resource notification (from the ledger
 * watcher) can be sent at the same moment, and neither may be lost. A line that is not JSON-RPC
 * is answered with a parse error and the session goes on.
 */
final class StdioTransport implements McpServerTransportProvider {
    private static final Logger LOG = LoggerFactory.getLogger(StdioTransport.class);

    private final McpJsonMapper json;
    private final InputStream in;
    private final OutputStream out;
    private final CountDownLatch closed = new CountDownLatch(1);
    private volatile McpServerSession session;

    StdioTransport(McpJsonMapper json, InputStream in, OutputStream out) {
        this.json = json;
        this.in = in;
        this.out = out;
    }

    @Override
    public void setSessionFactory(McpServerSession.Factory factory) {
        session = factory.create(new Transport());
        Thread reader = new Thread(this::read, "agentx-mcp-stdin");
        reader.setDaemon(true);
        reader.start();
    }

    /** Waits until the host closes standard input (or it fails). */
    void awaitClosed() throws InterruptedException {
        closed.await();
    }

    private void read() {
        try (BufferedReader lines = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8))) {
            for (String line = lines.readLine(); line != null; line = lines.readLine()) {
                if (line.isBlank()) {
                    continue;
                }
                McpSchema.JSONRPCMessage message;
                try {
                    message = McpSchema.deserializeJsonRpcMessage(json, line);
                } catch (IOException | RuntimeException e) {
                    LOG.warn("mcp: a line that is not JSON-RPC was answered with a parse error: {}", e.getMessage());
                    write(new McpSchema.JSONRPCResponse(McpSchema.JSONRPC_VERSION, null, null,
                            new McpSchema.JSONRPCResponse.JSONRPCError(McpSchema.ErrorCodes.PARSE_ERROR,
                                    "Parse error: not a JSON-RPC message", null)));
                    continue;
                }
                session.handle(message).subscribe(null, e -> LOG.warn("mcp: handling a message failed: {}", e.toString()));
            }
        } catch (IOException e) {
            LOG.debug("mcp: standard input failed: {}", e.toString());
        } finally {
            closed.countDown();
        }
    }

    /** One message, one line, one write: never two at once. */
    private void write(McpSchema.JSONRPCMessage message) {
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
        return s == null ? Mono.error(new McpError("no session yet")) : s.sendNotification(method, params);
    }

    @Override
    public Mono<Void> closeGracefully() {
        McpServerSession s = session;
        return s == null ? Mono.empty() : s.closeGracefully();
    }

    private final class Transport implements McpServerTransport {
        @Override
        public Mono<Void> sendMessage(McpSchema.JSONRPCMessage message) {
            return Mono.fromRunnable(() -> write(message));
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
