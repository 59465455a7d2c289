package dev.agentx.clarify.workflow;

import java.util.Set;

/** Where the engine gets workflows from. Throws VALIDATION for an unknown name. */
public interface WorkflowSource {
    Workflow workflow(String name);

    Set<String> names();
}
