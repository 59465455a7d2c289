package dev.agentx.clarify.config;

import dev.agentx.clarify.protocol.Autonomy;
import dev.agentx.clarify.protocol.Roles;
import dev.agentx.clarify.workflow.Workflow;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The parsed {@code .agentx/config.toml} or {@code $AGENTX_DATA_DIR/agentx.toml} (docs/configuration.md),
 * or in GitHub Mode a repository's {@code .github/agentx.toml} merged over the latter.
 *
 * @param autonomy the top-level {@code autonomy}, or null when the file does not set it
 * @param labels {@code [labels]}: the label names GitHub Mode reads and sets
 * @param channels {@code [channels.<name>]}: answer channels the server offers to repositories
 * @param workflows workflows defined in the config itself, by name: only a repository's
 *                  {@code [workflows.<name>]} tables (config files keep workflows in files)
 * @param wake {@code [wake]}: per role, the mention that starts its agent again (GitHub Mode)
 * @param receivers {@code [[notify]]}: the receivers of notifications (GitHub Mode); a repository's
 *               own come after the server's
 */
public record AgentxConfig(String defaultWorkflow, Map<String, List<String>> roles, Maintainers maintainers,
                           Map<String, AgentSettings> agents, Autonomy autonomy, Labels labels,
                           Map<String, NamedChannel> channels, Map<String, Workflow> workflows,
                           Map<String, String> wake, List<NotifyReceiver> receivers) {
    public AgentxConfig {
        roles = Map.copyOf(roles);
        agents = Map.copyOf(agents);
        labels = labels == null ? Labels.defaults() : labels;
        channels = channels == null ? Map.of() : Map.copyOf(channels);
        workflows = workflows == null ? Map.of() : Map.copyOf(workflows);
        wake = wake == null ? Map.of() : Map.copyOf(wake);
        receivers = receivers == null ? List.of() : List.copyOf(receivers);
    }

    /** A config without {@code [wake]} and {@code [[notify]]}. */
    public AgentxConfig(String defaultWorkflow, Map<String, List<String>> roles, Maintainers maintainers,
                        Map<String, AgentSettings> agents, Autonomy autonomy, Labels labels,
                        Map<String, NamedChannel> channels, Map<String, Workflow> workflows) {
        this(defaultWorkflow, roles, maintainers, agents, autonomy, labels, channels, workflows, Map.of(), List.of());
    }

    public AgentxConfig(String defaultWorkflow, Map<String, List<String>> roles, Maintainers maintainers,
                        Map<String, AgentSettings> agents, Autonomy autonomy) {
        this(defaultWorkflow, roles, maintainers, agents, autonomy, Labels.defaults(), Map.of(), Map.of());
    }

    public AgentxConfig(String defaultWorkflow, Map<String, List<String>> roles, Maintainers maintainers,
                        Map<String, AgentSettings> agents) {
        this(defaultWorkflow, roles, maintainers, agents, null);
    }

    public static AgentxConfig defaults() {
        return new AgentxConfig("feature", Map.of(), Maintainers.defaults(), Map.of());
    }

    /**
     * The autonomy of answers from {@code role}'s automatic channel: {@code [agents.<role>] autonomy},
     * else the workflow's {@code autonomy} ({@code workflowAutonomy}, may be null), else the
     * top-level {@code autonomy}, else full.
     */
    public Autonomy autonomyFor(String role, Autonomy workflowAutonomy) {
        Autonomy a = agent(role).autonomy();
        if (a == null) {
            a = workflowAutonomy;
        }
        if (a == null) {
            a = autonomy;
        }
        return a == null ? Autonomy.FULL : a;
    }

    public AgentSettings agent(String role) {
        return agents.getOrDefault(role, AgentSettings.human());
    }

    /** Roles this config names, in [roles] or [agents.*]. */
    public Set<String> knownRoles() {
        Set<String> out = new LinkedHashSet<>(Roles.PRIORITY);
        out.addAll(roles.keySet());
        out.addAll(agents.keySet());
        return out;
    }
}
