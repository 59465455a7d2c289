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
import java.util.Optional;
import java.util.Set;
import org.tomlj.TomlTable;

/**
 * Loads a config file strictly: unknown keys and wrong types name the file, line and key. Its
 * parts ({@link #roles}, {@link #maintainers}, {@link #labels}, {@link #agentSettings}) are also how
 * a repository's {@code .github/agentx.toml} is read in GitHub Mode.
 */
public final class ConfigLoader {
    private static final Set<String> TOP = Set.of("default_workflow", "autonomy", "roles", "maintainers", "agents",
            "labels", "channels", "wake", "notify");
    private static final Set<String> MAINTAINER_KEYS = Set.of("min_permission", "teams");
    /** The keys of {@code [agents.<role>]}. */
    public static final Set<String> AGENT_KEYS = Set.of("channel", "command", "timeout_seconds", "url",
            "secret_env", "token_env", "autonomy", "max_output_bytes", "retries", "escalate_after_failures");
    private static final Set<String> CHANNEL_KEYS;
    private static final Set<String> CHANNELS = Set.of("human", "command", "http", "auto");
    private static final Set<String> PERMISSIONS = Set.of("write", "maintain", "admin");
    /** A named channel's name ({@code [channels.<name>]}). */
    public static final String CHANNEL_NAME = "[a-z0-9][a-z0-9._-]*";

    static {
        Set<String> keys = new java.util.HashSet<>(AGENT_KEYS);
        keys.add("repositories");
        CHANNEL_KEYS = Set.copyOf(keys);
    }

    private ConfigLoader() {
    }

    /** An optional {@code autonomy = "full" | "notify" | "approve"}; null when absent. */
    public static Autonomy autonomy(TomlFile toml, TomlTable table) {
        return toml.autonomy(table);
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
        return parse(file.toString(), text, file.toAbsolutePath().getParent());
    }

    /** The config in {@code text}; a relative {@code secret_file} is taken from the current folder. */
    public static AgentxConfig parse(String fileName, String text) {
        return parse(fileName, text, null);
    }

    /** The config in {@code text}, read from a file in the folder {@code base} (where a relative {@code secret_file} is). */
    public static AgentxConfig parse(String fileName, String text, Path base) {
        TomlFile toml = TomlFile.parse(fileName, text);
        TomlTable root = toml.root();
        if (root.contains("workflows")) {
            throw toml.error(root, "workflows", "is read only from a repository's .github/agentx.toml (GitHub Mode); "
                    + "here each workflow is a file of its own: .agentx/workflows/<name>.toml (GitHub Mode: "
                    + "$AGENTX_DATA_DIR/repos/<owner>/<repo>/.agentx/workflows/<name>.toml)");
        }
        toml.onlyKeys(root, "", TOP);
        String defaultWorkflow = defaultWorkflow(toml, root, "feature");
        Autonomy autonomy = autonomy(toml, root);
        Map<String, List<String>> roles = roles(toml, root);
        Maintainers maintainers = maintainers(toml, root, Maintainers.defaults());

        Map<String, AgentSettings> agents = new LinkedHashMap<>();
        TomlTable agentsTable = toml.table(root, "agents");
        if (agentsTable != null) {
            for (String role : agentsTable.keySet()) {
                TomlTable a = toml.table(agentsTable, role);
                String where = "[agents." + role + "]";
                toml.onlyKeys(a, where, AGENT_KEYS);
                // [agents.pm] and [agents.product-manager] are one role: which one won would be chance
                if (agents.put(Roles.canonical(role), agentSettings(toml, a, where)) != null) {
                    throw toml.error(agentsTable, role, "of [agents] names the role '" + Roles.canonical(role) + "' a second "
                            + "time (an alias and its role are one); keep one of the two tables");
                }
            }
        }
        Map<String, NamedChannel> channels = new LinkedHashMap<>();
        TomlTable channelsTable = toml.table(root, "channels");
        if (channelsTable != null) {
            for (String name : channelsTable.keySet()) {
                if (!name.matches(CHANNEL_NAME)) {
                    throw toml.scoped("channels.").error(channelsTable, name, "is not a channel name: use lower-case "
                            + "letters, digits, '.', '_' and '-', starting with a letter or digit");
                }
                TomlTable c = toml.table(channelsTable, name);
                String where = "[channels." + name + "]";
                toml.onlyKeys(c, where, CHANNEL_KEYS);
                List<String> repositories = toml.strings(c, "repositories");
                if (repositories != null) {
                    for (String r : repositories) {
                        if (!r.matches("[A-Za-z0-9_.-]+/([A-Za-z0-9_.-]+|\\*)")) {
                            throw toml.error(c, "repositories", "must list repositories as \"owner/name\" or "
                                    + "\"owner/*\", got '" + r + "'");
                        }
                    }
                }
                channels.put(name, new NamedChannel(name, agentSettings(toml, c, where), repositories));
            }
        }
        Labels labels = labels(toml, root, Labels.defaults());
        return new AgentxConfig(defaultWorkflow, roles, maintainers, agents, autonomy, labels, channels, Map.of(),
                WakeTable.read(toml, root), NotifyTables.read(toml, root, NotifyReceiver.SERVER, base));
    }

    /** {@code default_workflow}, or {@code fallback} when the file does not set it. */
    public static String defaultWorkflow(TomlFile toml, TomlTable root, String fallback) {
        if (!root.contains("default_workflow")) {
            return fallback;
        }
        String defaultWorkflow = toml.string(root, "default_workflow", fallback).trim();
        if (defaultWorkflow.isEmpty()) {
            throw toml.error(root, "default_workflow", "must not be empty");
        }
        return defaultWorkflow;
    }

    /**
     * A {@code [roles]} member that is a GitHub Actions workflow of the repository ({@code
     * workflow:.github/workflows/FILE.yml}): a remote MCP caller with that workflow's OIDC token acts
     * in the role.
     */
    public static final String WORKFLOW_MEMBER = "workflow:";
    private static final java.util.regex.Pattern WORKFLOW_FILE = java.util.regex.Pattern.compile(
            "\\.github/workflows/[A-Za-z0-9_.-]+\\.ya?ml");

    /** {@code [roles]}: the roles the file lists, each with its members (empty: no table). */
    public static Map<String, List<String>> roles(TomlFile toml, TomlTable root) {
        Map<String, List<String>> roles = new LinkedHashMap<>();
        TomlTable rolesTable = toml.table(root, "roles");
        if (rolesTable != null) {
            for (String role : rolesTable.keySet()) {
                List<String> members = toml.strings(rolesTable, role);
                for (String m : members) {
                    if (m.startsWith(WORKFLOW_MEMBER) && !WORKFLOW_FILE.matcher(m.substring(WORKFLOW_MEMBER.length()))
                            .matches()) {
                        throw toml.error(rolesTable, role, "of [roles] lists '" + m + "': a workflow member is "
                                + "workflow:.github/workflows/FILE.yml (or .yaml), the path of a workflow file in the "
                                + "repository, which GitHub Actions names in its OIDC tokens' workflow_ref");
                    }
                }
                if (roles.put(Roles.canonical(role), members) != null) {
                    throw toml.error(rolesTable, role, "of [roles] names the role '" + Roles.canonical(role) + "' a second "
                            + "time (an alias and its role are one); list its members once");
                }
            }
        }
        return roles;
    }

    /** {@code [maintainers]} over {@code base}, key by key. */
    public static Maintainers maintainers(TomlFile toml, TomlTable root, Maintainers base) {
        TomlTable m = toml.table(root, "maintainers");
        if (m == null) {
            return base;
        }
        toml.onlyKeys(m, "[maintainers]", MAINTAINER_KEYS);
        String perm = toml.string(m, "min_permission", base.minPermission());
        if (!PERMISSIONS.contains(perm)) {
            throw toml.error(m, "min_permission", "must be write, maintain or admin, got '" + perm + "'");
        }
        List<String> teams = toml.strings(m, "teams");
        return new Maintainers(perm, teams == null ? base.teams() : teams);
    }

    /**
     * {@code [labels]} over {@code base}, key by key, checked as a whole ({@link Labels#problem()}): a
     * problem is reported at the first key involved that this file sets.
     */
    public static Labels labels(TomlFile toml, TomlTable root, Labels base) {
        TomlTable t = toml.table(root, "labels");
        if (t == null) {
            return base;
        }
        TomlFile scoped = toml.scoped("labels.");
        scoped.onlyKeys(t, "[labels]", new java.util.TreeSet<>(Labels.KEYS));
        Labels labels = base;
        for (String key : Labels.KEYS) {
            if (t.contains(key)) {
                labels = labels.with(key, scoped.string(t, key, null));
            }
        }
        Optional<Labels.Problem> problem = labels.problem();
        if (problem.isPresent()) {
            String key = problem.get().keys().stream().filter(t::contains).findFirst()
                    .orElse(problem.get().keys().get(0));
            if (t.contains(key)) {
                throw scoped.error(t, key, problem.get().message());
            }
            throw toml.error(root, "labels", "leaves " + key + " '" + labels.get(key) + "' invalid: "
                    + problem.get().message());
        }
        return labels;
    }

    /** The channels each key of an {@code [agents.<role>]} table applies to (autonomy: all). */
    private static final Map<String, Set<String>> CHANNELS_OF_KEY = Map.of(
            "command", Set.of("command"),
            "url", Set.of("http"), "secret_env", Set.of("http"), "token_env", Set.of("http"), "retries", Set.of("http"),
            "timeout_seconds", Set.of("command", "http"), "max_output_bytes", Set.of("command", "http"),
            "escalate_after_failures", Set.of("command", "http", "auto"));

    /** The settings of an {@code [agents.<role>]} or {@code [channels.<name>]} table ({@code where}). */
    public static AgentSettings agentSettings(TomlFile toml, TomlTable a, String where) {
        String channel = toml.string(a, "channel", "human");
        if (!CHANNELS.contains(channel)) {
            throw toml.error(a, "channel", "must be human, command, http or auto, got '" + channel + "'"
                    + (channel.startsWith("server:") ? " ('server:<name>' is how a repository's .github/agentx.toml "
                    + "selects one of the server's [channels]; here write the channel's own keys)" : ""));
        }
        for (Map.Entry<String, Set<String>> key : CHANNELS_OF_KEY.entrySet()) {
            // a key of another channel does nothing here: most likely the channel was changed and
            // the key left behind, or the channel is the typo
            if (a.contains(key.getKey()) && !key.getValue().contains(channel)) {
                throw toml.error(a, key.getKey(), "applies to channel " + String.join(" or ", new java.util.TreeSet<>(
                        key.getValue())) + " only, and " + where + " has channel = \"" + channel + "\"");
            }
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
        return new AgentSettings(channel, command,
                timeout == null ? AgentSettings.DEFAULT_TIMEOUT_SECONDS : timeout, url,
                envName(toml, a, "secret_env"), envName(toml, a, "token_env"), autonomy(toml, a),
                maxOutput == null ? AgentSettings.DEFAULT_MAX_OUTPUT_BYTES : maxOutput,
                retries == null ? AgentSettings.DEFAULT_RETRIES : retries,
                escalateAfter == null ? AgentSettings.DEFAULT_ESCALATE_AFTER_FAILURES : escalateAfter);
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
