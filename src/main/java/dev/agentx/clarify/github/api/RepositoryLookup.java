package dev.agentx.clarify.github.api;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.agentx.clarify.github.RepoRef;
import java.io.IOException;

/**
 * A repository as GitHub answers {@code GET /repos/{owner}/{repo}}: the owner and name it gives it
 * now (a renamed or transferred repository's old name leads to it) and its id, by which the server
 * keeps its state ({@link GitHubGateway#repositoryOf}).
 */
public final class RepositoryLookup {
    private static final ObjectMapper JSON = new ObjectMapper();

    private RepositoryLookup() {
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
}
