package dev.agentx.clarify.mcp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.modelcontextprotocol.json.McpJsonMapper;
import io.modelcontextprotocol.json.jackson2.JacksonMcpJsonMapper;
import io.modelcontextprotocol.server.McpAsyncServer;
import io.modelcontextprotocol.server.McpServer;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.PipedInputStream;
import java.io.PipedOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import reactor.core.scheduler.Schedulers;

/**
 * The stdio transport answers {@code initialize}, {@code tools/list} and {@code ping} before the
 * SDK's server is built: each answer is the one the SDK's server gives to the same request, the
 * session still learns of the {@code initialize} (and does not answer it a second time), and every
 * other message read meanwhile reaches it afterwards, in order.
 */
class EarlyAnswersTest {
    private static final ObjectMapper JSON = new ObjectMapper();

    /** A stdio session on pipes: lines in, each line written out kept in order. */
    private static final class Session {
        final McpJsonMapper json = new JacksonMcpJsonMapper(new ObjectMapper());
        final StdioTransport.Early early = McpStdioServer.early("engineer", "1.2.3");
        final PipedOutputStream in = new PipedOutputStream();
        final LinkedBlockingQueue<String> out = new LinkedBlockingQueue<>();
        final StdioTransport transport;
        McpAsyncServer server;

        Session() throws IOException {
            OutputStream lines = new OutputStream() {
                private final ByteArrayOutputStream line = new ByteArrayOutputStream();

                @Override
                public synchronized void write(int b) {
                    if (b == '\n') {
                        out.add(line.toString(StandardCharsets.UTF_8));
                        line.reset();
                    } else {
                        line.write(b);
                    }
                }
            };
            transport = new StdioTransport(json, new PipedInputStream(in, 1 << 16), lines, early);
            transport.start();
        }

        /** The SDK's server on the transport, as agentx mcp builds it, and the input handed to it. */
        void open() {
            server = McpServer.async(transport).jsonMapper(json)
                    .jsonSchemaValidator(SdkTools.NO_SCHEMA_CHECK).validateToolInputs(false)
                    .serverInfo(early.serverInfo()).instructions(early.instructions())
                    .capabilities(early.capabilities())
                    .tools(SdkTools.specs(ToolCatalogue.tools(), Schedulers.boundedElastic(), name -> (exchange, args) ->
                            CompletableFuture.completedFuture(ToolResult.ok("called " + name + " by "
                                    + exchange.getClientInfo().name() + " " + exchange.getClientInfo().version(),
                                    Map.of("tool", name)))))
                    .build();
            transport.open();
        }

        void send(String line) throws IOException {
            in.write((line + "\n").getBytes(StandardCharsets.UTF_8));
            in.flush();
        }

        String next() throws InterruptedException {
            String line = out.poll(30, TimeUnit.SECONDS);
            assertNotNull(line, "an answer within 30 s");
            return line;
        }

        void close() throws Exception {
            in.close();
            transport.awaitClosed();
            server.closeGracefully().block();
        }
    }

    private static String initialize(int id, String version) {
        return "{\"jsonrpc\":\"2.0\",\"id\":" + id + ",\"method\":\"initialize\",\"params\":{\"protocolVersion\":\""
                + version + "\",\"capabilities\":{\"roots\":{\"listChanged\":true}},"
                + "\"clientInfo\":{\"name\":\"host\",\"version\":\"9\"}}}";
    }

    private static final String INITIALIZED = "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}";

    @ParameterizedTest
    @ValueSource(strings = {"2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25", "1999-01-01"})
    void initializeToolsListAndPingAreAnsweredAsTheSdkAnswersThem(String version) throws Exception {
        List<String> requests = List.of(initialize(1, version), INITIALIZED,
                "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\"}",
                "{\"jsonrpc\":\"2.0\",\"id\":\"p\",\"method\":\"ping\"}");
        // the SDK's server answers everything
        Session sdk = new Session();
        sdk.open();
        for (String r : requests) {
            sdk.send(r);
        }
        List<String> bySdk = List.of(sdk.next(), sdk.next(), sdk.next());
        sdk.close();

        // the transport answers before the server is built
        Session early = new Session();
        for (String r : requests) {
            early.send(r);
        }
        List<String> byTransport = List.of(early.next(), early.next(), early.next());
        early.open();
        early.close();

        assertEquals(bySdk, byTransport, "the same lines, byte for byte");
        assertTrue(early.out.isEmpty(), "initialize answered once: " + early.out);
        JsonNode init = JSON.readTree(byTransport.get(0)).get("result");
        assertEquals(version.equals("1999-01-01") ? "2025-11-25" : version, init.get("protocolVersion").asText());
        assertEquals(ToolCatalogue.tools().size(), JSON.readTree(byTransport.get(1)).get("result").get("tools").size());
    }

    @Test
    void messagesReadBeforeTheServerIsBuiltReachItInOrderAndTheSessionKnowsTheHost() throws Exception {
        Session s = new Session();
        s.send("{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"tools/list\"}"); // before initialize: refused, in turn
        s.send(initialize(1, "2025-06-18"));
        String init = s.next();
        assertEquals(1, JSON.readTree(init).get("id").asInt(), init);
        s.send(INITIALIZED);
        s.send("{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\",\"params\":{\"name\":\"clarify_inbox\"}}");
        s.send("{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"resources/templates/list\"}");
        assertNull(s.out.poll(200, TimeUnit.MILLISECONDS), "nothing else is answered before the server is there");
        s.open();
        List<JsonNode> answers = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            answers.add(JSON.readTree(s.next()));
        }
        assertEquals(0, answers.get(0).get("id").asInt());
        assertEquals(-32600, answers.get(0).get("error").get("code").asInt(), answers.get(0).toString());
        JsonNode call = answers.stream().filter(a -> a.get("id").asInt() == 3).findFirst().orElseThrow();
        // the session took the early initialize as its own: it knows the host
        assertEquals("called clarify_inbox by host 9", call.get("result").get("content").get(0).get("text").asText());
        assertTrue(answers.stream().anyMatch(a -> a.get("id").asInt() == 4 && a.has("result")), answers.toString());
        s.send("{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"ping\"}");
        assertEquals("{\"jsonrpc\":\"2.0\",\"id\":5,\"result\":{}}", s.next());
        s.close();
        assertTrue(s.out.isEmpty(), "initialize answered once: " + s.out);
    }
}
