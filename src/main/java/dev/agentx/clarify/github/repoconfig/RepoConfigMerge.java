package dev.agentx.clarify.github.repoconfig;

import dev.agentx.clarify.config.AgentxConfig;
import dev.agentx.clarify.config.ConfigLoader;
import dev.agentx.clarify.config.Maintainers;
import dev.agentx.clarify.toml.TomlFile;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.tomlj.TomlTable;

/**
 * A repository's {@code .github/agentx.toml} merged over the server's {@code agentx.toml}.
 *
 * <p>The repository file may set {@code default_workflow}, {@code [roles]} and {@code [maintainers]}
 * (checked as strictly as any config file). {@code [agents]} and {@code autonomy} stay server
 * configuration: anyone who can push to a repository could otherwise make the server run a
 * command, call a URL or let agents answer without a person's approval. Merge: a key the
 * repository file sets wins, key by key; {@code [roles]} role by role (a role it lists gets
 * exactly those members; other roles keep the server's); {@code [maintainers]} by key
 * ({@code min_permission}, {@code teams}); everything else is the server's.
 */
public final class RepoConfigMerge {
    public static final String PATH = ".github/agentx.toml";
    private static final Set<String> TOP = Set.of("default_workflow", "roles", "maintainers");
    private static final Set<String> SERVER_ONLY = Set.of("agents", "autonomy");

    private RepoConfigMerge() {
    }

    /** The merged config; a broken file throws VALIDATION naming {@code fileName}, the line and the key. */
    public static AgentxConfig merge(AgentxConfig server, String fileName, String text) {
        TomlFile toml = TomlFile.parse(fileName, text);
        TomlTable root = toml.root();
        for (String key : root.keySet()) {
            if (SERVER_ONLY.contains(key)) {
                throw toml.error(root, key, "is server configuration: set it in $AGENTX_DATA_DIR/agentx.toml "
                        + "(a repository may set default_workflow, [roles] and [maintainers])");
            }
        }
        toml.onlyKeys(root, "", TOP);
        AgentxConfig repo = ConfigLoader.parse(fileName, text);
        String workflow = root.contains("default_workflow") ? repo.defaultWorkflow() : server.defaultWorkflow();
        Map<String, List<String>> roles = new LinkedHashMap<>(server.roles());
        roles.putAll(repo.roles());
        Maintainers maintainers = server.maintainers();
        TomlTable m = root.getTable("maintainers");
        if (m != null) {
            maintainers = new Maintainers(
                    m.contains("min_permission") ? repo.maintainers().minPermission() : maintainers.minPermission(),
                    m.contains("teams") ? repo.maintainers().teams() : maintainers.teams());
        }
        return new AgentxConfig(workflow, roles, maintainers, server.agents(), server.autonomy());
    }
}
