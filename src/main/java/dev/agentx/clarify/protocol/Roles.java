package dev.agentx.clarify.protocol;

import java.util.List;
import java.util.Locale;
import java.util.Map;

/** The built-in roles, their aliases and the upstream priority used to break deadlocks. */
public final class Roles {
    public static final String PRODUCT_MANAGER = "product-manager";
    public static final String UX_DESIGNER = "ux-designer";
    public static final String ARCHITECT = "architect";
    public static final String ENGINEER = "engineer";
    public static final String REVIEWER = "reviewer";

    /** Highest priority (most upstream) first. */
    public static final List<String> PRIORITY = List.of(PRODUCT_MANAGER, ARCHITECT, UX_DESIGNER, ENGINEER, REVIEWER);

    private static final Map<String, String> ALIASES = Map.of("pm", PRODUCT_MANAGER, "ux", UX_DESIGNER);

    private Roles() {
    }

    /** Lower-cases a role name, trims it and expands the aliases {@code pm} and {@code ux}. */
    public static String canonical(String role) {
        if (role == null) {
            return null;
        }
        String r = role.trim().toLowerCase(Locale.ROOT);
        if (r.startsWith("@")) {
            r = r.substring(1);
        }
        return ALIASES.getOrDefault(r, r);
    }
}
