package dev.agentx.clarify.github.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import com.github.tomakehurst.wiremock.stubbing.ServeEvent;
import dev.agentx.clarify.github.GitHubSettings;
import dev.agentx.clarify.github.support.GitHubRig;
import dev.agentx.clarify.support.MutableClock;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * app-manifest.yml asks for what the App calls, derived from the calls themselves: the App runs
 * through every kind of delivery against WireMock, each request it made is named by its route, and
 * the permissions GitHub's REST reference requires for those routes must be exactly the manifest's.
 * A new call whose route has no row below, or needs a permission the manifest lacks, fails here.
 */
class AppPermissionsTest {
    /** Method and route -> the permission GitHub requires ("" for none: App-level or public). */
    static final Map<String, String> REQUIRED = Map.ofEntries(
            Map.entry("POST /app/installations/{installation_id}/access_tokens", ""),
            Map.entry("GET /app", ""),
            Map.entry("GET /rate_limit", ""),
            Map.entry("GET /app/hook/deliveries", ""),
            Map.entry("POST /app/hook/deliveries/{delivery_id}/attempts", ""),
            Map.entry("GET /repos/{owner}/{repo}", "metadata:read"),
            Map.entry("GET /repos/{owner}/{repo}/issues/{issue_number}", "issues:read"),
            Map.entry("GET /repos/{owner}/{repo}/issues/{issue_number}/comments", "issues:read"),
            Map.entry("POST /repos/{owner}/{repo}/issues/{issue_number}/comments", "issues:write"),
            Map.entry("GET /repos/{owner}/{repo}/issues/comments/{comment_id}", "issues:read"),
            Map.entry("PATCH /repos/{owner}/{repo}/issues/comments/{comment_id}", "issues:write"),
            Map.entry("POST /repos/{owner}/{repo}/issues/comments/{comment_id}/reactions", "issues:write"),
            Map.entry("POST /repos/{owner}/{repo}/issues/{issue_number}/reactions", "issues:write"),
            Map.entry("POST /repos/{owner}/{repo}/issues/{issue_number}/labels", "issues:write"),
            Map.entry("DELETE /repos/{owner}/{repo}/issues/{issue_number}/labels/{name}", "issues:write"),
            Map.entry("GET /repos/{owner}/{repo}/pulls/{pull_number}/comments", "pull_requests:read"),
            Map.entry("POST /repos/{owner}/{repo}/pulls/{pull_number}/comments/{comment_id}/replies",
                    "pull_requests:write"),
            Map.entry("DELETE /repos/{owner}/{repo}/pulls/comments/{comment_id}", "pull_requests:write"),
            Map.entry("GET /repos/{owner}/{repo}/collaborators/{username}/permission", "metadata:read"),
            Map.entry("GET /repos/{owner}/{repo}/contents/{path}", "contents:read"),
            Map.entry("GET /repos/{owner}/{repo}/commits/{ref}/check-runs", "checks:read"),
            Map.entry("POST /repos/{owner}/{repo}/check-runs", "checks:write"),
            Map.entry("PATCH /repos/{owner}/{repo}/check-runs/{check_run_id}", "checks:write"),
            Map.entry("GET /orgs/{org}/teams/{team_slug}/members", "members:read"));

    /** The events the handlers act on -> the permission GitHub requires to send them. */
    static final Map<String, String> EVENTS = Map.of("issue_comment", "issues:read", "issues", "issues:read",
            "repository", "metadata:read", "pull_request", "pull_requests:read", "check_run", "checks:read",
            "check_suite", "checks:read", "pull_request_review_comment", "pull_requests:read");

    @TempDir
    Path dir;

    @Test
    void theManifestAsksForExactlyThePermissionsOfTheCallsTheAppMakes() throws Exception {
        List<String> calls = new ArrayList<>();
        try (GitHubRig rig = new GitHubRig(dir.resolve("data"), MutableClock.at("2026-02-26T10:00:00Z"))) {
            rig.start();
            rig.deliver("issue_comment", rig.comment("eng", 1, "/clarify @architect Which database?"));
            rig.deliver("issue_comment", rig.comment("team-arch", 1, "/clarify answer CLR-1-001 Postgres"));
            rig.deliver("issue_comment", rig.comment("writer", 1, "/clarify escalate CLR-1-001 needs a decision"));
            rig.deliver("issue_comment", rig.comment("boss", 1, "/clarify resolve CLR-1-001 Postgres it is"));
            rig.deliver("issues", rig.labeled("eng", 2, "clarify:architect"));
            rig.deliver("issue_comment", rig.comment("eng", 3, "/clarify status"));
            rig.deliver("pull_request_review_comment", rig.reviewComment("eng", 4, 284312630L, 0,
                    "/clarify @architect Why this line?"));
            rig.clock.advance(Duration.ofMinutes(31));
            rig.deliver("issues", rig.issueEvent("closed", "eng", 2));
            String sha = "ec26c3e57ca3a959ca5aad62de7213c562f8c821";
            rig.deliver("pull_request", rig.pullRequest("opened", 4, "Fixes #1", sha));
            rig.deliver("check_run", rig.rerequested(4, sha, "agentx-gate:4:1"));
            rig.deliver("check_suite", rig.rerequestedSuite(4, sha));
            for (ServeEvent e : rig.wiremock.getAllServeEvents()) {
                calls.add(e.getRequest().getMethod().getName() + " " + ApiRoutes.of("", e.getRequest().getUrl()
                        .replaceAll("\\?.*", "")));
            }
        }
        Map<String, String> derived = new TreeMap<>();
        List<String> unknown = new ArrayList<>();
        for (String call : calls) {
            String permission = REQUIRED.get(call);
            if (permission == null) {
                unknown.add(call);
            } else if (!permission.isEmpty()) {
                String[] p = permission.split(":");
                derived.merge(p[0], p[1], (a, b) -> a.equals("write") || b.equals("write") ? "write" : "read");
            }
        }
        assertEquals(List.of(), unknown, "calls with no row in REQUIRED: look up the permission GitHub documents");
        JsonNode subscribed = new ObjectMapper(new YAMLFactory()).readTree(Path.of("app-manifest.yml").toFile())
                .get("default_events");
        for (JsonNode event : subscribed) {
            String[] p = EVENTS.get(event.asText()).split(":");
            derived.merge(p[0], p[1], (a, b) -> a.equals("write") || b.equals("write") ? "write" : "read");
        }
        assertTrue(calls.stream().anyMatch(c -> c.startsWith("PATCH") && c.contains("/check-runs/")),
                "the scenario updates a check run");
        assertTrue(calls.stream().anyMatch(c -> c.contains("/contents/")), "the scenario reads the repository's config");
        JsonNode manifest = new ObjectMapper(new YAMLFactory()).readTree(Path.of("app-manifest.yml").toFile());
        Map<String, String> asked = new TreeMap<>();
        manifest.get("default_permissions").fields().forEachRemaining(f -> asked.put(f.getKey(), f.getValue().asText()));
        assertEquals(derived, asked, "app-manifest.yml default_permissions vs the calls made: " + new java.util.TreeSet<>(calls));
        assertTrue(manifest.at("/hook_attributes/url").asText().endsWith(GitHubSettings.DEFAULT_PATH));
        List<String> events = new ArrayList<>();
        manifest.get("default_events").forEach(e -> events.add(e.asText()));
        assertEquals(List.of("issue_comment", "issues", "pull_request_review_comment", "repository", "pull_request", "check_run",
                "check_suite"), events,
                "the events the handlers act on");
        assertTrue(manifest.get("redirect_url").asText().endsWith("/callback"), "GitHub returns to agentx setup's page");
    }
}
