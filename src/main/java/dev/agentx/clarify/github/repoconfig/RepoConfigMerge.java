package dev.agentx.clarify.github.repoconfig;

import dev.agentx.clarify.config.AgentSettings;
import dev.agentx.clarify.config.AgentxConfig;
import dev.agentx.clarify.config.ConfigLoader;
import dev.agentx.clarify.config.Labels;
import dev.agentx.clarify.config.Maintainers;
import dev.agentx.clarify.config.NamedChannel;
import dev.agentx.clarify.config.NotifyReceiver;
import dev.agentx.clarify.config.NotifyTables;
import dev.agentx.clarify.config.WakeTable;
import dev.agentx.clarify.github.RepoRef;
import dev.agentx.clarify.protocol.Autonomy;
import dev.agentx.clarify.protocol.ClarifyException;
import dev.agentx.clarify.protocol.Roles;
import dev.agentx.clarify.toml.TomlFile;
import dev.agentx.clarify.workflow.Workflow;
import dev.agentx.clarify.workflow.WorkflowParser;
import dev.agentx.clarify.workflow.WorkflowSource;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.tomlj.TomlTable;

/**
 * A repository's {@code .github/agentx.toml} merged over the server's {@code agentx.toml}.
 *
 * <p>The repository file may set {@code default_workflow}, {@code [roles]}, {@code [maintainers]},
 * {@code [labels]}, {@code [workflows.<name>]}, {@code [wake]}, {@code [[notify]]} receivers of its
 * own events (without {@code allow_private} or {@code secret_file}) and, for a role, {@code [agents.<role>]} with the
 * single key {@code channel = "human"} or {@code channel = "server:<name>"} (a channel the server's
 * {@code [channels.<name>]} offers). It can never give the server a program to run, a URL to call,
 * a secret to send or an autonomy of its own: anyone who can push to the repository could otherwise
 * make the server run a command, call a URL, or let agents' answers count without a person's
 * approval. Everything else (top-level {@code autonomy}, {@code [channels]}) stays server
 * configuration. Checked as strictly as any config file: every refusal names the file, the line and
 * the key, and says why.
 *
 * <p>Merge: a key the repository file sets wins, key by key; {@code [roles]} role by role (a role it
 * lists gets exactly those members; other roles keep the server's); {@code [maintainers]} and
 * {@code [labels]} by key; {@code [workflows]} by workflow name over the server's workflows (an
 * overridden workflow keeps the server workflow's autonomy); {@code [agents]} and {@code [wake]}
 * role by role; {@code [[notify]]} adds the file's receivers to the server's (which it cannot
 * remove or change).
 */
public final class RepoConfigMerge {
    private static final Logger LOG = LoggerFactory.getLogger(RepoConfigMerge.class);
    public static final String PATH = ".github/agentx.toml";
    /** What a repository file may set, as the broken-file comment lists it. */
    public static final String ALLOWED = "`default_workflow`, `[roles]`, `[maintainers]`, `[labels]`, "
            + "`[workflows.<name>]`, `[wake]`, `[[notify]]` receivers of its own events (without `allow_private` "
            + "and `secret_file`), and per role `[agents.<role>]` with only `channel = \"human\"` or "
            + "`channel = \"server:<name>\"`";
    private static final Set<String> TOP = Set.of("default_workflow", "roles", "maintainers", "labels", "workflows",
            "agents", "wake", "notify");
    private static final String SERVER_PREFIX = "server:";
    private static final String MAY_SET = "a repository may set only channel = \"human\" or channel = "
            + "\"server:<name>\" for a role";

    private RepoConfigMerge() {
    }

    /**
     * The merged config; a broken file throws VALIDATION naming {@code fileName}, the line and the
     * key. {@code serverWorkflows} are the workflows the server has for this repository (bundled and
     * its {@code .agentx/workflows/} files); {@code repo} is the repository, for the channels the
     * server offers only to some.
     */
    public static AgentxConfig merge(AgentxConfig server, WorkflowSource serverWorkflows, RepoRef repo,
                                     String fileName, String text) {
        TomlFile toml = TomlFile.parse(fileName, text);
        TomlTable root = toml.root();
        for (String key : root.keySet()) {
            switch (key) {
                case "autonomy" -> throw toml.error(root, key, "is server configuration: anyone who can push to the "
                        + "repository could otherwise let agents' answers count without a person's approval; set it in "
                        + "$AGENTX_DATA_DIR/agentx.toml");
                case "channels" -> throw toml.error(root, key, "is server configuration: only the server's operator "
                        + "defines channels (they run programs and call URLs); " + MAY_SET + ", which selects "
                        + "the server's [channels.<name>]");
                default -> {
                    // checked below
                }
            }
        }
        toml.onlyKeys(root, "", TOP);

        Map<String, Workflow> workflows = new LinkedHashMap<>(server.workflows());
        TomlTable wt = toml.table(root, "workflows");
        if (wt != null) {
            for (String name : wt.keySet()) {
                Workflow parsed = WorkflowParser.parseTable(toml, wt, name, false);
                Autonomy inherited = serverAutonomy(serverWorkflows, name);
                workflows.put(name, new Workflow(parsed.name(), parsed.description(), parsed.type(), parsed.steps(),
                        parsed.source(), inherited));
            }
        }

        String workflow = ConfigLoader.defaultWorkflow(toml, root, server.defaultWorkflow());
        if (root.contains("default_workflow")) {
            Set<String> known = new TreeSet<>(serverWorkflows.names());
            known.addAll(workflows.keySet());
            if (!known.contains(workflow)) {
                throw toml.error(root, "default_workflow", "names no workflow: '" + workflow + "'; known: "
                        + String.join(", ", known) + " (define it here as [workflows." + workflow + "])");
            }
        }

        Map<String, List<String>> roles = new LinkedHashMap<>(server.roles());
        roles.putAll(ConfigLoader.roles(toml, root));
        Maintainers maintainers = ConfigLoader.maintainers(toml, root, server.maintainers());
        Labels labels = ConfigLoader.labels(toml, root, server.labels());

        Map<String, AgentSettings> agents = new LinkedHashMap<>(server.agents());
        TomlTable at = toml.table(root, "agents");
        if (at != null) {
            for (String role : at.keySet()) {
                agents.put(Roles.canonical(role), channelChoice(toml, at, role, server, repo));
            }
        }
        Map<String, String> wake = new LinkedHashMap<>(server.wake());
        wake.putAll(WakeTable.read(toml, root));
        List<NotifyReceiver> notify = new ArrayList<>(server.receivers());
        notify.addAll(NotifyTables.read(toml, root, repo.fullName(), null));
        return new AgentxConfig(workflow, roles, maintainers, agents, server.autonomy(), labels, server.channels(),
                workflows, wake, notify);
    }

    /** The autonomy of the server's workflow {@code name}, which an override of it keeps; null when none. */
    private static Autonomy serverAutonomy(WorkflowSource serverWorkflows, String name) {
        if (!serverWorkflows.names().contains(name)) {
            return null;
        }
        try {
            return serverWorkflows.workflow(name).autonomy();
        } catch (ClarifyException e) {
            LOG.warn("the server's workflow '{}' does not load ({}); the repository's keeps the top-level autonomy",
                    name, e.getMessage());
            return null;
        }
    }

    /** A repository's {@code [agents.<role>]}: only {@code channel = "human" | "server:<name>"}. */
    private static AgentSettings channelChoice(TomlFile toml, TomlTable agents, String role, AgentxConfig server,
                                               RepoRef repo) {
        String where = "[agents." + role + "]";
        TomlTable a = toml.table(agents, role);
        TomlFile scoped = toml.scoped("agents." + role + ".");
        for (String key : a.keySet()) {
            String why = switch (key) {
                case "channel" -> null;
                case "command" -> "could make the server run any program";
                case "url" -> "could make the server call any URL";
                case "secret_env", "token_env" -> "could make the server send one of its secrets anywhere";
                case "autonomy" -> "could let agents' answers count without a person's approval";
                case "timeout_seconds", "max_output_bytes", "retries", "escalate_after_failures" -> "";
                default -> "?";
            };
            if (why == null) {
                continue;
            }
            if (why.equals("?")) {
                throw scoped.error(a, key, "is not a known key in " + where + "; " + MAY_SET);
            }
            if (why.isEmpty()) {
                throw scoped.error(a, key, "is a setting of the channel, which the server's operator makes in "
                        + "[channels.<name>] of $AGENTX_DATA_DIR/agentx.toml; " + MAY_SET);
            }
            throw scoped.error(a, key, "is server configuration: anyone who can push to the repository " + why
                    + "; " + MAY_SET);
        }
        if (!a.contains("channel")) {
            TomlFile parent = toml.scoped("agents.");
            throw parent.error(agents, role, "sets no channel; " + MAY_SET);
        }
        String channel = scoped.string(a, "channel", null).strip();
        AgentSettings serverSettings = server.agent(Roles.canonical(role));
        if (channel.equals("human")) {
            // no automatic answer in this repository; the role keeps the server's autonomy
            return new AgentSettings("human", List.of(), AgentSettings.DEFAULT_TIMEOUT_SECONDS, null, null, null,
                    serverSettings.autonomy(), AgentSettings.DEFAULT_MAX_OUTPUT_BYTES, AgentSettings.DEFAULT_RETRIES,
                    AgentSettings.DEFAULT_ESCALATE_AFTER_FAILURES);
        }
        if (!channel.startsWith(SERVER_PREFIX)) {
            throw scoped.error(a, "channel", "is '" + channel + "', but a repository cannot set up an automatic "
                    + "channel of its own (command, http and auto are server configuration: anyone who can push to "
                    + "the repository could otherwise make the server run a program or call a URL); " + MAY_SET
                    + offered(server, repo));
        }
        String name = channel.substring(SERVER_PREFIX.length()).strip();
        NamedChannel named = server.channels().get(name);
        if (named == null || !named.offeredTo(repo.fullName())) {
            List<String> offered = offeredNames(server, repo);
            throw scoped.error(a, "channel", "names '" + name + "', which this server does not offer to "
                    + repo.fullName() + (offered.isEmpty() ? " (it offers no channels)" : " (it offers: "
                    + String.join(", ", offered) + ")") + "; the server's operator offers a channel as "
                    + "[channels.<name>] in $AGENTX_DATA_DIR/agentx.toml");
        }
        return named.settings();
    }

    private static List<String> offeredNames(AgentxConfig server, RepoRef repo) {
        return server.channels().values().stream().filter(c -> c.offeredTo(repo.fullName()))
                .map(c -> SERVER_PREFIX + c.name()).sorted().toList();
    }

    private static String offered(AgentxConfig server, RepoRef repo) {
        List<String> names = offeredNames(server, repo);
        return names.isEmpty() ? " (this server offers no channels)" : " (this server offers: "
                + String.join(", ", names) + ")";
    }
}
