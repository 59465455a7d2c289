package dev.agentx.clarify.workflow;

import dev.agentx.clarify.config.ConfigLoader;
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
 * Reads AgentX's workflow TOML format: a {@code [workflow]} table and {@code [[steps]]}. Keys we
 * do not use are kept by the format and ignored here; the keys we use are type-checked.
 */
public final class WorkflowParser {
    public static final int MAX_ROUNDS_LIMIT = 50;
    public static final int MAX_SLA_MINUTES = 60 * 24 * 30;

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

    public static Workflow parse(String fileName, String defaultName, String text) {
        TomlFile toml = TomlFile.parse(fileName, text);
        TomlTable root = toml.root();
        TomlTable meta = toml.table(root, "workflow");
        String name = defaultName;
        String description = "";
        String type = defaultName;
        Autonomy autonomy = null;
        if (meta != null) {
            autonomy = ConfigLoader.autonomy(toml, meta);
            name = toml.string(meta, "name", defaultName);
            description = toml.string(meta, "description", "");
            type = toml.string(meta, "type", name);
        }
        if (!root.contains("steps")) {
            throw new ClarifyException(ErrorCode.VALIDATION, fileName + ": field 'steps' is required: add at least one "
                    + "[[steps]] table with 'id' and 'agent'");
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
            String id = toml.requiredString(t, "id", where);
            if (!ids.add(id)) {
                throw toml.error(t, "id", "repeats step id '" + id + "'; step ids must be unique");
            }
            String agent = Roles.canonical(toml.requiredString(t, "agent", where + " ('" + id + "')"));
            List<String> canClarify = toml.strings(t, "can_clarify");
            Integer maxRounds = toml.integer(t, "clarify_max_rounds", 1, MAX_ROUNDS_LIMIT);
            Integer sla = toml.integer(t, "clarify_sla_minutes", 1, MAX_SLA_MINUTES);
            Boolean blocking = toml.bool(t, "clarify_blocking_allowed");
            List<String> targets = new ArrayList<>();
            if (canClarify != null) {
                for (String target : canClarify) {
                    String c = Roles.canonical(target);
                    if (c.isEmpty()) {
                        throw toml.error(t, "can_clarify", "must not contain an empty agent name");
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
        return new Workflow(name, description, type, steps, fileName, autonomy);
    }
}
