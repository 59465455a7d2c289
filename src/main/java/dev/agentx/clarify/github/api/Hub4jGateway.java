package dev.agentx.clarify.github.api;

import static dev.agentx.clarify.github.api.ApiRequests.brief;
import static dev.agentx.clarify.github.api.ApiRequests.text;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.agentx.clarify.github.RepoRef;
import dev.agentx.clarify.github.auth.AppJwt;
import dev.agentx.clarify.metrics.ServerMetrics;
import java.io.FileNotFoundException;
import java.io.IOException;
import java.io.StringReader;
import java.net.URI;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Date;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import org.kohsuke.github.GHAppInstallationToken;
import org.kohsuke.github.GHContent;
import org.kohsuke.github.GHEventPayload;
import org.kohsuke.github.GHIOException;
import org.kohsuke.github.GHException;
import org.kohsuke.github.GHIssueComment;
import org.kohsuke.github.GitHub;
import org.kohsuke.github.GitHubAbuseLimitHandler;
import org.kohsuke.github.GitHubBuilder;
import org.kohsuke.github.GitHubRateLimitHandler;
import org.kohsuke.github.HttpException;
import org.kohsuke.github.ReactionContent;
import org.kohsuke.github.connector.GitHubConnectorResponse;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@link GitHubGateway} with hub4j github-api, pointed at {@code GITHUB_API_URL}. The app
 * authenticates with its JWT; each installation with an installation token, created on first use
 * and refreshed five minutes before it expires. Rate limits are not waited out on the calling
 * thread: they fail fast with GitHub's wait, which the outbox honours. Every call gives up after
 * {@link #DEFAULT_TIMEOUT} (connect, and again waiting for each part of the answer), over one
 * {@link ApiHttp} client whose calls run on the calling thread ({@link ApiHttpConnector} for hub4j's).
 * A 401 on an installation's call (its token expired early or was revoked) drops the cached token
 * and tries the call once more with a new one; a 401 means nothing was carried out.
 *
 * <p>The outbox's writes (a comment, a reaction, labels) are plain requests with the installation's
 * token ({@link #write}), read for the one number a comment's answer gives: bound as hub4j objects,
 * each cost a made-up event payload parsed to bind them and its answer parsed into a whole object,
 * about half of a sender's CPU per effect. They fail as hub4j's calls do (the same statuses, rate
 * limits and waits), and hub4j makes the reads: permissions, teams, files, comment listings.
 * Objects for those are bound from a minimal webhook-shaped payload ({@link GitHub#parseEventPayload}),
 * so reading needs no extra GET to look them up first.
 */
public final class Hub4jGateway implements GitHubGateway {
    static final Duration REFRESH_BEFORE = Duration.ofMinutes(5);
    public static final Duration DEFAULT_TIMEOUT = Duration.ofSeconds(30);
    private static final Logger LOG = LoggerFactory.getLogger(Hub4jGateway.class);

    private final String apiUrl;
    private final ApiHttpConnector connector;
    private final Clock clock;
    private final GitHub app;
    private final ObjectMapper json = new ObjectMapper();
    private final AppJwt jwt;
    private final ServerMetrics metrics;
    private final ApiHttp http;
    private final Map<Long, GitHub> clients = new ConcurrentHashMap<>();
    private final Map<Long, Token> tokens = new ConcurrentHashMap<>();
    /** The requests made without hub4j: the App's own calls and the outbox's writes. */
    private final ApiRequests requests;

    private record Token(String value, Instant refreshAt) {
    }

    /** {@code metrics}: times each request by route and status ({@link ServerMetrics#GITHUB_CALL}). */
    public Hub4jGateway(String apiUrl, AppJwt jwt, Clock clock, ServerMetrics metrics) {
        this(apiUrl, jwt, clock, metrics, DEFAULT_TIMEOUT);
    }

    /** {@code timeout}: how long a call may take to connect, and again to answer. */
    public Hub4jGateway(String apiUrl, AppJwt jwt, Clock clock, ServerMetrics metrics, Duration timeout) {
        this.apiUrl = apiUrl;
        this.clock = clock;
        this.jwt = jwt;
        this.metrics = metrics;
        this.http = new ApiHttp(timeout);
        String apiBase = apiUrl.replaceAll("/+$", "");
        String apiPath = URI.create(apiBase).getPath();
        this.requests = new ApiRequests(apiBase, apiPath, http, metrics, clock);
        this.connector = new ApiHttpConnector(http, apiPath, metrics::githubCall);
        try {
            this.app = builder().withAuthorizationProvider(() -> "Bearer " + jwt.token()).build();
        } catch (IOException e) {
            throw new IllegalStateException("cannot set up the GitHub client for " + apiUrl + ": " + e.getMessage(), e);
        }
    }

    private GitHubBuilder builder() {
        return new GitHubBuilder().withEndpoint(apiUrl).withConnector(connector)
                .withRateLimitHandler(new GitHubRateLimitHandler() {
                    @Override
                    public void onError(GitHubConnectorResponse r) throws IOException {
                        throw new LimitReached(r, clock);
                    }
                })
                .withAbuseLimitHandler(new GitHubAbuseLimitHandler() {
                    @Override
                    public void onError(GitHubConnectorResponse r) throws IOException {
                        throw new LimitReached(r, clock);
                    }
                });
    }

    @Override
    public DeliveryPage deliveries(String cursor) {
        String path = "/app/hook/deliveries?per_page=100" + (cursor == null ? ""
                : "&cursor=" + java.net.URLEncoder.encode(cursor, java.nio.charset.StandardCharsets.UTF_8));
        ApiHttp.Answer r = requests.exchange("list the App's deliveries", "GET", path,
                "Bearer " + jwt.token(), null, null);
        try {
            List<Delivery> out = new java.util.ArrayList<>();
            for (JsonNode d : json.readTree(r.body())) {
                out.add(new Delivery(d.path("id").asLong(), d.path("guid").asText(""),
                        Instant.parse(d.path("delivered_at").asText()), d.path("redelivery").asBoolean(false),
                        d.path("status_code").asInt(0), d.path("event").asText(""),
                        d.path("action").isTextual() ? d.path("action").asText() : null));
            }
            return new DeliveryPage(out, nextCursor(r.header("Link")));
        } catch (IOException | RuntimeException e) {
            throw new GitHubApiException("GitHub's list of deliveries could not be read: " + e.getMessage(), 200, null,
                    false, e);
        }
    }

    @Override
    public void redeliver(long id) {
        requests.exchange("redeliver delivery " + id, "POST", "/app/hook/deliveries/" + id + "/attempts",
                "Bearer " + jwt.token(), null, null);
    }

    /** The {@code cursor} of the {@code rel="next"} link, or null on the last page. */
    static String nextCursor(String link) {
        if (link == null) {
            return null;
        }
        for (String part : link.split(",")) {
            if (part.contains("rel=\"next\"")) {
                java.util.regex.Matcher m = java.util.regex.Pattern.compile("[?&]cursor=([^&>]+)").matcher(part);
                return m.find() ? java.net.URLDecoder.decode(m.group(1), java.nio.charset.StandardCharsets.UTF_8) : null;
            }
        }
        return null;
    }

    /** Thrown from hub4j's limit handlers; a GHIOException so hub4j passes it through unchanged. */
    static final class LimitReached extends GHIOException {
        private static final long serialVersionUID = 1L;
        final int status;
        final transient Duration wait;

        LimitReached(GitHubConnectorResponse r, Clock clock) {
            super("GitHub rate limit reached (HTTP " + r.statusCode() + ") on " + r.request().url());
            this.status = r.statusCode();
            Duration d = RetryAfter.of(r::header, clock);
            this.wait = d == null ? RetryAfter.SECONDARY_DEFAULT : d;
        }
    }

    @FunctionalInterface
    private interface Call<T> {
        T run() throws IOException;
    }

    /** A call with the installation's token: on a 401, once more with a new token. */
    private <T> T call(long installation, String what, Call<T> call) {
        try {
            return call(what, call);
        } catch (GitHubApiException e) {
            if (e.status() != 401) {
                throw e;
            }
            LOG.warn("{}: HTTP 401, the token of installation {} is no longer valid; trying once with a new one",
                    what, installation);
            tokens.remove(installation);
            return call(what, call);
        }
    }

    private <T> T call(String what, Call<T> call) {
        try {
            return call.run();
        } catch (IOException e) {
            throw failure(what, e);
        } catch (GHException e) {
            // a paged list (an issue's comments, a team's members) fails unchecked, around the I/O failure
            throw e.getCause() instanceof IOException io ? failure(what, io)
                    : new GitHubApiException(what + ": " + e.getMessage(), -1, null, false, e);
        }
    }

    /**
     * The response's headers, or none: hub4j's accessor fails on an exception it made without them
     * (an answer it could not read, such as a list where an object belongs).
     */
    private static Map<String, List<String>> headers(HttpException e) {
        try {
            return e.getResponseHeaderFields();
        } catch (NullPointerException none) {
            return Map.of();
        }
    }

    /** The failure of a call, by what hub4j threw: a status, no response, or a rate limit. */
    private GitHubApiException failure(String what, IOException e) {
        if (e instanceof LimitReached l) {
            return new GitHubApiException(what + ": " + l.getMessage() + "; retry in " + l.wait.toSeconds() + " s",
                    l.status, l.wait, true, l);
        }
        if (e instanceof HttpException h) {
            int status = h.getResponseCode();
            if (status <= 0) {
                // no response at all (connection reset, empty response): hub4j has no headers for it
                return new GitHubApiException(what + ": no response: " + brief(h.getMessage()), -1, null, false, h);
            }
            return new GitHubApiException(what + ": HTTP " + status + " " + brief(h.getMessage()), status,
                    RetryAfter.of(headers(h), clock), false, h);
        }
        if (e instanceof FileNotFoundException) {
            return new GitHubApiException(what + ": HTTP 404 (not found, or the app lacks access)", 404, null, false, e);
        }
        return new GitHubApiException(what + ": " + e, -1, null, false, e);
    }

    /**
     * The core rate limit left per installation, as GitHub last reported it in response headers
     * (no request is made); installations not called yet are absent.
     */
    public Map<Long, Integer> rateLimitRemaining() {
        Map<Long, Integer> out = new TreeMap<>();
        clients.forEach((installation, client) -> {
            int remaining = client.lastRateLimit().getCore().getRemaining();
            if (remaining >= 0 && client.lastRateLimit().getCore().getLimit() > 0) {
                out.put(installation, remaining);
            }
        });
        out.putAll(requests.writesRemaining()); // most calls are writes: theirs is the latest figure
        return out;
    }

    // ---- installation tokens -------------------------------------------------------------------

    private GitHub client(long installation) {
        return clients.computeIfAbsent(installation, id -> {
            try {
                return builder().withAuthorizationProvider(() -> "token " + token(id)).build();
            } catch (IOException e) {
                throw new GitHubApiException("cannot set up the client of installation " + id, -1, null, false, e);
            }
        });
    }

    /** The installation's token, created or refreshed when it is within five minutes of expiring. */
    String token(long installation) throws IOException {
        synchronized (tokens) {
            Token t = tokens.get(installation);
            if (t != null && clock.instant().isBefore(t.refreshAt())) {
                return t.value();
            }
            ObjectNode payload = json.createObjectNode();
            payload.putObject("installation").put("id", installation);
            GHEventPayload.Ping ping = app.parseEventPayload(new StringReader(payload.toString()), GHEventPayload.Ping.class);
            GHAppInstallationToken created = ping.getInstallation().createToken().create();
            Date expires = created.getExpiresAt();
            Instant refreshAt = expires == null ? clock.instant().plus(Duration.ofMinutes(10))
                    : expires.toInstant().minus(REFRESH_BEFORE);
            tokens.put(installation, new Token(created.getToken(), refreshAt));
            return created.getToken();
        }
    }

    // ---- bound objects ---------------------------------------------------------------------------

    private GHEventPayload.IssueComment bind(long installation, RepoRef repo, int issue, long commentId)
            throws IOException {
        ObjectNode payload = json.createObjectNode();
        ObjectNode r = payload.putObject("repository");
        r.put("name", repo.name());
        r.put("full_name", repo.fullName());
        r.put("url", apiUrl + "/repos/" + repo.fullName());
        r.putObject("owner").put("login", repo.owner());
        payload.putObject("issue").put("number", issue);
        payload.putObject("comment").put("id", commentId);
        return client(installation).parseEventPayload(new StringReader(payload.toString()),
                GHEventPayload.IssueComment.class);
    }

    private static ReactionContent reaction(String content) {
        for (ReactionContent c : ReactionContent.values()) {
            if (c.getContent().equals(content)) {
                return c;
            }
        }
        throw new IllegalArgumentException("unknown reaction '" + content + "'");
    }

    // ---- writes ----------------------------------------------------------------------------------

    private static String repoPath(RepoRef repo) {
        return "/repos/" + segment(repo.owner()) + "/" + segment(repo.name());
    }

    private static String issuePath(RepoRef repo, int issue) {
        return repoPath(repo) + "/issues/" + issue;
    }

    /** {@code s} as one segment of a URL's path (a label may hold spaces, slashes, any character). */
    private static String segment(String s) {
        return java.net.URLEncoder.encode(s, java.nio.charset.StandardCharsets.UTF_8).replace("+", "%20");
    }

    /** A write as the installation ({@link ApiRequests#exchange}); answers the response's body. */
    private String write(long installation, String what, String method, String path, Object body) throws IOException {
        return text(requests.exchange(what, method, path, "token " + token(installation), body, installation));
    }

    // ---- the calls -------------------------------------------------------------------------------

    @Override
    public long createComment(long installation, RepoRef repo, int issue, String body) {
        String what = "comment on " + repo + "#" + issue;
        return call(installation, what, () -> {
            String answer = write(installation, what, "POST", issuePath(repo, issue) + "/comments", Map.of("body", body));
            JsonNode id = json.readTree(answer).path("id");
            if (!id.canConvertToLong()) {
                throw new GitHubApiException(what + ": GitHub's answer names no comment id: " + brief(answer), 200,
                        null, false, null);
            }
            return id.asLong();
        });
    }

    @Override
    public List<Long> commentsContaining(long installation, RepoRef repo, int issue, String text, Instant since) {
        return call(installation, "list comments of " + repo + "#" + issue, () -> {
            List<Long> ids = new java.util.ArrayList<>();
            for (GHIssueComment c : bind(installation, repo, issue, 0).getIssue().queryComments()
                    .since(Date.from(since)).list()) {
                if (c.getBody() != null && c.getBody().contains(text)) {
                    ids.add(c.getId());
                }
            }
            ids.sort(null); // ids grow with creation
            return ids;
        });
    }

    @Override
    public void deleteComment(long installation, RepoRef repo, long commentId) {
        String what = "delete comment " + commentId + " on " + repo;
        call(installation, what, () -> write(installation, what, "DELETE", repoPath(repo) + "/issues/comments/"
                + commentId, null));
    }

    @Override
    public long replyInReviewThread(long installation, RepoRef repo, int pull, long thread, String body) {
        String what = "reply in review thread " + thread + " of " + repo + "#" + pull;
        return call(installation, what, () -> {
            String answer = write(installation, what, "POST", repoPath(repo) + "/pulls/" + pull + "/comments/"
                    + thread + "/replies", Map.of("body", body));
            JsonNode id = json.readTree(answer).path("id");
            if (!id.canConvertToLong()) {
                throw new GitHubApiException(what + ": GitHub's answer names no comment id: " + brief(answer), 200,
                        null, false, null);
            }
            return id.asLong();
        });
    }

    /** At most this many review comments a page: GitHub's largest page. */
    private static final int REVIEW_PAGE = 100;

    @Override
    public List<Long> reviewCommentsContaining(long installation, RepoRef repo, int pull, String text, Instant since) {
        String what = "list review comments of " + repo + "#" + pull;
        return call(installation, what, () -> {
            List<Long> ids = new java.util.ArrayList<>();
            for (int page = 1; ; page++) {
                String answer = write(installation, what, "GET", repoPath(repo) + "/pulls/" + pull + "/comments?since="
                        + segment(since.toString()) + "&per_page=" + REVIEW_PAGE + "&page=" + page, null);
                JsonNode list = json.readTree(answer);
                if (!list.isArray()) {
                    throw new GitHubApiException(what + ": GitHub's answer is no list: " + brief(answer), 200, null,
                            false, null);
                }
                for (JsonNode c : list) {
                    if (c.path("body").asText("").contains(text) && c.path("id").canConvertToLong()) {
                        ids.add(c.path("id").asLong());
                    }
                }
                if (list.size() < REVIEW_PAGE) {
                    break;
                }
            }
            ids.sort(null); // ids grow with creation
            return ids;
        });
    }

    @Override
    public void deleteReviewComment(long installation, RepoRef repo, long commentId) {
        String what = "delete review comment " + commentId + " on " + repo;
        call(installation, what, () -> write(installation, what, "DELETE", repoPath(repo) + "/pulls/comments/"
                + commentId, null));
    }

    @Override
    public void reactToComment(long installation, RepoRef repo, int issue, long commentId, String content) {
        String what = "react to comment " + commentId + " on " + repo;
        call(installation, what, () -> write(installation, what, "POST", repoPath(repo) + "/issues/comments/"
                + commentId + "/reactions", Map.of("content", reaction(content).getContent())));
    }

    @Override
    public void reactToIssue(long installation, RepoRef repo, int issue, String content) {
        String what = "react to " + repo + "#" + issue;
        call(installation, what, () -> write(installation, what, "POST", issuePath(repo, issue) + "/reactions",
                Map.of("content", reaction(content).getContent())));
    }

    @Override
    public void addLabels(long installation, RepoRef repo, int issue, List<String> labels) {
        String what = "add labels " + labels + " to " + repo + "#" + issue;
        call(installation, what, () -> write(installation, what, "POST", issuePath(repo, issue) + "/labels",
                Map.of("labels", List.copyOf(labels))));
    }

    @Override
    public void removeLabel(long installation, RepoRef repo, int issue, String label) {
        try {
            String what = "remove label " + label + " from " + repo + "#" + issue;
            call(installation, what, () -> write(installation, what, "DELETE", issuePath(repo, issue) + "/labels/"
                    + segment(label), null));
        } catch (GitHubApiException e) {
            if (!e.notFound()) {
                throw e;
            }
        }
    }

    @Override
    public String permission(long installation, RepoRef repo, String login) {
        return call(installation, "permission of " + login + " on " + repo, () -> {
            var type = bind(installation, repo, 1, 0).getRepository().getPermission(login);
            return type == null ? "none" : type.name().toLowerCase(Locale.ROOT);
        });
    }

    @Override
    public Optional<RepoFile> fileOnDefaultBranch(long installation, RepoRef repo, String path) {
        try {
            return call("read " + path + " of " + repo, () -> {
                GHContent c = bind(installation, repo, 1, 0).getRepository().getFileContent(path);
                try (var in = c.read()) {
                    return Optional.of(new RepoFile(c.getSha(), new String(in.readAllBytes(),
                            java.nio.charset.StandardCharsets.UTF_8)));
                }
            });
        } catch (GitHubApiException e) {
            if (e.notFound()) {
                return Optional.empty();
            }
            throw e;
        }
    }

    /**
     * The team's members, at {@code GET /orgs/{org}/teams/{team_slug}/members}, a hundred a page. The
     * pages are asked for by number on that path: the {@code next} link GitHub answers with names
     * the team by ids on a path its REST description leaves out; it only says whether there is one.
     */
    @Override
    public java.util.OptionalLong installationOf(RepoRef repo) {
        try {
            ApiHttp.Answer r = requests.exchange("the App's installation on " + repo, "GET", repoPath(repo) + "/installation",
                    "Bearer " + jwt.token(), null, null);
            long id = json.readTree(r.body()).path("id").asLong(0);
            if (id <= 0) {
                throw new GitHubApiException("the App's installation on " + repo + ": no id in GitHub's answer", 200,
                        null, false, null);
            }
            return java.util.OptionalLong.of(id);
        } catch (GitHubApiException e) {
            if (e.notFound()) {
                return java.util.OptionalLong.empty();
            }
            throw e;
        } catch (IOException e) {
            throw new GitHubApiException("the App's installation on " + repo + ": GitHub's answer is not JSON", 200,
                    null, false, e);
        }
    }

    @Override
    public Optional<RepoRef> repositoryOf(long installation, RepoRef repo) {
        String what = "repository " + repo + " as installation " + installation + " sees it";
        try {
            return Optional.of(RepositoryLookup.read(what, call(installation, what, () -> requests.exchange(what,
                    "GET", repoPath(repo), "token " + token(installation), null, installation).body())));
        } catch (GitHubApiException e) {
            if (e.notFound()) {
                return Optional.empty();
            }
            throw e;
        }
    }

    @Override
    public Optional<String> loginOf(String userToken) {
        return requests.loginOf(userToken);
    }

    @Override
    public Set<String> teamMembers(long installation, String org, String slug) {
        String what = "members of team @" + org + "/" + slug;
        return call(installation, what, () -> {
            Set<String> out = new HashSet<>();
            for (int page = 1; ; page++) {
                ApiHttp.Answer r = requests.exchange(what, "GET", "/orgs/" + segment(org) + "/teams/" + segment(slug)
                        + "/members?per_page=100&page=" + page, "token " + token(installation), null, installation);
                JsonNode members = json.readTree(r.body());
                if (!members.isArray()) {
                    throw new GitHubApiException(what + ": GitHub's answer is no list: " + brief(text(r)), r.status(),
                            null, false, null);
                }
                members.forEach(u -> out.add(u.path("login").asText().toLowerCase(Locale.ROOT)));
                String link = r.header("Link");
                if (members.isEmpty() || link == null || !link.contains("rel=\"next\"")) {
                    return out;
                }
            }
        });
    }

    // ---- the merge gate's check runs ---------------------------------------------------------------

    @Override
    public List<CheckRunSeen> checkRuns(long installation, RepoRef repo, String sha, String name) {
        String what = "check runs of " + repo + "@" + sha;
        return call(installation, what, () -> {
            String answer = write(installation, what, "GET", repoPath(repo) + "/commits/" + segment(sha)
                    + "/check-runs?check_name=" + segment(name) + "&filter=all&per_page=100", null);
            List<CheckRunSeen> out = new java.util.ArrayList<>();
            for (JsonNode r : json.readTree(answer).path("check_runs")) {
                JsonNode external = r.path("external_id");
                out.add(new CheckRunSeen(r.path("id").asLong(), external.isTextual() ? external.asText() : null));
            }
            return out;
        });
    }

    @Override
    public long createCheckRun(long installation, RepoRef repo, CheckRunOutput run) {
        String what = "create check run on " + repo + "@" + run.headSha();
        return call(installation, what, () -> {
            Map<String, Object> body = run.requestBody();
            body.put("name", run.name());
            body.put("head_sha", run.headSha());
            String answer = write(installation, what, "POST", repoPath(repo) + "/check-runs", body);
            JsonNode id = json.readTree(answer).path("id");
            if (!id.canConvertToLong()) {
                throw new GitHubApiException(what + ": GitHub's answer names no check run id: " + brief(answer), 200,
                        null, false, null);
            }
            return id.asLong();
        });
    }

    @Override
    public void updateCheckRun(long installation, RepoRef repo, long id, CheckRunOutput run) {
        String what = "update check run " + id + " on " + repo;
        call(installation, what, () -> write(installation, what, "PATCH", repoPath(repo) + "/check-runs/" + id,
                run.requestBody()));
    }
}
