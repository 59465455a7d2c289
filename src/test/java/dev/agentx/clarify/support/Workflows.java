package dev.agentx.clarify.support;

/** Workflow files for tests that need agents to ask each other in circles (the scope guard allows it). */
public final class Workflows {
    private Workflows() {
    }

    /** {@code mesh}: product-manager, architect, engineer and reviewer may all clarify with each other; SLA 30 min. */
    public static void mesh(TestRoot root) {
        StringBuilder b = new StringBuilder("[workflow]\nname = \"mesh\"\n");
        String[] agents = {"product-manager", "architect", "engineer", "reviewer"};
        for (String a : agents) {
            b.append("\n[[steps]]\nid = \"").append(a).append("\"\nagent = \"").append(a).append("\"\ncan_clarify = [");
            String sep = "";
            for (String other : agents) {
                if (!other.equals(a)) {
                    b.append(sep).append('"').append(other).append('"');
                    sep = ", ";
                }
            }
            b.append("]\nclarify_sla_minutes = 30\n");
        }
        root.write(".agentx/workflows/mesh.toml", b.toString());
        root.write(".agentx/config.toml", "default_workflow = \"mesh\"\n");
    }
}
