package dev.agentx.clarify.github;

import static com.github.tomakehurst.wiremock.client.WireMock.aResponse;
import static com.github.tomakehurst.wiremock.client.WireMock.equalTo;
import static com.github.tomakehurst.wiremock.client.WireMock.get;
import static com.github.tomakehurst.wiremock.client.WireMock.okJson;
import static com.github.tomakehurst.wiremock.client.WireMock.post;
import static com.github.tomakehurst.wiremock.client.WireMock.urlPathEqualTo;
import static com.github.tomakehurst.wiremock.client.WireMock.urlPathMatching;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.github.tomakehurst.wiremock.client.ResponseDefinitionBuilder;
import com.github.tomakehurst.wiremock.http.Fault;
import com.github.tomakehurst.wiremock.stubbing.Scenario;
import com.github.tomakehurst.wiremock.stubbing.ServeEvent;
import dev.agentx.clarify.github.support.GitHubRig;
import dev.agentx.clarify.support.MutableClock;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The GitHub API failing in every way the outbox must survive. Each time the outbox recovers and
 * every effect (question comment, reaction, labels) lands exactly once.
 */
class GitHubApiFaultsTest {
    private static final String COMMENTS = GitHubRig.API_REPO + "/issues/1/comments";
    private static final String REACTIONS = GitHubRig.API_REPO + "/issues/comments/\\d+/reactions";
    private static final String LABELS = GitHubRig.API_REPO + "/issues/1/labels";
    /** Short for the slow-response case, long enough for a cold first call on a busy machine. */
    private static final Duration TIMEOUT = Duration.ofSeconds(2);

    @TempDir
    Path dir;
    MutableClock clock;
    GitHubRig rig;

    @BeforeEach
    void setUp() {
        clock = MutableClock.at("2026-02-26T10:00:00Z");
        rig = new GitHubRig(dir.resolve("data"), clock).apiTimeout(TIMEOUT);
    }

    @AfterEach
    void tearDown() {
        rig.close();
    }

    private static ResponseDefinitionBuilder status(int status) {
        return aResponse().withStatus(status).withHeader("Content-Type", "application/json")
                .withBody("{\"message\":\"fault\"}");
    }

    static Stream<Arguments> faults() {
        return Stream.of(
                Arguments.of("connection reset", aResponse().withFault(Fault.CONNECTION_RESET_BY_PEER), null),
                Arguments.of("empty response", aResponse().withFault(Fault.EMPTY_RESPONSE), null),
                Arguments.of("500", status(500), null),
                Arguments.of("502", status(502), null),
                Arguments.of("429 Retry-After", status(429).withHeader("Retry-After", "90"), Duration.ofSeconds(90)),
                Arguments.of("403 secondary limit Retry-After", aResponse().withStatus(403)
                        .withHeader("Content-Type", "application/json").withHeader("Retry-After", "120")
                        .withBody("{\"message\":\"You have exceeded a secondary rate limit. Please wait.\"}"),
                        Duration.ofSeconds(120)),
                // GitHub may say it only in the message, with core requests left: a minute's wait
                Arguments.of("403 secondary limit in the message only", aResponse().withStatus(403)
                        .withHeader("Content-Type", "application/json").withHeader("X-RateLimit-Limit", "5000")
                        .withHeader("X-RateLimit-Remaining", "4990")
                        .withBody("{\"message\":\"You have exceeded a secondary rate limit and have been temporarily "
                                + "blocked from content creation. Please retry your request again later.\"}"),
                        Duration.ofMinutes(1)));
    }

    /** Requests GitHub carried out: answered with a success, not a fault. */
    private List<ServeEvent> landed(String method, String pathRegex) {
        return rig.wiremock.getAllServeEvents().stream()
                .filter(e -> e.getRequest().getMethod().getName().equals(method)
                        && e.getRequest().getUrl().split("\\?")[0].matches(pathRegex)
                        && e.getResponseDefinition().getFault() == null
                        && e.getResponseDefinition().getStatus() >= 200 && e.getResponseDefinition().getStatus() < 300)
                .toList();
    }

    private void assertEveryEffectLandedOnce() {
        assertEquals(0, rig.mode().pendingEffects(), "the outbox is empty");
        List<ServeEvent> comments = landed("POST", COMMENTS);
        assertEquals(1, comments.size(), "one question comment");
        assertTrue(comments.get(0).getRequest().getBodyAsString().contains("Q?"));
        assertEquals(1, landed("POST", REACTIONS).size(), "one reaction");
        assertEquals(1, landed("POST", LABELS).size(), "labels once");
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("faults")
    void theOutboxRecoversAndEveryEffectLandsOnce(String name, ResponseDefinitionBuilder fault, Duration retryAfter) {
        rig.start();
        rig.wiremock.stubFor(post(urlPathEqualTo(COMMENTS)).atPriority(1).inScenario("fault")
                .whenScenarioStateIs(Scenario.STARTED).willReturn(fault).willSetStateTo("up"));
        rig.wiremock.stubFor(post(urlPathEqualTo(COMMENTS)).atPriority(1).inScenario("fault")
                .whenScenarioStateIs("up").willReturn(status(201).withBody("{\"id\":778}")));
        assertEquals(202, rig.deliver("issue_comment", rig.comment("eng", 1, "/clarify @architect Q?")).status());
        int attempts = rig.requests("POST", COMMENTS).size();
        assertTrue(attempts >= 1, name);
        if (retryAfter != null) {
            assertEquals(3, rig.mode().pendingEffects(), "the comment and what follows it wait");
            clock.advance(retryAfter.minusSeconds(1));
            rig.mode().drain();
            assertEquals(attempts, rig.requests("POST", COMMENTS).size(), name + ": Retry-After is honoured");
        }
        for (int i = 0; i < 3 && rig.mode().pendingEffects() > 0; i++) {
            clock.advance(Duration.ofMinutes(11));
            rig.mode().drain();
        }
        assertEveryEffectLandedOnce();
        clock.advance(Duration.ofHours(1));
        rig.mode().drain();
        assertEquals(1, landed("POST", COMMENTS).size(), "nothing posted again later");
    }

    static Stream<Arguments> listFaults() {
        return Stream.of(Arguments.of("502", status(502)),
                Arguments.of("connection reset", aResponse().withFault(Fault.CONNECTION_RESET_BY_PEER)));
    }

    /**
     * A comment whose POST failed without an answer is looked for on the issue before it is posted
     * again; when that list of the comments fails too, the comment waits for the next try
     * (it is not given up on), and lands once.
     */
    @ParameterizedTest(name = "{0}")
    @MethodSource("listFaults")
    void aCommentWhoseLookUpFailsToo_IsTriedAgainAndLandsOnce(String name, ResponseDefinitionBuilder fault) {
        rig.start();
        rig.wiremock.stubFor(post(urlPathEqualTo(COMMENTS)).atPriority(1).inScenario("fault")
                .whenScenarioStateIs(Scenario.STARTED).willReturn(status(502)).willSetStateTo("up"));
        rig.wiremock.stubFor(post(urlPathEqualTo(COMMENTS)).atPriority(1).inScenario("fault")
                .whenScenarioStateIs("up").willReturn(status(201).withBody("{\"id\":778}")));
        rig.wiremock.stubFor(get(urlPathEqualTo(COMMENTS)).atPriority(1).inScenario("list")
                .whenScenarioStateIs(Scenario.STARTED).willReturn(fault).willSetStateTo("listed"));
        rig.wiremock.stubFor(get(urlPathEqualTo(COMMENTS)).atPriority(1).inScenario("list")
                .whenScenarioStateIs("listed").willReturn(okJson("[]")));
        assertEquals(202, rig.deliver("issue_comment", rig.comment("eng", 1, "/clarify @architect Q?")).status());
        assertEquals(3, rig.mode().pendingEffects(), "the comment failed: it and what follows it wait");

        clock.advance(Duration.ofSeconds(11));
        rig.mode().drain();
        assertTrue(rig.requests("GET", COMMENTS).size() >= 1, name + ": looked for the comment");
        assertEquals(1, rig.requests("POST", COMMENTS).size(), name + ": not posted while the look-up failed");
        assertEquals(3, rig.mode().pendingEffects(), name + ": the comment still waits, not given up on");

        for (int i = 0; i < 3 && rig.mode().pendingEffects() > 0; i++) {
            clock.advance(Duration.ofMinutes(11));
            rig.mode().drain();
        }
        assertEveryEffectLandedOnce();
    }

    /** An answer the client cannot read (a list where a file belongs) is a failure with its status, not a crash. */
    @Test
    void anAnswerTheClientCannotReadIsAFailureWithItsStatus() {
        rig.start();
        rig.wiremock.stubFor(get(urlPathEqualTo(GitHubRig.API_REPO + "/contents/.github/agentx.toml")).atPriority(1)
                .willReturn(okJson("[]")));
        dev.agentx.clarify.github.GitHubSettings s = rig.settings();
        dev.agentx.clarify.github.api.Hub4jGateway gateway = new dev.agentx.clarify.github.api.Hub4jGateway(s.apiUrl(),
                new dev.agentx.clarify.github.auth.AppJwt(s.appId(), s.privateKey(), clock), clock,
                dev.agentx.clarify.metrics.ServerMetrics.create(), TIMEOUT);
        dev.agentx.clarify.github.api.GitHubApiException e = org.junit.jupiter.api.Assertions.assertThrows(
                dev.agentx.clarify.github.api.GitHubApiException.class,
                () -> gateway.fileOnDefaultBranch(1, GitHubRig.REPO, ".github/agentx.toml"));
        assertTrue(e.getMessage().startsWith("read .github/agentx.toml of Codertocat/Hello-World: "), e.getMessage());
    }

    @Test
    void aResponseSlowerThanTheClientTimeoutIsRetriedWithoutPostingTwice() {
        rig.start();
        // GitHub creates the comment but answers after the client gave up
        rig.wiremock.stubFor(post(urlPathEqualTo(COMMENTS)).atPriority(1).willReturn(status(201)
                .withBody("{\"id\":778}").withFixedDelay((int) TIMEOUT.toMillis() * 3)));
        long start = System.nanoTime();
        assertEquals(202, rig.deliver("issue_comment", rig.comment("eng", 1, "/clarify @architect Q?")).status());
        long tookMs = (System.nanoTime() - start) / 1_000_000;
        assertTrue(tookMs < TIMEOUT.toMillis() * 2, "the client gave up after its timeout, not after the response: " + tookMs + " ms");
        assertEquals(3, rig.mode().pendingEffects());
        // the comment did land: GitHub lists it with its hidden tag
        long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
        while (rig.comments(1).isEmpty() && System.nanoTime() < deadline) {
            Thread.onSpinWait();
        }
        String first = rig.comments(1).get(0);
        rig.wiremock.stubFor(get(urlPathEqualTo(COMMENTS)).atPriority(1).willReturn(okJson(
                "[{\"id\":778,\"body\":" + rig.json.valueToTree(first) + "}]")));
        clock.advance(Duration.ofSeconds(11));
        rig.mode().drain();
        assertEquals(0, rig.mode().pendingEffects());
        assertEquals(1, rig.requests("POST", COMMENTS).size(), "not posted a second time");
        assertEquals(1, rig.requests("GET", COMMENTS).size(), "looked for the earlier landing");
        assertEquals(1, landed("POST", REACTIONS).size());
        assertEquals(1, landed("POST", LABELS).size());
    }

    @Test
    void anExpiredInstallationTokenIsRefreshedAndTheCallRepeatedOnce() {
        String tokens = "/app/installations/\\d+/access_tokens";
        rig.wiremock.stubFor(post(urlPathMatching(tokens)).atPriority(1).inScenario("token")
                .whenScenarioStateIs(Scenario.STARTED).willReturn(status(201).withBody(
                        "{\"token\":\"ghs_first\",\"expires_at\":\"" + clock.instant().plusSeconds(3600) + "\"}"))
                .willSetStateTo("second"));
        rig.wiremock.stubFor(post(urlPathMatching(tokens)).atPriority(1).inScenario("token")
                .whenScenarioStateIs("second").willReturn(status(201).withBody(
                        "{\"token\":\"ghs_second\",\"expires_at\":\"" + clock.instant().plusSeconds(3600) + "\"}")));
        // the first token is refused everywhere (revoked or expired early), the second one works
        rig.wiremock.stubFor(post(urlPathEqualTo(COMMENTS)).atPriority(1)
                .withHeader("Authorization", equalTo("token ghs_first"))
                .willReturn(status(401).withBody("{\"message\":\"Bad credentials\"}")));
        rig.wiremock.stubFor(post(urlPathEqualTo(COMMENTS)).atPriority(2).willReturn(status(201)
                .withBody("{\"id\":778}")));
        rig.start();
        assertEquals(202, rig.deliver("issue_comment", rig.comment("eng", 1, "/clarify @architect Q?")).status());
        assertEquals(2, rig.requests("POST", tokens).size(), "a new token after the 401");
        assertEquals(2, rig.requests("POST", COMMENTS).size(), "the 401 and the repeated call");
        assertEquals("token ghs_second", landed("POST", COMMENTS).get(0).getRequest().getHeader("Authorization"));
        assertEveryEffectLandedOnce();
    }
}
