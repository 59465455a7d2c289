package dev.agentx.clarify.github.api;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

/** The route label of the GitHub API histogram: GitHub's route names, never a repository, issue or login. */
class ApiRoutesTest {
    @Test
    void pathsAreNamedByTheirRouteOnGitHubAndOnEnterpriseServer() {
        for (String prefix : new String[] {"", "/api/v3"}) {
            assertEquals("/repos/{owner}/{repo}/issues/{issue_number}/comments",
                    ApiRoutes.of(prefix, prefix + "/repos/Codertocat/Hello-World/issues/12/comments"));
            assertEquals("/repos/{owner}/{repo}/issues/comments/{comment_id}/reactions",
                    ApiRoutes.of(prefix, prefix + "/repos/o/r/issues/comments/5001/reactions"));
            assertEquals("/repos/{owner}/{repo}/issues/{issue_number}/labels/{name}",
                    ApiRoutes.of(prefix, prefix + "/repos/o/r/issues/3/labels/needs%20clarification"));
            assertEquals("/repos/{owner}/{repo}/collaborators/{username}/permission",
                    ApiRoutes.of(prefix, prefix + "/repos/o/r/collaborators/octocat/permission"));
            assertEquals("/repos/{owner}/{repo}/contents/{path}",
                    ApiRoutes.of(prefix, prefix + "/repos/o/r/contents/.github/agentx.toml"));
            assertEquals("/app/installations/{installation_id}/access_tokens",
                    ApiRoutes.of(prefix, prefix + "/app/installations/42/access_tokens"));
            assertEquals("/orgs/{org}/teams/{team_slug}/members",
                    ApiRoutes.of(prefix, prefix + "/orgs/acme/teams/architects/members"));
        }
    }

    @Test
    void anyOtherPathIsOther() {
        assertEquals(ApiRoutes.OTHER, ApiRoutes.of("", "/repos/o/r/pulls/1"));
        assertEquals(ApiRoutes.OTHER, ApiRoutes.of("", "/o/r/main/.github/agentx.toml")); // a raw download
        assertEquals(ApiRoutes.OTHER, ApiRoutes.of("/api/v3", "/repos/o/r/issues/x/comments"));
        assertEquals(ApiRoutes.OTHER, ApiRoutes.of("", null));
    }
}
