package dev.agentx.clarify.config;

import dev.agentx.clarify.protocol.Autonomy;
import dev.agentx.clarify.protocol.ClarifyException;
import dev.agentx.clarify.protocol.ErrorCode;
import dev.agentx.clarify.protocol.Roles;
import dev.agentx.clarify.toml.TomlFile;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.tomlj.TomlTable;

/** Loads a config file strictly: unknown keys and wrong types name the file, line and key. */
public final class ConfigLoader {
    private static final Set<String> TOP = Set.of("default_workflow", "autonomy", "roles", "maintainers", "agents");
    private static final Set<String> MAINTAINER_KEYS = Set.of("min_permission", "teams");
    private static final Set<String> AGENT_KEYS = Set.of("channel", "command", "timeout_seconds", "url",
            "secret_env", "token_env", "autonomy", "max_output_bytes", "retries", "escalate_after_failures");
    private static final Set<String> CHANNELS = Set.of("human", "command", "http", "auto");
    private static final Set<String> PERMISSIONS = Set.of("write", "maintain", "admin");

    private ConfigLoader() {
    }

    /** An optional {@code autonomy = "full" | "notify" | "approve"}; null when absent. */
    public static Autonomy autonomy(TomlFile toml, TomlTable table) {
        String value = toml.string(table, "autonomy", null);
        if (value == null) {
            return null;
        }
        if (!Autonomy.isValid(value)) {
            throw toml.error(table, "autonomy", "must be full, notify or approve, got '" + value + "'");
        }
        return Autonomy.fromWire(value);
    }

    /** A missing file means the defaults. */
    public static AgentxConfig load(Path file) {
        String text;
        try {
            text = Files.readString(file, StandardCharsets.UTF_8);
        } catch (NoSuchFileException e) {
            return AgentxConfig.defaults();
        } catch (IOException e) {
            throw new ClarifyException(ErrorCode.VALIDATION, file + ": cannot read config: " + e.getMessage(), e);
        }
        return parse(file.toString(), text);
    }

    public static AgentxConfig parse(String fileName, String text) {
        TomlFile toml = TomlFile.parse(fileName, text);
        TomlTable root = toml.root();
        toml.onlyKeys(root, "", TOP);
        String defaultWorkflow = toml.string(root, "default_workflow", "feature").trim();
        if (defaultWorkflow.isEmpty()) {
            throw toml.error(root, "default_workflow", "must not be empty");
        }
        Autonomy autonomy = autonomy(toml, root);

        Map<String, List<String>> roles = new LinkedHashMap<>();
        TomlTable rolesTable = toml.table(root, "roles");
        if (rolesTable != null) {
            for (String role : rolesTable.keySet()) {
                List<String> members = toml.strings(rolesTable, role);
                roles.put(Roles.canonical(role), members);
            }
        }

        Maintainers maintainers = Maintainers.defaults();
        TomlTable m = toml.table(root, "maintainers");
        if (m != null) {
            toml.onlyKeys(m, "[maintainers]", MAINTAINER_KEYS);
            String perm = toml.string(m, "min_permission", "write");
            if (!PERMISSIONS.contains(perm)) {
                throw toml.error(m, "min_permission", "must be write, maintain or admin, got '" + perm + "'");
            }
            List<String> teams = toml.strings(m, "teams");
            maintainers = new Maintainers(perm, teams);
        }

        Map<String, AgentSettings> agents = new LinkedHashMap<>();
        TomlTable agentsTable = toml.table(root, "agents");
        if (agentsTable != null) {
            for (String role : agentsTable.keySet()) {
                TomlTable a = toml.table(agentsTable, role);
                String where = "[agents." + role + "]";
                toml.onlyKeys(a, where, AGENT_KEYS);
                String channel = toml.string(a, "channel", "human");
                if (!CHANNELS.contains(channel)) {
                    throw toml.error(a, "channel", "must be human, command, http or auto, got '" + channel + "'");
                }
                List<String> command = toml.strings(a, "command");
                Integer timeout = toml.integer(a, "timeout_seconds", 1, 86_400);
                String url = toml.string(a, "url", null);
                if ("command".equals(channel) && (command == null || command.isEmpty())) {
                    throw toml.error(a, "channel", "is \"command\" but " + where
                            + " has no command = [\"program\", \"arg\"...]");
                }
                if ("http".equals(channel) && (url == null || url.isBlank())) {
                    throw toml.error(a, "channel", "is \"http\" but " + where + " has no url = \"http://...\"");
                }
                if (url != null && !url.startsWith("http://") && !url.startsWith("https://")) {
                    throw toml.error(a, "url", "must start with http:// or https://, got '" + url + "'");
                }
                Integer maxOutput = toml.integer(a, "max_output_bytes", 1, 16L * 1024 * 1024);
                Integer retries = toml.integer(a, "retries", 0, 10);
                Integer escalateAfter = toml.integer(a, "escalate_after_failures", 1, 100);
                agents.put(Roles.canonical(role), new AgentSettings(channel, command,
                        timeout == null ? AgentSettings.DEFAULT_TIMEOUT_SECONDS : timeout, url,
                        envName(toml, a, "secret_env"), envName(toml, a, "token_env"), autonomy(toml, a),
                        maxOutput == null ? AgentSettings.DEFAULT_MAX_OUTPUT_BYTES : maxOutput,
                        retries == null ? AgentSettings.DEFAULT_RETRIES : retries,
                        escalateAfter == null ? AgentSettings.DEFAULT_ESCALATE_AFTER_FAILURES : escalateAfter));
            }
        }
        return new AgentxConfig(defaultWorkflow, roles, maintainers, agents, autonomy);
    }

    /** The name of an environment variable (not its value: secrets stay out of config files). */
    private static String envName(TomlFile toml, TomlTable t, String key) {
        String name = toml.string(t, key, null);
        if (name != null && !name.matches("[A-Za-z_][A-Za-z0-9_]*")) {
            throw toml.error(t, key, "must name an environment variable (letters, digits, _), got '" + name
                    + "'; put the secret itself in that variable, not in this file");
        }
        return name;
    }
}
