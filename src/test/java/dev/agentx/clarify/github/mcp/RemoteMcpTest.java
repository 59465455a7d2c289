package dev.agentx.clarify.github.mcp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import static com.github.tomakehurst.wiremock.client.WireMock.aResponse;
import static com.github.tomakehurst.wiremock.client.WireMock.get;
import static com.github.tomakehurst.wiremock.client.WireMock.okJson;
import static com.github.tomakehurst.wiremock.client.WireMock.urlPathEqualTo;
import static com.github.tomakehurst.wiremock.client.WireMock.urlPathMatching;

import com.nimbusds.jwt.JWTClaimsSet;
import dev.agentx.clarify.github.GitHubMode;
import dev.agentx.clarify.github.support.GitHubRig;
import dev.agentx.clarify.metrics.ServerMetrics;
import dev.agentx.clarify.support.MutableClock;
import io.modelcontextprotocol.client.McpSyncClient;
import io.modelcontextprotocol.spec.McpSchema;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code /mcp} driven by the Java SDK's MCP client over Streamable HTTP, WireMock as GitHub (user
 * tokens, installations, permissions, teams), a fake Actions OIDC issuer with keys made here: a
 * user-token agent asks and waits while a person answers by comment; an Actions agent asks; every
 * caller the server must turn away is turned away, with nothing posted and nothing written.
 */
class RemoteMcpTest {
    private static final String REPO = GitHubRig.REPO.fullName();
    private static final String AGENT_WORKFLOW = ".github/workflows/agent.yml";
    private static final String CONFIG = GitHubRig.CONFIG.replace("engineer = [\"eng\"]",
            "engineer = [\"eng\", \"workflow:" + AGENT_WORKFLOW + "\"]");

    @TempDir
    Path dir;
    private GitHubRig rig;
    private FakeOidcIssuer issuer;
    private GitHubMode mode;
    private final List<McpSyncClient> clients = new java.util.ArrayList<>();

    @BeforeEach
    void start() {
        issuer = new FakeOidcIssuer();
        rig = new GitHubRig(dir.resolve("data"), MutableClock.at(Instant.now().toString()));
        Map<String, String> env = new HashMap<>(System.getenv());
        env.put("AGENTX_OIDC_ISSUER", issuer.url());
        rig.environment(env);
        rig.writeConfig(CONFIG);
        McpRig.stub(rig);
        McpRig.user(rig, "gho_eng", "eng");
        McpRig.user(rig, "gho_nobody", "nobody");
        McpRig.user(rig, "gho_outsider", "outsider");
        rig.permission("outsider", "none");
        mode = rig.start();
        // the repository is served once the App keeps something of it: a first comment's question
        assertEquals(202, rig.deliver("issue_comment", rig.comment("eng", 1, "/clarify @architect First?")).status());
    }

    @AfterEach
    void stop() {
        clients.forEach(McpSyncClient::closeGracefully);
        rig.close();
        issuer.close();
    }

    private McpSyncClient client(String token) {
        McpSyncClient c = McpRig.client(mode, token);
        clients.add(c);
        return c;
    }

    @Test
    void aUserTokenAgentAsksAndWaitsWhileAPersonAnswersByComment() throws Exception {
        McpSyncClient engineer = client("gho_eng");
        List<McpSchema.Tool> tools = engineer.listTools().tools();
        assertEquals(9, tools.size());
        for (McpSchema.Tool t : tools) {
            assertEquals("repository", ((List<?>) t.inputSchema().get("required")).get(0), t.name());
        }
        int before = rig.comments(42).size();
        CompletableFuture<McpSchema.CallToolResult> asking = CompletableFuture.supplyAsync(() -> McpRig.call(engineer,
                "clarify_ask", Map.of("repository", REPO, "issue", 42, "to", "architect",
                        "question", "Which auth method should the public API use?", "wait_seconds", 600)));
        // the question is posted on the issue as a /clarify comment's is, naming the asker's role
        String question = awaitComment(42, before);
        assertTrue(question.contains("**engineer** asks **architect**"), question);
        assertTrue(question.contains("Which auth method should the public API use?"), question);
        assertFalse(asking.isDone(), "it waits for the answer");

        rig.deliver("issue_comment", rig.comment("arch", 42, "/clarify answer CLR-42-001 JWT bearer tokens."));
        McpSchema.CallToolResult answered = asking.get(60, TimeUnit.SECONDS);
        assertFalse(answered.isError(), McpRig.text(answered));
        assertTrue(McpRig.text(answered).contains("JWT bearer tokens."), McpRig.text(answered));
        assertEquals("answered", ((Map<?, ?>) ((Map<?, ?>) answered.structuredContent()).get("waited")).get("outcome"));
        // posted once: the question and then the answer, nothing twice
        List<String> posted = rig.comments(42).subList(before, rig.comments(42).size());
        assertEquals(1, posted.stream().filter(c -> c.contains("**engineer** asks **architect**")).count(),
                posted.toString());
        assertEquals(1, posted.stream().filter(c -> c.contains("\"kind\":\"answer\"")).count(), posted.toString());
    }

    @Test
    void anActionsAgentAsksWithItsOidcToken() {
        Instant now = rig.clock.instant();
        McpSyncClient agent = client(issuer.sign(issuer.claims(REPO, AGENT_WORKFLOW, "agentx", now).build()));
        McpSchema.CallToolResult r = McpRig.call(agent, "clarify_ask", Map.of("repository", REPO, "issue", 43,
                "to", "architect", "question", "Postgres or SQLite for the cache?"));
        assertFalse(r.isError(), McpRig.text(r));
        assertTrue(McpRig.text(r).startsWith("CLR-43-001 asked: engineer -> architect"), McpRig.text(r));
        rig.mode().drain();
        String posted = rig.comments(43).get(0);
        assertTrue(posted.contains("**engineer** asks **architect**") && posted.contains("Postgres or SQLite"), posted);
    }

    @Test
    void aRenameTheServerHasNotHeardOfIsFollowedByTheRepositorysIdAsGitHubGivesIt() {
        String universe = "/repos/Codertocat/Hello-Universe";
        // GitHub knows the repository by its new name; no delivery has told the server of the rename
        rig.wiremock.stubFor(get(urlPathEqualTo(universe + "/installation")).atPriority(1).willReturn(okJson(
                "{\"id\":" + McpRig.INSTALLATION + ",\"app_id\":" + GitHubRig.APP_ID + "}")));
        rig.wiremock.stubFor(get(urlPathEqualTo(universe)).willReturn(okJson("{\"id\":" + GitHubRig.REPO.id()
                + ",\"name\":\"Hello-Universe\",\"full_name\":\"Codertocat/Hello-Universe\","
                + "\"owner\":{\"login\":\"Codertocat\"}}")));
        rig.wiremock.stubFor(get(urlPathMatching(universe + "/collaborators/eng/permission")).willReturn(okJson(
                "{\"permission\":\"write\",\"user\":{\"login\":\"eng\"}}")));
        rig.wiremock.stubFor(get(urlPathMatching(universe + "/issues/\\d+/comments")).willReturn(okJson("[]")));
        rig.wiremock.stubFor(com.github.tomakehurst.wiremock.client.WireMock.post(urlPathMatching(universe + "/issues/\\d+/comments")).willReturn(aResponse()
                .withStatus(201).withHeader("Content-Type", "application/json").withBody("{\"id\": 778}")));

        McpSchema.CallToolResult r = McpRig.call(client("gho_eng"), "clarify_ask", Map.of("repository",
                "Codertocat/Hello-Universe", "issue", 1, "to", "architect", "question", "And which queue?"));
        assertFalse(r.isError(), McpRig.text(r));
        // the same repository, by its id: its thread on #1 goes on counting, and it is posted under the new name
        assertTrue(McpRig.text(r).startsWith("CLR-1-002 asked: engineer -> architect"), McpRig.text(r));
        assertEquals("Hello-Universe", mode.names().record(GitHubRig.REPO.id()).orElseThrow().name());
        rig.mode().drain();
        assertEquals(1, rig.requests("POST", universe + "/issues/1/comments").size());
        assertEquals(1, rig.requests("POST", GitHubRig.API_REPO + "/issues/\\d+/comments").size(),
                "only the first question under the old name");
    }

    @Test
    void anActionsRunInARepositoryThatTookTheNameSinceActsOnItsOwnRepository() {
        // the name has passed to another repository (id 999); no delivery told the server yet
        rig.wiremock.stubFor(get(urlPathEqualTo(GitHubRig.API_REPO)).willReturn(okJson("{\"id\":999,"
                + "\"name\":\"Hello-World\",\"owner\":{\"login\":\"Codertocat\"}}")));
        McpSyncClient agent = client(issuer.sign(issuer.claims(REPO, AGENT_WORKFLOW, "agentx", rig.clock.instant())
                .claim("repository_id", "999").build()));
        McpSchema.CallToolResult r = McpRig.call(agent, "clarify_ask", ask(46));
        assertFalse(r.isError(), McpRig.text(r));
        assertTrue(McpRig.text(r).startsWith("CLR-46-001 asked"), McpRig.text(r));
        assertEquals(List.of(1), mode.repository(GitHubRig.REPO).ledgers().issues(), "not the old repository's state");
        assertEquals(List.of(46), mode.repository(new dev.agentx.clarify.github.RepoRef("Codertocat", "Hello-World",
                999)).ledgers().issues());
    }

    @Test
    void anActionsRunOfAnotherRepositoryIdIsRefusedThoughTheNameIsItsOwn() {
        rig.wiremock.stubFor(get(urlPathEqualTo(GitHubRig.API_REPO)).willReturn(okJson("{\"id\":"
                + GitHubRig.REPO.id() + ",\"name\":\"Hello-World\",\"owner\":{\"login\":\"Codertocat\"}}")));
        McpSyncClient agent = client(issuer.sign(issuer.claims(REPO, AGENT_WORKFLOW, "agentx", rig.clock.instant())
                .claim("repository_id", "999").build()));
        assertRefused(McpRig.call(agent, "clarify_ask", ask(44)), "it may act on its own repository only");
        nothingPostedOrWritten();
    }

    // ---- refusals: each with nothing posted and nothing written --------------------------------

    @Test
    void noTokenIsRefusedWithAChallengeBeforeTheBodyIsRead() {
        HttpResponse<String> r = post(null, "{not even json");
        assertEquals(401, r.statusCode());
        assertEquals("Bearer realm=\"agentx\"", r.headers().firstValue("WWW-Authenticate").orElse(null));
        assertTrue(rig.requests("GET", "/user").isEmpty(), "GitHub was not asked");
        nothingPostedOrWritten();
    }

    @Test
    void aTokenGitHubDoesNotTakeIsRefused() {
        HttpResponse<String> r = post("gho_revoked", initialize());
        assertEquals(401, r.statusCode(), r.body());
            assertTrue(r.headers().firstValue("WWW-Authenticate").orElse("").startsWith("Bearer "), r.headers().toString());
        nothingPostedOrWritten();
    }

    @Test
    void oidcTokensOfTheWrongAudienceExpiredOrSignedByAnotherKeyAreRefused() {
        Instant now = rig.clock.instant();
        JWTClaimsSet good = issuer.claims(REPO, AGENT_WORKFLOW, "agentx", now).build();
        for (String token : List.of(
                issuer.sign(issuer.claims(REPO, AGENT_WORKFLOW, "someone-else", now).build()),
                issuer.sign(issuer.claims(REPO, AGENT_WORKFLOW, "agentx", now.minusSeconds(3600)).build()),
                issuer.sign(good, issuer.stranger),
                issuer.signHs256(good),
                issuer.unsigned(good))) {
            HttpResponse<String> r = post(token, initialize());
            assertEquals(401, r.statusCode(), r.body());
            assertTrue(r.headers().firstValue("WWW-Authenticate").orElse("").startsWith("Bearer "), r.headers().toString());
        }
        assertTrue(rig.metrics().contains(ServerMetrics.MCP_REFUSED + "{reason=\"unauthenticated\"} 5.0"),
                rig.metrics());
        nothingPostedOrWritten();
    }

    @Test
    void aLoginWithoutARoleOrWhoCannotReadTheRepositoryIsRefused() {
        for (String token : List.of("gho_nobody", "gho_outsider")) {
            McpSchema.CallToolResult r = McpRig.call(client(token), "clarify_ask", ask(44));
            assertTrue(r.isError());
            assertTrue(McpRig.text(r).startsWith("NOT_PERMITTED: @"), McpRig.text(r));
        }
        nothingPostedOrWritten();
    }

    @Test
    void anotherRepositorysTokenAWorkflowWithoutARoleAndAnUnservedRepositoryAreRefused() {
        Instant now = rig.clock.instant();
        McpSyncClient other = client(issuer.sign(issuer.claims("Codertocat/Other", AGENT_WORKFLOW, "agentx", now)
                .build()));
        assertRefused(McpRig.call(other, "clarify_ask", ask(44)), "it may act on that repository only");
        McpSyncClient roleless = client(issuer.sign(issuer.claims(REPO, ".github/workflows/release.yml", "agentx", now)
                .build()));
        assertRefused(McpRig.call(roleless, "clarify_ask", ask(44)), "has no role");
        Map<String, Object> unserved = new HashMap<>(ask(44));
        unserved.put("repository", "Codertocat/Spoon-Knife");
        assertRefused(McpRig.call(client("gho_eng"), "clarify_ask", unserved), "does not serve Codertocat/Spoon-Knife");
        nothingPostedOrWritten();
    }

    private static void assertRefused(McpSchema.CallToolResult r, String why) {
        assertTrue(r.isError(), McpRig.text(r));
        assertTrue(McpRig.text(r).startsWith("NOT_PERMITTED: ") && McpRig.text(r).contains(why), McpRig.text(r));
    }

    private static Map<String, Object> ask(int issue) {
        return Map.of("repository", REPO, "issue", issue, "to", "architect", "question", "May I?");
    }

    /** Nothing but the setup's question was posted, and no ledger but its was written. */
    private void nothingPostedOrWritten() {
        rig.mode().drain();
        assertEquals(1, rig.requests("POST", GitHubRig.API_REPO + "/issues/\\d+/comments").size());
        assertFalse(rig.hasLedger(44));
        assertEquals(List.of(1), mode.repository(GitHubRig.REPO).ledgers().issues());
    }

    private String awaitComment(int issue, int before) throws InterruptedException {
        long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (System.nanoTime() < until) {
            List<String> all = rig.comments(issue);
            if (all.size() > before) {
                return all.get(before);
            }
            Thread.sleep(20);
        }
        throw new AssertionError("nothing posted on #" + issue);
    }

    static String initialize() {
        return "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":\"2025-11-25\","
                + "\"capabilities\":{},\"clientInfo\":{\"name\":\"test\",\"version\":\"1\"}}}";
    }

    HttpResponse<String> post(String token, String body) {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + mode.port() + "/mcp"))
                .header("Content-Type", "application/json").header("Accept", "application/json, text/event-stream")
                .POST(HttpRequest.BodyPublishers.ofString(body));
        if (token != null) {
            b.header("Authorization", "Bearer " + token);
        }
        try {
            return HttpClient.newHttpClient().send(b.build(), HttpResponse.BodyHandlers.ofString());
        } catch (java.io.IOException | InterruptedException e) {
            throw new AssertionError(e);
        }
    }
}
