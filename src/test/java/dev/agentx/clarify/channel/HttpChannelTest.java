package dev.agentx.clarify.channel;

import static com.github.tomakehurst.wiremock.client.WireMock.aResponse;
import static com.github.tomakehurst.wiremock.client.WireMock.absent;
import static com.github.tomakehurst.wiremock.client.WireMock.equalTo;
import static com.github.tomakehurst.wiremock.client.WireMock.matchingJsonPath;
import static com.github.tomakehurst.wiremock.client.WireMock.okJson;
import static com.github.tomakehurst.wiremock.client.WireMock.post;
import static com.github.tomakehurst.wiremock.client.WireMock.postRequestedFor;
import static com.github.tomakehurst.wiremock.client.WireMock.urlEqualTo;
import static com.github.tomakehurst.wiremock.core.WireMockConfiguration.wireMockConfig;
import static dev.agentx.clarify.channel.CommandChannelTest.failed;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.github.tomakehurst.wiremock.WireMockServer;
import com.github.tomakehurst.wiremock.stubbing.Scenario;
import com.github.tomakehurst.wiremock.verification.LoggedRequest;
import dev.agentx.clarify.config.AgentSettings;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The http channel against WireMock on the loopback address. */
class HttpChannelTest {
    static final QuestionRequest REQUEST = CommandChannelTest.REQUEST;

    WireMockServer server;
    final List<Duration> waits = new ArrayList<>();

    @BeforeEach
    void start() {
        server = new WireMockServer(wireMockConfig().bindAddress("127.0.0.1").dynamicPort());
        server.start();
    }

    @AfterEach
    void stop() {
        server.stop();
    }

    private HttpChannel channel(int timeoutSeconds, int retries, String secretEnv, String tokenEnv, Map<String, String> env) {
        AgentSettings s = new AgentSettings("http", List.of(), timeoutSeconds, "http://127.0.0.1:" + server.port() + "/answer",
                secretEnv, tokenEnv, null, 4096, retries, 3);
        return new HttpChannel("product-manager", s, env, new RequestJson(RequestContext.local(Path.of("/work/demo"))),
                waits::add);
    }

    private static String hmacHex(String secret, byte[] body) throws Exception {
        Mac mac = Mac.getInstance("HmacSHA256");
        mac.init(new SecretKeySpec(secret.getBytes(StandardCharsets.UTF_8), "HmacSHA256"));
        return HexFormat.of().formatHex(mac.doFinal(body));
    }

    @Test
    void signedRequestWithBearerTokenGetsTheAnswer() throws Exception {
        server.stubFor(post(urlEqualTo("/answer"))
                .withHeader("Content-Type", equalTo("application/json"))
                .withHeader("Authorization", equalTo("Bearer tok-123"))
                .withRequestBody(matchingJsonPath("$.id", equalTo("CLR-42-001")))
                .withRequestBody(matchingJsonPath("$.options[1]", equalTo("Sessions")))
                .willReturn(okJson("{\"answer\": \"Sessions, for now\", \"choice\": 1}")));
        Delivery d = channel(5, 0, "PM_SECRET", "PM_TOKEN", Map.of("PM_SECRET", "s3cret", "PM_TOKEN", "tok-123"))
                .ask(REQUEST);
        assertEquals(new Delivery.Answered("Sessions, for now", 1, "http"), d);

        LoggedRequest got = server.findAll(postRequestedFor(urlEqualTo("/answer"))).get(0);
        assertEquals("sha256=" + hmacHex("s3cret", got.getBody()), got.getHeader(Signatures.HEADER),
                "signature is the HMAC-SHA256 of the exact body");
        assertTrue(Signatures.verify("s3cret", got.getBody(), got.getHeader(Signatures.HEADER)));
        assertEquals("CLR-42-001", got.getHeader("X-Agentx-Clarification"));
    }

    @Test
    void anAgentThatChecksTheSignatureRefusesAWrongSecret() throws Exception {
        byte[] body = new RequestJson(RequestContext.local(Path.of("/work/demo"))).encode(REQUEST);
        server.stubFor(post(urlEqualTo("/answer")).atPriority(1)
                .withHeader(Signatures.HEADER, equalTo("sha256=" + hmacHex("right", body)))
                .willReturn(okJson("{\"answer\": \"signed ok\"}")));
        server.stubFor(post(urlEqualTo("/answer")).atPriority(2)
                .willReturn(aResponse().withStatus(401).withBody("{\"error\":\"bad signature\"}")));

        assertEquals(new Delivery.Answered("signed ok", null, "http"),
                channel(5, 2, "SECRET", null, Map.of("SECRET", "right")).ask(REQUEST));
        failed(channel(5, 2, "SECRET", null, Map.of("SECRET", "wrong")).ask(REQUEST), "HTTP 401");
        assertEquals(List.of(), waits, "a 4xx is not retried");
        failed(channel(5, 2, "SECRET", null, Map.of()).ask(REQUEST), "SECRET (secret_env of [agents.product-manager]) is not set");
        server.verify(2, postRequestedFor(urlEqualTo("/answer")));
        server.verify(0, postRequestedFor(urlEqualTo("/answer")).withHeader(Signatures.HEADER, absent()));
    }

    @Test
    void aSlowAgentTimesOut() {
        server.stubFor(post(urlEqualTo("/answer"))
                .willReturn(okJson("{\"answer\": \"too late\"}").withFixedDelay(4000)));
        long start = System.nanoTime();
        failed(channel(1, 2, null, null, Map.of()).ask(REQUEST), "gave no answer within 1 s");
        assertTrue(System.nanoTime() - start < Duration.ofSeconds(3).toNanos(), "a timeout is not retried");
        assertEquals(List.of(), waits);
    }

    @Test
    void a500IsRetriedWithBackoffUntilTheAgentAnswers() {
        server.stubFor(post(urlEqualTo("/answer")).inScenario("flaky").whenScenarioStateIs(Scenario.STARTED)
                .willReturn(aResponse().withStatus(500).withBody("boom")).willSetStateTo("second"));
        server.stubFor(post(urlEqualTo("/answer")).inScenario("flaky").whenScenarioStateIs("second")
                .willReturn(aResponse().withStatus(503)).willSetStateTo("up"));
        server.stubFor(post(urlEqualTo("/answer")).inScenario("flaky").whenScenarioStateIs("up")
                .willReturn(okJson("{\"answer\": \"Third time lucky\"}")));
        assertEquals(new Delivery.Answered("Third time lucky", null, "http"),
                channel(5, 2, null, null, Map.of()).ask(REQUEST));
        server.verify(3, postRequestedFor(urlEqualTo("/answer")));
        assertEquals(List.of(Duration.ofMillis(500), Duration.ofSeconds(1)), waits);
    }

    @Test
    void retriesRunOut() {
        server.stubFor(post(urlEqualTo("/answer")).willReturn(aResponse().withStatus(502).withBody("bad gateway")));
        failed(channel(5, 1, null, null, Map.of()).ask(REQUEST), "failed 2 times; last: HTTP 502: bad gateway");
        server.verify(2, postRequestedFor(urlEqualTo("/answer")));
    }

    @Test
    void malformedOrOversizedResponsesAreFailures() {
        server.stubFor(post(urlEqualTo("/answer")).willReturn(okJson("{\"answer\": \"unterminated")));
        failed(channel(5, 2, null, null, Map.of()).ask(REQUEST), "malformed JSON");
        server.stubFor(post(urlEqualTo("/answer")).willReturn(aResponse().withStatus(200).withBody("just text")));
        failed(channel(5, 2, null, null, Map.of()).ask(REQUEST), "did not answer with a JSON object");
        server.stubFor(post(urlEqualTo("/answer")).willReturn(okJson("{\"answer\": \"" + "x".repeat(5000) + "\"}")));
        failed(channel(5, 2, null, null, Map.of()).ask(REQUEST), "more than 4096 bytes");
        server.stubFor(post(urlEqualTo("/answer")).willReturn(okJson("{\"cannotAnswer\": true, \"reason\": \"ask UX\"}")));
        failed(channel(5, 2, null, null, Map.of()).ask(REQUEST), "cannot answer: ask UX");
        assertEquals(List.of(), waits);
    }

    @Test
    void aRefusedConnectionIsRetried() {
        int port = server.port();
        server.stop();
        AgentSettings s = new AgentSettings("http", List.of(), 2, "http://127.0.0.1:" + port + "/answer", null, null,
                null, 4096, 2, 3);
        Delivery d = new HttpChannel("pm", s, Map.of(), new RequestJson(RequestContext.local(Path.of("/x"))), waits::add)
                .ask(REQUEST);
        failed(d, "failed 3 times; last: ConnectException");
        assertEquals(2, waits.size());
    }

    @Test
    void aHostNameThatDoesNotResolveIsSaidSo() {
        // .invalid never resolves (RFC 2606)
        AgentSettings s = new AgentSettings("http", List.of(), 2, "http://agent.invalid/answer", null, null, null,
                4096, 0, 3);
        Delivery d = new HttpChannel("pm", s, Map.of(), new RequestJson(RequestContext.local(Path.of("/x"))), waits::add)
                .ask(REQUEST);
        failed(d, "the host name does not resolve");
    }
}
