package dev.agentx.clarify.github.support;

import static com.github.tomakehurst.wiremock.client.WireMock.aResponse;
import static com.github.tomakehurst.wiremock.client.WireMock.delete;
import static com.github.tomakehurst.wiremock.client.WireMock.get;
import static com.github.tomakehurst.wiremock.client.WireMock.okJson;
import static com.github.tomakehurst.wiremock.client.WireMock.patch;
import static com.github.tomakehurst.wiremock.client.WireMock.post;
import static com.github.tomakehurst.wiremock.client.WireMock.urlPathEqualTo;
import static com.github.tomakehurst.wiremock.client.WireMock.urlPathMatching;
import static com.github.tomakehurst.wiremock.core.WireMockConfiguration.wireMockConfig;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.github.tomakehurst.wiremock.WireMockServer;
import com.github.tomakehurst.wiremock.verification.LoggedRequest;
import dev.agentx.clarify.channel.AnswerChannel;
import dev.agentx.clarify.channel.HumanChannel;
import dev.agentx.clarify.github.GitHubMode;
import dev.agentx.clarify.github.GitHubSettings;
import dev.agentx.clarify.github.RepoRef;
import dev.agentx.clarify.github.RepositoryMonitor;
import dev.agentx.clarify.github.api.Hub4jGateway;
import dev.agentx.clarify.github.auth.AppJwt;
import dev.agentx.clarify.github.webhook.SignatureVerifier;
import dev.agentx.clarify.lock.LockManager;
import dev.agentx.clarify.lock.LockObserver;
import dev.agentx.clarify.lock.LockSettings;
import dev.agentx.clarify.lock.ProcessIdentity;
import dev.agentx.clarify.metrics.ServerMetrics;
import dev.agentx.clarify.protocol.Ledger;
import dev.agentx.clarify.support.MutableClock;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.interfaces.RSAPrivateKey;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * GitHub Mode end to end: the real server on a random port in synchronous mode, WireMock standing
 * in for the GitHub API, and the real fixture payloads edited per case and signed.
 */
public final class GitHubRig implements AutoCloseable {
    public static final String SECRET = "test-secret";
    public static final String OLD_SECRET = "old-secret";
    public static final long APP_ID = 4242;
    /** The repository of the fixtures, with GitHub's id of it as they give it. */
    public static final RepoRef REPO = new RepoRef("Codertocat", "Hello-World", 186853002);
    public static final String API_REPO = "/repos/Codertocat/Hello-World";
    public static final String CONFIG = """
            [roles]
            engineer = ["eng"]
            architect = ["arch", "@acme/architects"]
            reviewer = ["rev"]
            product-manager = ["pm-person"]
            ux-designer = ["agent-ux[bot]"]

            [maintainers]
            min_permission = "write"
            """;

    public final Path data;
    private java.time.Duration redeliveryInterval = java.time.Duration.ZERO;
    public final MutableClock clock;
    public final WireMockServer wiremock;
    public final ObjectMapper json = new ObjectMapper();
    /** The check runs the App made, as GitHub keeps them. */
    public final CheckRunsStub checkRuns = new CheckRunsStub();
    private final HttpClient http = HttpClient.newHttpClient();
    private final AtomicInteger deliveries = new AtomicInteger();
    /** GitHub's comment ids are unique everywhere: shared by every rig, so one on another's data dir issues new ones. */
    private static final AtomicInteger COMMENT_IDS = new AtomicInteger(5000);
    private GitHubMode mode;
    private RepositoryMonitor monitor = RepositoryMonitor.NONE;
    private long maxBody = GitHubSettings.MAX_BODY_BYTES;
    private AnswerChannel channel = new HumanChannel();
    private java.time.Duration apiTimeout = Hub4jGateway.DEFAULT_TIMEOUT;
    private boolean synchronous = true;
    private Map<String, String> environment = System.getenv();
    private String clientId;
    private String clientSecret;
    private dev.agentx.clarify.store.postgres.DatabaseUrl database;
    private final List<GitHubMode> replicas = new java.util.ArrayList<>();

    public GitHubRig(Path data, MutableClock clock) {
        this(data, clock, true);
    }

    /**
     * {@code requestJournal} false: WireMock keeps no record of requests (benchmarks: a long run's
     * journal costs memory and CPU that are the stub's, not the server's; listeners still see each request).
     */
    public GitHubRig(Path data, MutableClock clock, boolean requestJournal) {
        this.data = data;
        this.clock = clock;
        // every request the App makes is kept for the contract check against GitHub's description
        this.wiremock = new WireMockServer(requestJournal
                ? wireMockConfig().dynamicPort().extensions(new RateLimitHeaders(), new RequestJournal(), checkRuns)
                : wireMockConfig().dynamicPort().extensions(new RateLimitHeaders(), checkRuns).disableRequestJournal());
        wiremock.start();
        stubGitHub();
        writeConfig(CONFIG);
    }

    public GitHubRig monitor(RepositoryMonitor m) {
        this.monitor = m;
        return this;
    }

    /** Each role's answer channel from agentx.toml, as 'agentx serve' runs it. */
    /** The server's environment, as the answer channels would get it from the process. */
    public GitHubRig environment(Map<String, String> env) {
        this.environment = env;
        return this;
    }

    public GitHubRig configuredChannels() {
        this.channel = null;
        return this;
    }

    public GitHubRig maxBody(long bytes) {
        this.maxBody = bytes;
        return this;
    }

    /** The GitHub client's timeout (connect, and waiting for a response). */
    public GitHubRig apiTimeout(java.time.Duration timeout) {
        this.apiTimeout = timeout;
        return this;
    }

    /** The server's own mode: a background worker, deliveries processed after the 202. */
    /** Runs the recovery pass of GitHub Mode on this interval (zero, the default: never on its own). */
    public GitHubRig redeliveryInterval(java.time.Duration interval) {
        this.redeliveryInterval = interval;
        return this;
    }

    /** The repositories' state in this PostgreSQL database rather than in files under the data dir. */
    public GitHubRig database(String url) {
        this.database = dev.agentx.clarify.store.postgres.DatabaseUrl.parse(url, java.util.Map.of());
        return this;
    }

    /** The repositories' state in files under the data dir again (after {@link #database}), from the next start. */
    public GitHubRig files() {
        this.database = null;
        return this;
    }

    /** The App's OAuth credentials, which turn on /dashboard. */
    public GitHubRig oauth(String id, String secret) {
        this.clientId = id;
        this.clientSecret = secret;
        return this;
    }

    public GitHubRig async() {
        this.synchronous = false;
        return this;
    }

    public void writeConfig(String toml) {
        try {
            Files.createDirectories(data);
            Files.writeString(data.resolve("agentx.toml"), toml);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The API as an installed app sees it: token, comments, reactions, labels, permissions, teams. */
    public void stubGitHub() {
        wiremock.resetAll();
        wiremock.stubFor(post(urlPathMatching("/app/installations/\\d+/access_tokens")).willReturn(aResponse()
                .withStatus(201).withHeader("Content-Type", "application/json")
                .withBody("{\"token\":\"ghs_test_token\",\"expires_at\":\"" + clock.instant().plusSeconds(3600) + "\"}")));
        wiremock.stubFor(post(urlPathMatching(API_REPO + "/issues/\\d+/comments")).willReturn(aResponse().withStatus(201)
                .withHeader("Content-Type", "application/json").withBody("{\"id\": 777, \"body\": \"posted\"}")));
        wiremock.stubFor(get(urlPathMatching(API_REPO + "/issues/\\d+/comments")).willReturn(okJson("[]")));
        wiremock.stubFor(post(urlPathMatching(API_REPO + "/issues/comments/\\d+/reactions")).willReturn(aResponse()
                .withStatus(201).withHeader("Content-Type", "application/json").withBody("{\"id\":1,\"content\":\"+1\"}")));
        wiremock.stubFor(post(urlPathMatching(API_REPO + "/issues/\\d+/reactions")).willReturn(aResponse()
                .withStatus(201).withHeader("Content-Type", "application/json").withBody("{\"id\":2,\"content\":\"+1\"}")));
        wiremock.stubFor(post(urlPathMatching(API_REPO + "/pulls/\\d+/comments/\\d+/replies")).willReturn(aResponse()
                .withStatus(201).withHeader("Content-Type", "application/json").withBody("{\"id\": 90001}")));
        wiremock.stubFor(get(urlPathMatching(API_REPO + "/pulls/\\d+/comments")).willReturn(okJson("[]")));
        wiremock.stubFor(post(urlPathMatching(API_REPO + "/issues/\\d+/labels")).willReturn(okJson("[]")));
        wiremock.stubFor(delete(urlPathMatching(API_REPO + "/issues/\\d+/labels/.+")).willReturn(okJson("[]")));
        wiremock.stubFor(get(urlPathMatching(API_REPO + "/collaborators/[^/]+/permission")).atPriority(10)
                .willReturn(okJson("{\"permission\":\"read\",\"user\":{\"login\":\"someone\"}}")));
        permission("boss", "admin");
        permission("writer", "write");
        wiremock.stubFor(post(urlPathEqualTo(API_REPO + "/check-runs")).willReturn(aResponse()
                .withTransformers(CheckRunsStub.NAME)));
        wiremock.stubFor(patch(urlPathMatching(API_REPO + "/check-runs/\\d+")).willReturn(aResponse()
                .withTransformers(CheckRunsStub.NAME)));
        wiremock.stubFor(get(urlPathMatching(API_REPO + "/commits/[0-9a-f]{40}/check-runs")).willReturn(aResponse()
                .withTransformers(CheckRunsStub.NAME)));
        wiremock.stubFor(get(urlPathEqualTo("/orgs/acme/teams/architects/members")).willReturn(okJson(
                "[{\"login\":\"team-arch\",\"id\":9}]")));
    }

    /** GitHub's contents API serves {@code toml} as the repository's .github/agentx.toml at blob {@code sha}. */
    public void serveRepoConfig(String sha, String toml) {
        String b64 = java.util.Base64.getEncoder().encodeToString(toml.getBytes(StandardCharsets.UTF_8));
        wiremock.stubFor(get(urlPathEqualTo(API_REPO + "/contents/.github/agentx.toml")).willReturn(okJson(
                "{\"type\":\"file\",\"encoding\":\"base64\",\"name\":\"agentx.toml\",\"path\":"
                + "\".github/agentx.toml\",\"sha\":\"" + sha + "\",\"size\":" + toml.length() + ",\"content\":\""
                + b64 + "\"}")));
    }

    public void permission(String login, String permission) {
        wiremock.stubFor(get(urlPathEqualTo(API_REPO + "/collaborators/" + login + "/permission")).atPriority(1)
                .willReturn(okJson("{\"permission\":\"" + permission + "\",\"user\":{\"login\":\"" + login + "\"}}")));
    }

    public GitHubSettings settings() {
        return settings(data);
    }

    private GitHubSettings settings(Path data) {
        RSAPrivateKey key = (RSAPrivateKey) Keys.PAIR.getPrivate();
        return new GitHubSettings(String.valueOf(APP_ID), key, List.of(SECRET.getBytes(StandardCharsets.UTF_8),
                OLD_SECRET.getBytes(StandardCharsets.UTF_8)), wiremock.baseUrl(), data, 0,
                GitHubSettings.DEFAULT_PATH, maxBody, 0, redeliveryInterval, clientId, clientSecret, database);
    }

    public LockManager locks() {
        return locks(LockObserver.NONE);
    }

    private LockManager locks(LockObserver observer) {
        return new LockManager(clock, LockSettings.defaults(), clock::advance, ProcessIdentity.current(), observer);
    }

    /** Starts (or restarts) the server, in synchronous mode unless {@link #async()}. */
    public GitHubMode start() {
        if (mode != null) {
            mode.close();
        }
        mode = newMode(settings());
        return mode.start();
    }

    /** A server with these settings and the rig's clock, GitHub client, monitor, channel and mode. */
    private GitHubMode newMode(GitHubSettings s) {
        ServerMetrics metrics = ServerMetrics.create();
        return new GitHubMode(s, clock, locks(metrics.lockObserver()),
                new Hub4jGateway(s.apiUrl(), new AppJwt(s.appId(), s.privateKey(), clock), clock, metrics, apiTimeout),
                new GitHubMode.Options(synchronous, monitor, channel, "127.0.0.1", environment), metrics);
    }

    public GitHubMode mode() {
        return mode;
    }

    /**
     * Starts another replica of the server on the same database ({@link #database}) and GitHub,
     * with the data dir {@code otherData} (given the rig's agentx.toml) and the rig's mode; closed
     * with the rig.
     */
    public GitHubMode startReplica(Path otherData) {
        try {
            Files.createDirectories(otherData);
            Files.copy(data.resolve("agentx.toml"), otherData.resolve("agentx.toml"),
                    java.nio.file.StandardCopyOption.REPLACE_EXISTING);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        GitHubMode replica = newMode(settings(otherData));
        replicas.add(replica);
        return replica.start();
    }

    /** Sends a signed delivery to the server {@code to} (the rig's or {@link #startReplica another replica}). */
    public Response deliverTo(GitHubMode to, String event, JsonNode payload, String deliveryId) {
        byte[] body = bytes(payload);
        return request("POST", to.port(), GitHubSettings.DEFAULT_PATH, body, Map.of("Content-Type", "application/json",
                "X-GitHub-Event", event, "X-GitHub-Delivery", deliveryId, "X-Hub-Signature-256",
                SignatureVerifier.sign(SECRET, body)));
    }

    /** GET of a path on the management port (/metrics, /readyz, /healthz). */
    public Response management(String path) {
        return request("GET", mode.managementPort(), path, null, Map.of());
    }

    /** The scrape of /metrics on the management port. */
    public String metrics() {
        Response r = management("/metrics");
        if (r.status() != 200) {
            throw new AssertionError("GET /metrics: " + r.status() + " " + r.body());
        }
        return r.body();
    }

    // ---- payloads ----------------------------------------------------------------------------

    public ObjectNode fixture(String name) {
        Path p = Path.of(System.getProperty("agentx.fixtures", "src/test/resources/fixtures"), "github-webhooks",
                name + ".payload.json");
        try {
            return (ObjectNode) json.readTree(p.toFile());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static void user(ObjectNode user, String login) {
        user.put("login", login);
        user.put("type", login.endsWith("[bot]") ? "Bot" : "User");
    }

    /** issue_comment.created by {@code login} on issue {@code issue} with {@code body}. */
    public ObjectNode comment(String login, int issue, String body) {
        ObjectNode p = fixture("issue_comment.created.with-installation");
        ObjectNode c = (ObjectNode) p.get("comment");
        c.put("body", body);
        c.put("id", COMMENT_IDS.incrementAndGet());
        user((ObjectNode) c.get("user"), login);
        user((ObjectNode) p.get("sender"), login);
        ((ObjectNode) p.get("issue")).put("number", issue);
        return p;
    }

    /**
     * pull_request_review_comment.created by {@code login} on pull request {@code pull}, comment
     * {@code id} with {@code body}, on GitHub's example's line (README.md, 265); {@code inReplyTo}:
     * the first comment of the thread it replies in, 0 for a thread's first.
     */
    public ObjectNode reviewComment(String login, int pull, long id, long inReplyTo, String body) {
        ObjectNode p = fixture("pull_request_review_comment.created.with-installation");
        ObjectNode c = (ObjectNode) p.get("comment");
        c.put("id", id);
        c.put("body", body);
        if (inReplyTo > 0) {
            c.put("in_reply_to_id", inReplyTo);
        }
        user((ObjectNode) c.get("user"), login);
        user((ObjectNode) p.get("sender"), login);
        ((ObjectNode) p.get("pull_request")).put("number", pull);
        return p;
    }

    public ObjectNode issueEvent(String action, String login, int issue) {
        ObjectNode p = fixture("issues.opened");
        p.put("action", action);
        p.putObject("installation").put("id", 1);
        ((ObjectNode) p.get("issue")).put("number", issue);
        user((ObjectNode) p.get("sender"), login);
        user((ObjectNode) p.path("issue").get("user"), login);
        return p;
    }

    public ObjectNode labeled(String login, int issue, String label) {
        ObjectNode p = fixture("issues.labeled");
        p.putObject("installation").put("id", 1);
        ((ObjectNode) p.get("issue")).put("number", issue);
        ((ObjectNode) p.get("label")).put("name", label);
        p.withArray("/issue/labels").addObject().put("name", label);
        user((ObjectNode) p.get("sender"), login);
        return p;
    }

    /**
     * pull_request.{@code action} (opened, synchronize, edited, reopened, ready_for_review, closed)
     * of pull request {@code number} with {@code body} at head commit {@code sha}, from GitHub's
     * example of that action (edited: the derived one, its body's change).
     */
    public ObjectNode pullRequest(String action, int number, String body, String sha) {
        ObjectNode p = fixture(switch (action) {
            case "synchronize" -> "pull_request.synchronize.with-installation";
            case "edited" -> "pull_request.edited.derived";
            default -> "pull_request.opened.with-installation";
        });
        p.put("action", action);
        p.put("number", number);
        ObjectNode pr = (ObjectNode) p.get("pull_request");
        pr.put("number", number);
        pr.put("body", body);
        pr.put("state", action.equals("closed") ? "closed" : "open");
        ((ObjectNode) pr.get("head")).put("sha", sha);
        return p;
    }

    /**
     * check_run.rerequested of the run GitHub's example describes, made this App's merge gate run
     * on {@code sha} for pull request {@code pull} (its external id as the App wrote it).
     */
    public ObjectNode rerequested(int pull, String sha, String externalId) {
        ObjectNode p = fixture("check_run.rerequested.with-installation");
        p.set("repository", fixture("pull_request.opened.with-installation").get("repository"));
        ObjectNode run = (ObjectNode) p.get("check_run");
        run.put("name", "AgentX Clarify");
        run.put("head_sha", sha);
        run.put("external_id", externalId);
        ((ObjectNode) run.get("app")).put("id", APP_ID);
        ((ObjectNode) run.get("check_suite")).put("head_sha", sha);
        return p;
    }

    /**
     * check_suite.rerequested ("Re-run all checks") of GitHub's example, made this App's suite of
     * {@code sha}, the head of pull request {@code pull}.
     */
    public ObjectNode rerequestedSuite(int pull, String sha) {
        ObjectNode p = fixture("check_suite.rerequested.with-installation");
        p.set("repository", fixture("pull_request.opened.with-installation").get("repository"));
        ObjectNode suite = (ObjectNode) p.get("check_suite");
        suite.put("head_sha", sha);
        ((ObjectNode) suite.get("app")).put("id", APP_ID);
        ObjectNode pr = (ObjectNode) suite.get("pull_requests").get(0);
        pr.put("number", pull);
        ((ObjectNode) pr.get("head")).put("sha", sha);
        return p;
    }

    public static void addIssueLabel(ObjectNode payload, String label) {
        payload.withArray("/issue/labels").addObject().put("name", label);
    }

    // ---- HTTP --------------------------------------------------------------------------------

    /** {@code serverTiming}: the response's Server-Timing header, or null. */
    public record Response(int status, String body, String serverTiming) {
    }

    public String nextDeliveryId() {
        return "00000000-0000-0000-0000-" + String.format("%012d", deliveries.incrementAndGet());
    }

    /** Sends a signed delivery with a fresh delivery id. */
    public Response deliver(String event, JsonNode payload) {
        return deliver(event, payload, nextDeliveryId());
    }

    public Response deliver(String event, JsonNode payload, String deliveryId) {
        return deliverTo(mode, event, payload, deliveryId);
    }

    public byte[] bytes(JsonNode payload) {
        try {
            return json.writeValueAsBytes(payload);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    public Response send(String method, byte[] body, Map<String, String> headers) {
        return request(method, mode.port(), GitHubSettings.DEFAULT_PATH, body, headers);
    }

    public Response request(String method, int port, String path, byte[] body, Map<String, String> headers) {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
                .method(method, body == null ? HttpRequest.BodyPublishers.noBody()
                        : HttpRequest.BodyPublishers.ofByteArray(body));
        headers.forEach(b::header);
        try {
            HttpResponse<String> r = http.send(b.build(), HttpResponse.BodyHandlers.ofString());
            return new Response(r.statusCode(), r.body(), r.headers().firstValue("Server-Timing").orElse(null));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    // ---- what happened -----------------------------------------------------------------------

    public Ledger ledger(int issue) {
        return mode.repository(REPO).ledgers().read(issue).orElseThrow(() -> new AssertionError("no ledger " + issue));
    }

    public boolean hasLedger(int issue) {
        return mode.repository(REPO).ledgers().read(issue).isPresent();
    }

    public List<LoggedRequest> requests(String method, String pathRegex) {
        return wiremock.findAll(new com.github.tomakehurst.wiremock.matching.RequestPatternBuilder(
                com.github.tomakehurst.wiremock.http.RequestMethod.fromString(method), urlPathMatching(pathRegex)));
    }

    /** Bodies of the comments posted on the issue, in order. */
    public List<String> comments(int issue) {
        return requests("POST", API_REPO + "/issues/" + issue + "/comments").stream()
                .map(r -> {
                    try {
                        return json.readTree(r.getBodyAsString()).path("body").asText();
                    } catch (IOException e) {
                        throw new UncheckedIOException(e);
                    }
                }).toList();
    }

    public List<String> reactions() {
        return requests("POST", API_REPO + "/issues/(comments/)?\\d+/reactions").stream()
                .map(r -> r.getBodyAsString()).toList();
    }

    public int allRequests() {
        return wiremock.getAllServeEvents().size();
    }

    /** The login of the App's bot user, as GitHub shows it on the App's comments. */
    public static final String APP_BOT = "agentx-test[bot]";

    /** GitHub as sync sees it: the app, its installation, and each issue with the comments the app posted. */
    public void serveToSync(Map<Integer, List<String>> posted) {
        serveToSync(API_REPO, posted);
    }

    /** As {@link #serveToSync(Map)}, for the repository as {@code apiRepo} ({@code /repos/OWNER/NAME}) names it. */
    public void serveToSync(String apiRepo, Map<Integer, List<String>> posted) {
        wiremock.stubFor(get(urlPathEqualTo("/app")).willReturn(okJson(
                "{\"id\":" + APP_ID + ",\"slug\":\"agentx-test\",\"name\":\"AgentX test\"}")));
        wiremock.stubFor(get(urlPathEqualTo(apiRepo + "/installation")).willReturn(okJson(
                "{\"id\":1,\"app_id\":" + APP_ID + ",\"account\":{\"login\":\"Codertocat\"}}")));
        wiremock.stubFor(get(urlPathEqualTo(apiRepo)).willReturn(okJson(
                "{\"id\":" + REPO.id() + ",\"name\":\"Hello-World\",\"full_name\":\"Codertocat/Hello-World\","
                        + "\"owner\":{\"login\":\"Codertocat\"},\"url\":\"" + wiremock.baseUrl() + apiRepo
                        + "\"}")));
        com.fasterxml.jackson.databind.node.ArrayNode issues = json.createArrayNode();
        long id = 9000;
        for (Map.Entry<Integer, List<String>> e : posted.entrySet()) {
            int issue = e.getKey();
            issues.addObject().put("id", 100 + issue).put("number", issue).put("comments", e.getValue().size());
            wiremock.stubFor(get(urlPathEqualTo(apiRepo + "/issues/" + issue)).willReturn(okJson(
                    "{\"id\":" + (100 + issue) + ",\"number\":" + issue + ",\"comments\":" + e.getValue().size()
                            + "}")));
            com.fasterxml.jackson.databind.node.ArrayNode list = json.createArrayNode();
            for (String body : e.getValue()) {
                ObjectNode c = list.addObject();
                c.put("id", id++);
                c.put("body", body);
                c.putObject("user").put("login", APP_BOT).put("type", "Bot");
            }
            wiremock.stubFor(get(urlPathEqualTo(apiRepo + "/issues/" + issue + "/comments"))
                    .atPriority(1).willReturn(okJson(list.toString())));
        }
        wiremock.stubFor(get(urlPathEqualTo(apiRepo + "/issues")).willReturn(okJson(issues.toString())));
    }

    @Override
    public void close() {
        if (mode != null) {
            mode.close();
        }
        replicas.forEach(GitHubMode::close);
        wiremock.stop();
    }

    /**
     * {@code agentx serve} as a process of its own against this rig's GitHub and data dir, on
     * ports of its choosing, its output in {@code log}: for the tests that kill it.
     */
    public Process serveProcess(Path log) throws IOException {
        ProcessBuilder pb = dev.agentx.clarify.support.Jvm.builder(dev.agentx.clarify.cli.Main.class, "serve");
        Map<String, String> env = pb.environment();
        env.remove("JAVA_TOOL_OPTIONS");
        env.put("GITHUB_APP_ID", String.valueOf(APP_ID));
        env.put("GITHUB_APP_PRIVATE_KEY", Keys.pkcs8Pem());
        env.put("GITHUB_WEBHOOK_SECRET", SECRET);
        env.put("GITHUB_API_URL", wiremock.baseUrl());
        env.put("AGENTX_DATA_DIR", data.toString());
        env.put("PORT", "0");
        env.put("AGENTX_MANAGEMENT_PORT", "0");
        env.put("AGENTX_REDELIVERY_INTERVAL", "0");
        env.remove("AGENTX_LOG_FORMAT");
        return pb.redirectErrorStream(true).redirectOutput(log.toFile()).start();
    }
}
