package dev.agentx.clarify.github.api;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.agentx.clarify.github.RepoRef;
import java.io.IOException;
import java.net.URI;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * A repository as an installation of the App sees it, {@code GET /repos/{owner}/{repo}} with the
 * installation's token: the owner and name GitHub gives it now (a renamed or transferred
 * repository's old name leads to it) and its id, by which the server keeps its state. Empty when
 * the installation cannot see it (404). Made over {@link Hub4jGateway}'s installation tokens; the
 * gateway can answer {@link #read} from its own request as well.
 */
public final class RepositoryLookup implements AutoCloseable {
    private static final ObjectMapper JSON = new ObjectMapper();
    private final Hub4jGateway tokens;
    private final ApiHttp http;
    private final String apiBase;

    public RepositoryLookup(String apiUrl, Hub4jGateway tokens, Duration timeout) {
        this.tokens = tokens;
        this.http = new ApiHttp(timeout);
        this.apiBase = apiUrl.replaceAll("/+$", "");
    }

    /** {@code repo} as GitHub names it now, with its id; empty when installation {@code installation} cannot see it. */
    public Optional<RepoRef> repositoryOf(long installation, RepoRef repo) {
        String what = "repository " + repo + " as installation " + installation + " sees it";
        ApiHttp.Answer r;
        try {
            URI uri = URI.create(apiBase + "/repos/" + segment(repo.owner()) + "/" + segment(repo.name()));
            r = http.send("GET", uri, Map.of("Accept", List.of("application/vnd.github+json"),
                    "X-GitHub-Api-Version", List.of("2022-11-28"),
                    "Authorization", List.of("token " + tokens.token(installation))), null, null);
        } catch (GitHubApiException e) {
            throw e;
        } catch (IOException e) {
            throw new GitHubApiException(what + ": no response: " + e, -1, null, false, e);
        }
        if (r.status() == 404) {
            return Optional.empty();
        }
        if (r.status() / 100 != 2) {
            throw new GitHubApiException(what + ": HTTP " + r.status(), r.status(), null, r.status() == 429, null);
        }
        return Optional.of(read(what, r.body()));
    }

    /** The owner, name and id in GitHub's answer for a repository; a clear failure when they are missing. */
    public static RepoRef read(String what, byte[] body) {
        try {
            JsonNode n = JSON.readTree(body);
            long id = n.path("id").asLong(0);
            String owner = n.path("owner").path("login").asText("");
            String name = n.path("name").asText("");
            if (id <= 0 || owner.isEmpty() || name.isEmpty()) {
                throw new GitHubApiException(what + ": no id, owner or name in GitHub's answer", 200, null, false,
                        null);
            }
            return new RepoRef(owner, name, id);
        } catch (IOException | IllegalArgumentException e) {
            throw new GitHubApiException(what + ": GitHub's answer is not a repository: " + e.getMessage(), 200, null,
                    false, e);
        }
    }

    private static String segment(String s) {
        return URLEncoder.encode(s, StandardCharsets.UTF_8).replace("+", "%20");
    }

    @Override
    public void close() throws IOException {
        http.close();
    }
}
