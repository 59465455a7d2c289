package dev.agentx.clarify.config;

import java.util.List;

/** {@code [maintainers]}: who may resolve or escalate any record in GitHub Mode. */
public record Maintainers(String minPermission, List<String> teams) {
    public Maintainers {
        teams = teams == null ? List.of() : List.copyOf(teams);
    }

    public static Maintainers defaults() {
        return new Maintainers("write", List.of());
    }
}
