package dev.agentx.clarify.github.mcp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.agentx.clarify.github.GitHubMode;
import dev.agentx.clarify.github.support.GitHubRig;
import dev.agentx.clarify.metrics.ServerMetrics;
import dev.agentx.clarify.support.MutableClock;
import java.io.BufferedReader;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The Streamable HTTP transport of /mcp as the specification has it, over plain HTTP: sessions and
 * their owner, DELETE, the protocol version header, resuming a broken answer stream from its last
 * event id while the call waits; and the limits, each refusal counted.
 */
class StreamableHttpTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

    @TempDir
    Path dir;
    private GitHubRig rig;
    private GitHubMode mode;

    private void start(Map<String, String> limits) {
        rig = new GitHubRig(dir.resolve("data"), MutableClock.at(Instant.now().toString()));
        Map<String, String> env = new HashMap<>(System.getenv());
        env.putAll(limits);
        rig.environment(env);
        McpRig.stub(rig);
        McpRig.user(rig, "gho_eng", "eng");
        McpRig.user(rig, "gho_rev", "rev");
        mode = rig.start();
        assertEquals(202, rig.deliver("issue_comment", rig.comment("eng", 1, "/clarify @architect First?")).status());
    }

    @AfterEach
    void stop() {
        if (rig != null) {
            rig.close();
        }
    }

    private HttpRequest.Builder request(String token, String session) {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + mode.port() + "/mcp"))
                .timeout(Duration.ofSeconds(60)).header("Authorization", "Bearer " + token).header("Accept", "application/json, text/event-stream")
                .header("Content-Type", "application/json");
        if (session != null) {
            b.header("Mcp-Session-Id", session);
        }
        return b;
    }

    private HttpResponse<String> post(String token, String session, String body) throws Exception {
        return http.send(request(token, session).POST(HttpRequest.BodyPublishers.ofString(body)).build(),
                HttpResponse.BodyHandlers.ofString());
    }

    private String initialize(String token) throws Exception {
        HttpResponse<String> r = post(token, null, RemoteMcpTest.initialize());
        assertEquals(200, r.statusCode(), r.body());
        assertEquals("2025-11-25", JSON.readTree(r.body()).path("result").path("protocolVersion").asText());
        String session = r.headers().firstValue("Mcp-Session-Id").orElseThrow();
        assertEquals(202, post(token, session, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}")
                .statusCode());
        return session;
    }

    private static String call(int id, String tool, String args) {
        return "{\"jsonrpc\":\"2.0\",\"id\":" + id + ",\"method\":\"tools/call\",\"params\":{\"name\":\"" + tool
                + "\",\"arguments\":" + args + "}}";
    }

    @Test
    void aSessionIsItsCallersAndEndsWithDelete() throws Exception {
        start(Map.of());
        String session = initialize("gho_eng");
        String list = "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\"}";
        HttpResponse<String> listed = post("gho_eng", session, list);
        assertEquals(200, listed.statusCode());
        assertTrue(listed.headers().firstValue("Content-Type").orElse("").startsWith("text/event-stream"));
        assertTrue(listed.body().contains("clarify_ask"), listed.body());
        assertEquals(404, post("gho_rev", session, list).statusCode(), "another caller's session does not exist");
        assertEquals(400, post("gho_eng", null, list).statusCode(), "no session id");
        assertEquals(400, http.send(request("gho_eng", session).header("MCP-Protocol-Version", "1999-01-01")
                .POST(HttpRequest.BodyPublishers.ofString(list)).build(), HttpResponse.BodyHandlers.ofString())
                .statusCode(), "a protocol version it does not speak");
        assertEquals(200, http.send(request("gho_eng", session).DELETE().build(), HttpResponse.BodyHandlers.ofString())
                .statusCode());
        assertEquals(404, post("gho_eng", session, list).statusCode(), "the session is over");
    }

    @Test
    void aBrokenAnswerStreamIsResumedFromItsLastEventIdAndTheWaitGoesOn() throws Exception {
        start(Map.of());
        String session = initialize("gho_eng");
        HttpResponse<InputStream> asking = http.send(request("gho_eng", session).POST(HttpRequest.BodyPublishers
                .ofString(call(3, "clarify_ask", "{\"repository\":\"" + GitHubRig.REPO.fullName() + "\",\"issue\":9,"
                        + "\"to\":\"architect\",\"question\":\"Which region?\",\"wait_seconds\":600}"))).build(),
                HttpResponse.BodyHandlers.ofInputStream());
        assertEquals(200, asking.statusCode());
        String primed;
        try (BufferedReader lines = new BufferedReader(new InputStreamReader(asking.body(), StandardCharsets.UTF_8))) {
            primed = lines.readLine(); // the priming event's id; then the connection breaks
        }
        assertTrue(primed.startsWith("id: "), primed);
        awaitWaiting(1); // the stream opens before the call has asked: answered only once it waits
        rig.deliver("issue_comment", rig.comment("arch", 9, "/clarify answer CLR-9-001 Frankfurt."));
        HttpResponse<String> resumed = http.send(request("gho_eng", session).header("Last-Event-ID",
                primed.substring(4)).GET().build(), HttpResponse.BodyHandlers.ofString());
        assertEquals(200, resumed.statusCode());
        String data = resumed.body().lines().filter(l -> l.startsWith("data: {")).findFirst().orElseThrow();
        JsonNode answer = JSON.readTree(data.substring(6));
        assertEquals(3, answer.path("id").asInt());
        assertTrue(answer.path("result").path("content").get(0).path("text").asText().contains("Frankfurt."),
                answer.toString());
    }

    @Test
    void limitsRefuseWithAClearAnswerAndAreCounted() throws Exception {
        start(Map.of("AGENTX_MCP_RATE_LIMIT", "5", "AGENTX_MCP_MAX_BODY", "2048", "AGENTX_MCP_WAITS_PER_CALLER", "1"));
        // the rig's clock stands still: no request comes back to the bucket, 5 in all
        String session = initialize("gho_eng"); // 2 requests
        HttpResponse<String> big = post("gho_eng", session, call(4, "clarify_show", "{\"note\":\"" + "x".repeat(4000)
                + "\"}"));
        assertEquals(413, big.statusCode(), big.body());
        HttpResponse<InputStream> waiting = http.send(request("gho_eng", session).POST(HttpRequest.BodyPublishers
                .ofString(call(5, "clarify_ask", "{\"repository\":\"" + GitHubRig.REPO.fullName() + "\",\"issue\":11,"
                        + "\"to\":\"architect\",\"question\":\"One?\",\"wait_seconds\":600}"))).build(),
                HttpResponse.BodyHandlers.ofInputStream());
        assertEquals(200, waiting.statusCode());
        awaitWaiting(1); // its answer stream opens before the call takes its place among the waits
        HttpResponse<String> second = post("gho_eng", session, call(6, "clarify_ask", "{\"repository\":\""
                + GitHubRig.REPO.fullName() + "\",\"issue\":12,\"to\":\"architect\",\"question\":\"Two?\","
                + "\"wait_seconds\":600}"));
        assertTrue(second.body().contains("Not waiting: you have 1 calls waiting for answers already"), second.body());
        assertFalse(rig.hasLedger(12), "nothing written for the refused call");
        HttpResponse<String> over = post("gho_eng", session, "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"ping\"}");
        assertEquals(429, over.statusCode(), over.body()); // the 6th request
        assertTrue(over.body().contains("at most 5 a minute"), over.body());
        assertTrue(over.headers().firstValue("Retry-After").isPresent());
        String metrics = rig.metrics();
        for (String reason : new String[] {"rate_limit", "body_size", "waits"}) {
            assertTrue(metrics.contains(ServerMetrics.MCP_REFUSED + "{reason=\"" + reason + "\"} 1.0"), metrics);
        }
        waiting.body().close();
    }

    private void awaitWaiting(int calls) throws InterruptedException {
        long until = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        while (!rig.metrics().contains("\n" + ServerMetrics.MCP_WAITS + " " + calls + ".0")) {
            if (System.nanoTime() > until) {
                throw new AssertionError("never " + calls + " calls waiting: " + rig.metrics());
            }
            Thread.sleep(20);
        }
    }
}
