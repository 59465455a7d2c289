package dev.agentx.clarify.config;

import java.util.List;
import java.util.Locale;

/**
 * {@code [channels.<name>]} of the server's {@code agentx.toml}: an answer channel the operator
 * offers to repositories, which select it for a role with {@code channel = "server:<name>"} in
 * their {@code .github/agentx.toml}. The settings are those of {@code [agents.<role>]}.
 *
 * @param repositories who may select it: {@code owner/name} or {@code owner/*} (case-insensitive);
 *                     empty: every repository the app serves
 */
public record NamedChannel(String name, AgentSettings settings, List<String> repositories) {
    public NamedChannel {
        repositories = repositories == null ? List.of() : List.copyOf(repositories);
    }

    /** Whether the repository {@code owner/name} may select this channel. */
    public boolean offeredTo(String fullName) {
        if (repositories.isEmpty()) {
            return true;
        }
        String repo = fullName.toLowerCase(Locale.ROOT);
        for (String pattern : repositories) {
            String p = pattern.toLowerCase(Locale.ROOT);
            if (p.equals(repo) || (p.endsWith("/*") && repo.startsWith(p.substring(0, p.length() - 1)))) {
                return true;
            }
        }
        return false;
    }
}
