package dev.agentx.clarify.github.api;

import static com.github.tomakehurst.wiremock.client.WireMock.aResponse;
import static com.github.tomakehurst.wiremock.client.WireMock.equalTo;
import static com.github.tomakehurst.wiremock.client.WireMock.get;
import static com.github.tomakehurst.wiremock.client.WireMock.okJson;
import static com.github.tomakehurst.wiremock.client.WireMock.post;
import static com.github.tomakehurst.wiremock.client.WireMock.postRequestedFor;
import static com.github.tomakehurst.wiremock.client.WireMock.urlPathEqualTo;
import static com.github.tomakehurst.wiremock.core.WireMockConfiguration.wireMockConfig;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import com.github.tomakehurst.wiremock.WireMockServer;
import com.github.tomakehurst.wiremock.http.Fault;
import java.io.IOException;
import java.net.SocketTimeoutException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The GitHub API's HTTP client against a real HTTP server (WireMock). */
class ApiHttpTest {
    private WireMockServer server;
    private ApiHttp http;

    @BeforeEach
    void start() {
        server = new WireMockServer(wireMockConfig().bindAddress("127.0.0.1").dynamicPort());
        server.start();
        http = new ApiHttp(Duration.ofMillis(500));
    }

    @AfterEach
    void stop() throws IOException {
        http.close();
        server.stop();
    }

    private URI uri(String path) {
        return URI.create(server.baseUrl() + path);
    }

    @Test
    void sendsTheHeadersAndBodyAndReadsTheWholeAnswer() throws IOException {
        server.stubFor(post(urlPathEqualTo("/repos/o/r/issues/1/comments"))
                .withHeader("Authorization", equalTo("token t"))
                .withHeader("Content-Type", equalTo("application/json; charset=UTF-8"))
                .withHeader("User-Agent", equalTo("agentx-clarify"))
                .willReturn(aResponse().withStatus(201).withHeader("X-RateLimit-Remaining", "4999")
                        .withHeader("Link", "<a>; rel=\"next\"").withBody("{\"id\":777}")));
        byte[] body = "{\"body\":\"hi\"}".getBytes(StandardCharsets.UTF_8);
        ApiHttp.Answer a = http.send("POST", uri("/repos/o/r/issues/1/comments"),
                Map.of("Authorization", List.of("token t"), "Content-Length", List.of("999")), body,
                "application/json; charset=UTF-8");
        assertEquals(201, a.status());
        assertEquals("{\"id\":777}", new String(a.body(), StandardCharsets.UTF_8));
        assertEquals("4999", a.header("x-ratelimit-remaining"), "header names in any case");
        assertEquals("<a>; rel=\"next\"", a.header("LINK"));
        assertArrayEquals(body, server.getAllServeEvents().get(0).getRequest().getBody(),
                "the body as given; its length the client's own, not the caller's header");
    }

    /** GitHub answers 411 to a POST without a length (asking for a redelivery has no body). */
    @Test
    void aPostWithoutABodySaysItsLengthIsNought() throws IOException {
        server.stubFor(post(urlPathEqualTo("/app/hook/deliveries/1/attempts"))
                .withHeader("Content-Length", equalTo("0")).willReturn(aResponse().withStatus(202)));
        assertEquals(202, http.send("POST", uri("/app/hook/deliveries/1/attempts"), Map.of(), null, null).status());
    }

    @Test
    void aStatusThatIsNotSuccessIsAnAnswerWithItsBody() throws IOException {
        server.stubFor(get(urlPathEqualTo("/x")).willReturn(aResponse().withStatus(404).withBody("{\"message\":\"Not Found\"}")));
        ApiHttp.Answer a = http.send("GET", uri("/x"), Map.of(), null, null);
        assertEquals(404, a.status());
        assertEquals("{\"message\":\"Not Found\"}", new String(a.body(), StandardCharsets.UTF_8));
    }

    /** A POST whose answer was lost may have landed: the client must not send it again by itself. */
    @Test
    void aPostWhoseConnectionBreaksIsSentOnce() {
        server.stubFor(post(urlPathEqualTo("/c")).willReturn(aResponse().withFault(Fault.CONNECTION_RESET_BY_PEER)));
        assertThrows(IOException.class, () -> http.send("POST", uri("/c"), Map.of(), "{}".getBytes(), "application/json"));
        server.stubFor(post(urlPathEqualTo("/e")).willReturn(aResponse().withFault(Fault.EMPTY_RESPONSE)));
        assertThrows(IOException.class, () -> http.send("POST", uri("/e"), Map.of(), "{}".getBytes(), "application/json"));
        server.verify(1, postRequestedFor(urlPathEqualTo("/c")));
        server.verify(1, postRequestedFor(urlPathEqualTo("/e")));
    }

    @Test
    void anAnswerSlowerThanTheTimeoutFailsOnce() {
        server.stubFor(post(urlPathEqualTo("/slow")).willReturn(okJson("{}").withFixedDelay(2_000)));
        long start = System.nanoTime();
        assertThrows(SocketTimeoutException.class,
                () -> http.send("POST", uri("/slow"), Map.of(), "{}".getBytes(), "application/json"));
        long ms = (System.nanoTime() - start) / 1_000_000;
        assertEquals(true, ms < 1_900, "gave up after the timeout, not the answer: " + ms + " ms");
        server.verify(1, postRequestedFor(urlPathEqualTo("/slow")));
    }

    /** A renamed repository: GitHub answers a read 301 and a write 307 to the new address. */
    @Test
    void followsRedirectsKeepingAWritesMethodAndBody() throws IOException {
        server.stubFor(get(urlPathEqualTo("/repos/old/r")).willReturn(aResponse().withStatus(301)
                .withHeader("Location", server.baseUrl() + "/repositories/9")));
        server.stubFor(get(urlPathEqualTo("/repositories/9")).willReturn(okJson("{\"id\":9}")));
        assertEquals("{\"id\":9}", new String(http.send("GET", uri("/repos/old/r"), Map.of(), null, null).body(),
                StandardCharsets.UTF_8));
        server.stubFor(post(urlPathEqualTo("/repos/old/r/issues/1/comments")).willReturn(aResponse().withStatus(307)
                .withHeader("Location", server.baseUrl() + "/repositories/9/issues/1/comments")));
        server.stubFor(post(urlPathEqualTo("/repositories/9/issues/1/comments"))
                .withRequestBody(equalTo("{\"body\":\"hi\"}")).willReturn(aResponse().withStatus(201).withBody("{\"id\":5}")));
        assertEquals(201, http.send("POST", uri("/repos/old/r/issues/1/comments"), Map.of(),
                "{\"body\":\"hi\"}".getBytes(StandardCharsets.UTF_8), "application/json").status());
    }
}
