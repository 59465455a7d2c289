package dev.agentx.clarify.github.api;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.agentx.clarify.metrics.ServerMetrics;
import dev.agentx.clarify.protocol.Shorten;
import java.io.IOException;
import java.net.URI;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The requests {@link Hub4jGateway} makes without hub4j: the App's own calls (its deliveries, its
 * installation on a repository), a user token's {@code GET /user}, and the outbox's writes as an
 * installation. Each is timed by route and status like hub4j's calls, and fails as they do, so the
 * outbox reads every failure alike; the core rate limit each answer reports is kept per
 * installation.
 */
final class ApiRequests {
    private final String apiBase;
    private final String apiPath;
    private final ApiHttp http;
    private final ServerMetrics metrics;
    private final Clock clock;
    private final ObjectMapper json = new ObjectMapper();
    /** The core rate limit left per installation, as the answers to its requests last reported it. */
    private final Map<Long, Integer> writesRemaining = new ConcurrentHashMap<>();

    /** {@code apiBase}: GITHUB_API_URL without a trailing slash; {@code apiPath} its path, how routes are named. */
    ApiRequests(String apiBase, String apiPath, ApiHttp http, ServerMetrics metrics, Clock clock) {
        this.apiBase = apiBase;
        this.apiPath = apiPath;
        this.http = http;
        this.metrics = metrics;
        this.clock = clock;
    }

    /** The core rate limit left per installation, as the answers to its requests last reported it. */
    Map<Long, Integer> writesRemaining() {
        return writesRemaining;
    }

    /**
     * A request the gateway makes without hub4j (the App's own calls, the outbox's writes), with
     * {@code authorization}, {@code body} sent as JSON (none when null), timed like every other
     * call. Fails as a hub4j call of the gateway does: no answer (a reset, a timeout) with status
     * -1, which the outbox counts as uncertain; a rate limit (429, or 403 with {@code Retry-After},
     * {@code gh-limited-by}, no core requests left, or a message that says rate limit) with
     * GitHub's wait, or a minute; any other
     * status with its message. A 401 is left to the caller. {@code installation}: whose rate limit
     * the answer reports ({@link #writesRemaining}), null for the App's own calls.
     */
    ApiHttp.Answer exchange(String what, String method, String path, String authorization, Object body,
                                    Long installation) {
        URI uri = URI.create(apiBase + path);
        Map<String, List<String>> headers = Map.of("Accept", List.of("application/vnd.github+json"),
                "X-GitHub-Api-Version", List.of("2022-11-28"), "Authorization", List.of(authorization));
        byte[] bytes;
        try {
            bytes = body == null ? null : json.writeValueAsBytes(body);
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
        String route = ApiRoutes.of(apiPath, uri.getPath());
        long start = System.nanoTime();
        ApiHttp.Answer r;
        try {
            r = http.send(method, uri, headers, bytes, bytes == null ? null : "application/json");
        } catch (IOException e) {
            metrics.githubCall(method, route, "io_error", start);
            throw new GitHubApiException(what + ": no response: " + e, -1, null, false, e);
        }
        int status = r.status();
        metrics.githubCall(method, route, status / 100 == 2 ? "2xx" : String.valueOf(status), start);
        java.util.function.Function<String, String> header = r::header;
        String remaining = header.apply("X-RateLimit-Remaining");
        if (installation != null && remaining != null && header.apply("X-RateLimit-Limit") != null) {
            try {
                writesRemaining.put(installation, Integer.parseInt(remaining.strip()));
            } catch (NumberFormatException ignored) {
                // not a figure: keep the last one
            }
        }
        if (status / 100 == 2) {
            return r;
        }
        if (status == 429 || status == 403 && (header.apply("Retry-After") != null
                || header.apply("gh-limited-by") != null || "0".equals(remaining) || saysRateLimit(r))) {
            Duration d = RetryAfter.of(header, clock);
            Duration wait = d == null ? RetryAfter.SECONDARY_DEFAULT : d;
            throw new GitHubApiException(what + ": GitHub rate limit reached (HTTP " + status + "); retry in "
                    + wait.toSeconds() + " s", status, wait, true, null);
        }
        if (status == 404) {
            throw new GitHubApiException(what + ": HTTP 404 (not found, or the app lacks access)", 404, null, false,
                    null);
        }
        throw new GitHubApiException(what + ": HTTP " + status + " " + brief(text(r)), status,
                RetryAfter.of(header, clock), false, null);
    }

    /**
     * Whether a 403's message is GitHub's for a rate limit ("You have exceeded a secondary rate
     * limit", "API rate limit exceeded"): GitHub may answer a secondary limit with none of the
     * headers that say so, and a core limit left (X-RateLimit-Remaining above 0); taken for a
     * refusal, the effect would be given up for good.
     */
    private static boolean saysRateLimit(ApiHttp.Answer r) {
        return text(r).toLowerCase(java.util.Locale.ROOT).contains("rate limit");
    }

    /** An answer's body as text (GitHub's API answers in UTF-8). */
    static String text(ApiHttp.Answer r) {
        return new String(r.body(), java.nio.charset.StandardCharsets.UTF_8);
    }

    /** As {@link GitHubGateway#loginOf}: {@code GET /user} with the user's token, not as the App. */
    Optional<String> loginOf(String userToken) {
        try {
            ApiHttp.Answer r = exchange("who a user token belongs to", "GET", "/user", "Bearer " + userToken, null,
                    null);
            String login = json.readTree(r.body()).path("login").asText("");
            return login.isEmpty() ? Optional.empty() : Optional.of(login);
        } catch (GitHubApiException e) {
            if (e.status() == 401) {
                return Optional.empty();
            }
            throw e;
        } catch (IOException e) {
            throw new GitHubApiException("who a user token belongs to: GitHub's answer is not JSON", 200, null, false, e);
        }
    }

    /** {@code s} on one line, cut to 300 characters: GitHub's message in an error. */
    static String brief(String s) {
        if (s == null) {
            return "";
        }
        return Shorten.to(s.replaceAll("\\s+", " "), 300);
    }
}
