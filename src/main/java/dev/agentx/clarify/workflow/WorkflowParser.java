package dev.agentx.clarify.workflow;

import dev.agentx.clarify.protocol.Autonomy;
import dev.agentx.clarify.protocol.ClarifyException;
import dev.agentx.clarify.protocol.ErrorCode;
import dev.agentx.clarify.protocol.Roles;
import dev.agentx.clarify.toml.TomlFile;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.tomlj.TomlArray;
import org.tomlj.TomlTable;

/**
 * Reads AgentX's workflow TOML format: a {@code [workflow]} table and {@code [[steps]]}, either as a
 * file of its own or as a {@code [workflows.<name>]} table of a config file. Keys we do not use are
 * kept by the format and ignored here; the keys we use are type-checked.
 */
public final class WorkflowParser {
    public static final int MAX_ROUNDS_LIMIT = 50;
    public static final int MAX_SLA_MINUTES = 60 * 24 * 30;
    /** The fields a step may carry for clarifications (SPEC-1 section 4.5). */
    static final List<String> CLARIFY_FIELDS = List.of("can_clarify", "clarify_max_rounds", "clarify_sla_minutes",
            "clarify_blocking_allowed");
    /** Workflow names: what a workflow file's name or a {@code [workflows.<name>]} key may be. */
    public static final String NAME = "[a-z0-9][a-z0-9._-]*";

    private WorkflowParser() {
    }

    private static boolean allTables(TomlArray array) {
        for (int i = 0; i < array.size(); i++) {
            if (!(array.get(i) instanceof TomlTable)) {
                return false;
            }
        }
        return true;
    }

    /** A workflow file: the document is the workflow; {@code defaultName} is its file name. */
    public static Workflow parse(String fileName, String defaultName, String text) {
        TomlFile toml = TomlFile.parse(fileName, text);
        TomlTable root = toml.root();
        if (!root.contains("steps")) {
            throw new ClarifyException(ErrorCode.VALIDATION, fileName + ": field 'steps' is required: add at least one "
                    + "[[steps]] table with 'id' and 'agent'");
        }
        return parse(toml, "", root, defaultName, fileName);
    }

    /**
     * A workflow written as the table {@code [workflows.<name>]} of a config file, in the same shape
     * as a workflow file ({@code [workflows.<name>.workflow]}, {@code [[workflows.<name>.steps]]}).
     * Messages name the file, the line and the key with its path
     * ({@code field 'workflows.hotfix.steps[1].clarify_max_rounds' must be an integer}).
     * {@code allowAutonomy} false refuses {@code [workflow] autonomy} (a repository's file may not set it).
     */
    public static Workflow parseTable(TomlFile file, TomlTable workflows, String name, boolean allowAutonomy) {
        TomlFile scoped = file.scoped("workflows.");
        if (!name.matches(NAME)) {
            throw scoped.error(workflows, name, "is not a workflow name: use lower-case letters, digits, '.', '_' "
                    + "and '-', starting with a letter or digit");
        }
        TomlTable table = scoped.table(workflows, name);
        if (!table.contains("steps")) {
            throw scoped.error(workflows, name, "needs at least one [[workflows." + name + ".steps]] table with "
                    + "'id' and 'agent'");
        }
        String prefix = "workflows." + name + ".";
        TomlTable meta = file.scoped(prefix).table(table, "workflow");
        if (!allowAutonomy && meta != null && meta.contains("autonomy")) {
            throw file.scoped(prefix + "workflow.").error(meta, "autonomy", "is server configuration: anyone who "
                    + "can push to the repository could otherwise let agents' answers count without a person's "
                    + "approval (a repository's workflow keeps the autonomy of the server's workflow of the same "
                    + "name, else the server's top-level autonomy)");
        }
        return parse(file, prefix, table, name, file.name() + " [workflows." + name + "]");
    }

    /**
     * The workflow in {@code root}; {@code prefix} is its path in the file ("" for a workflow file,
     * whose messages stay as they always were).
     */
    private static Workflow parse(TomlFile file, String prefix, TomlTable root, String defaultName, String source) {
        TomlFile toml = file.scoped(prefix);
        TomlTable meta = toml.table(root, "workflow");
        String name = defaultName;
        String description = "";
        String type = defaultName;
        Autonomy autonomy = null;
        if (meta != null) {
            TomlFile m = prefix.isEmpty() ? file : file.scoped(prefix + "workflow.");
            autonomy = m.autonomy(meta);
            name = m.string(meta, "name", defaultName);
            description = m.string(meta, "description", "");
            type = m.string(meta, "type", name);
        }
        Object stepsValue = root.get("steps");
        if (!(stepsValue instanceof TomlArray array) || !allTables(array)) {
            throw toml.error(root, "steps", "must be an array of tables ([[steps]]), got "
                    + TomlFile.typeName(stepsValue));
        }
        List<Step> steps = new ArrayList<>();
        Set<String> ids = new HashSet<>();
        for (int i = 0; i < array.size(); i++) {
            TomlTable t = array.getTable(i);
            String where = "step " + (i + 1);
            TomlFile s = prefix.isEmpty() ? file : file.scoped(prefix + "steps[" + (i + 1) + "].");
            String id = s.requiredString(t, "id", where);
            if (!ids.add(id)) {
                throw s.error(t, "id", "repeats step id '" + id + "'; step ids must be unique");
            }
            String agent = Roles.canonical(s.requiredString(t, "agent", where + " ('" + id + "')"));
            for (String key : t.keySet()) {
                // AgentX's own keys are kept and ignored; one in the clarify fields' name space that is
                // none of them is a typo, which must not quietly leave a limit at its default
                if ((key.startsWith("clarify") || key.startsWith("can_clarif")) && !CLARIFY_FIELDS.contains(key)) {
                    throw s.error(t, key, "is not a clarify field; they are " + String.join(", ", CLARIFY_FIELDS));
                }
            }
            List<String> canClarify = s.strings(t, "can_clarify");
            Integer maxRounds = s.integer(t, "clarify_max_rounds", 1, MAX_ROUNDS_LIMIT);
            Integer sla = s.integer(t, "clarify_sla_minutes", 1, MAX_SLA_MINUTES);
            Boolean blocking = s.bool(t, "clarify_blocking_allowed");
            List<String> targets = new ArrayList<>();
            if (canClarify != null) {
                for (String target : canClarify) {
                    String c = Roles.canonical(target);
                    if (c.isEmpty()) {
                        throw s.error(t, "can_clarify", "must not contain an empty agent name");
                    }
                    targets.add(c);
                }
            }
            boolean declares = canClarify != null || maxRounds != null || sla != null || blocking != null;
            steps.add(new Step(id, agent, targets, maxRounds, sla, blocking == null || blocking, declares));
        }
        if (steps.isEmpty()) {
            throw toml.error(root, "steps", "must hold at least one step");
        }
        return new Workflow(name, description, type, steps, source, autonomy);
    }
}
