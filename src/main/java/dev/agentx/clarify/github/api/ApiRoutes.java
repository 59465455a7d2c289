package dev.agentx.clarify.github.api;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.regex.Pattern;

/**
 * The route of a GitHub API request, as GitHub's REST reference names it (for example
 * {@code /repos/{owner}/{repo}/issues/{issue_number}/comments}): the {@code route} label of the
 * API call histogram. Only the routes this app calls are named; any other path is {@code other},
 * so a label never carries a repository, an issue number or a login.
 */
final class ApiRoutes {
    static final String OTHER = "other";
    private static final String SEGMENT = "[^/]+";
    private static final Map<Pattern, String> ROUTES = new LinkedHashMap<>();

    static {
        route("/app", "/app");
        route("/app/installations/\\d+/access_tokens", "/app/installations/{installation_id}/access_tokens");
        route("/rate_limit", "/rate_limit");
        route("/user", "/user");
        route("/app/hook/deliveries", "/app/hook/deliveries");
        route("/app/hook/deliveries/\\d+/attempts", "/app/hook/deliveries/{delivery_id}/attempts");
        String repo = "/repos/" + SEGMENT + "/" + SEGMENT;
        route(repo, "/repos/{owner}/{repo}");
        route(repo + "/installation", "/repos/{owner}/{repo}/installation");
        route(repo + "/issues/\\d+", "/repos/{owner}/{repo}/issues/{issue_number}");
        route(repo + "/issues/\\d+/comments", "/repos/{owner}/{repo}/issues/{issue_number}/comments");
        route(repo + "/issues/comments/\\d+", "/repos/{owner}/{repo}/issues/comments/{comment_id}");
        route(repo + "/issues/comments/\\d+/reactions", "/repos/{owner}/{repo}/issues/comments/{comment_id}/reactions");
        route(repo + "/issues/\\d+/reactions", "/repos/{owner}/{repo}/issues/{issue_number}/reactions");
        route(repo + "/issues/\\d+/labels", "/repos/{owner}/{repo}/issues/{issue_number}/labels");
        route(repo + "/issues/\\d+/labels/.+", "/repos/{owner}/{repo}/issues/{issue_number}/labels/{name}");
        route(repo + "/pulls/\\d+/comments", "/repos/{owner}/{repo}/pulls/{pull_number}/comments");
        route(repo + "/pulls/\\d+/comments/\\d+/replies",
                "/repos/{owner}/{repo}/pulls/{pull_number}/comments/{comment_id}/replies");
        route(repo + "/pulls/comments/\\d+", "/repos/{owner}/{repo}/pulls/comments/{comment_id}");
        route(repo + "/collaborators/" + SEGMENT + "/permission", "/repos/{owner}/{repo}/collaborators/{username}/permission");
        route(repo + "/check-runs", "/repos/{owner}/{repo}/check-runs");
        route(repo + "/check-runs/\\d+", "/repos/{owner}/{repo}/check-runs/{check_run_id}");
        route(repo + "/commits/" + SEGMENT + "/check-runs", "/repos/{owner}/{repo}/commits/{ref}/check-runs");
        route(repo + "/contents(/.*)?", "/repos/{owner}/{repo}/contents/{path}");
        route("/orgs/" + SEGMENT + "/teams/" + SEGMENT + "/members", "/orgs/{org}/teams/{team_slug}/members");
    }

    private static void route(String regex, String template) {
        ROUTES.put(Pattern.compile(regex), template);
    }

    private ApiRoutes() {
    }

    /**
     * The route of {@code path}, a request's URL path; {@code prefix} is the path of
     * {@code GITHUB_API_URL} ({@code /api/v3} on GitHub Enterprise Server, empty on github.com).
     */
    static String of(String prefix, String path) {
        if (path == null) {
            return OTHER;
        }
        String p = !prefix.isEmpty() && path.startsWith(prefix + "/") ? path.substring(prefix.length()) : path;
        if (p.length() > 1 && p.endsWith("/")) {
            p = p.substring(0, p.length() - 1);
        }
        for (Map.Entry<Pattern, String> r : ROUTES.entrySet()) {
            if (r.getKey().matcher(p).matches()) {
                return r.getValue();
            }
        }
        return OTHER;
    }
}
