package dev.agentx.clarify.config;

import dev.agentx.clarify.protocol.Roles;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/** The parsed {@code .agentx/config.toml} or {@code $AGENTX_DATA_DIR/agentx.toml} (PRODUCT.md section 5). */
public record AgentxConfig(String defaultWorkflow, Map<String, List<String>> roles, Maintainers maintainers,
                           Map<String, AgentSettings> agents) {
    public AgentxConfig {
        roles = Map.copyOf(roles);
        agents = Map.copyOf(agents);
    }

    public static AgentxConfig defaults() {
        return new AgentxConfig("feature", Map.of(), Maintainers.defaults(), Map.of());
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
