package dev.agentx.clarify.github.mcp;

import java.net.URI;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * The settings of {@code /mcp}, from the server's environment (docs/configuration.md).
 *
 * @param oidcIssuer        the issuer of the Actions OIDC tokens taken ({@code AGENTX_OIDC_ISSUER})
 * @param oidcAudience      the audience they must name ({@code AGENTX_OIDC_AUDIENCE})
 * @param requestsPerMinute requests one caller may make a minute ({@code AGENTX_MCP_RATE_LIMIT})
 * @param waitsPerCaller    calls one caller may have waiting for an answer at once ({@code AGENTX_MCP_WAITS_PER_CALLER})
 * @param waits             calls waiting at once in all ({@code AGENTX_MCP_WAITS})
 * @param maxBodyBytes      the largest request body ({@code AGENTX_MCP_MAX_BODY})
 * @param sessionsPerCaller sessions one caller may hold open ({@code AGENTX_MCP_SESSIONS_PER_CALLER})
 */
public record McpSettings(String oidcIssuer, String oidcAudience, int requestsPerMinute, int waitsPerCaller,
                          int waits, long maxBodyBytes, int sessionsPerCaller) {
    public static final String DEFAULT_ISSUER = "https://token.actions.githubusercontent.com";
    public static final String DEFAULT_AUDIENCE = "agentx";
    /** Every variable {@link #fromEnv} reads. */
    public static final List<String> ENV_NAMES = List.of("AGENTX_OIDC_ISSUER", "AGENTX_OIDC_AUDIENCE",
            "AGENTX_MCP_RATE_LIMIT", "AGENTX_MCP_WAITS_PER_CALLER", "AGENTX_MCP_WAITS", "AGENTX_MCP_MAX_BODY",
            "AGENTX_MCP_SESSIONS_PER_CALLER");

    public static McpSettings defaults() {
        return new McpSettings(DEFAULT_ISSUER, DEFAULT_AUDIENCE, 300, 20, 2000, 1024 * 1024, 20);
    }

    /** The settings the environment gives; every problem named at once (IllegalArgumentException). */
    public static McpSettings fromEnv(Map<String, String> env) {
        McpSettings d = defaults();
        List<String> problems = new ArrayList<>();
        String issuer = text(env, "AGENTX_OIDC_ISSUER", d.oidcIssuer()).replaceAll("/+$", "");
        try {
            URI u = URI.create(issuer);
            if (u.getScheme() == null || !u.getScheme().matches("https?") || u.getHost() == null) {
                problems.add("AGENTX_OIDC_ISSUER must be an http(s) URL like " + DEFAULT_ISSUER + ", got '" + issuer
                        + "'.");
            }
        } catch (IllegalArgumentException e) {
            problems.add("AGENTX_OIDC_ISSUER is not a URL: '" + issuer + "'.");
        }
        String audience = text(env, "AGENTX_OIDC_AUDIENCE", d.oidcAudience());
        int rate = number(env, "AGENTX_MCP_RATE_LIMIT", d.requestsPerMinute(), 1, 1_000_000, problems);
        int perCaller = number(env, "AGENTX_MCP_WAITS_PER_CALLER", d.waitsPerCaller(), 1, 1_000_000, problems);
        int waits = number(env, "AGENTX_MCP_WAITS", d.waits(), 1, 1_000_000, problems);
        int body = number(env, "AGENTX_MCP_MAX_BODY", (int) d.maxBodyBytes(), 1024, 64 * 1024 * 1024, problems);
        int sessions = number(env, "AGENTX_MCP_SESSIONS_PER_CALLER", d.sessionsPerCaller(), 1, 1_000_000, problems);
        if (!problems.isEmpty()) {
            throw new IllegalArgumentException("agentx serve cannot start:\n  " + String.join("\n  ", problems)
                    + "\nSee docs/configuration.md for how to set them.");
        }
        return new McpSettings(issuer, audience, rate, perCaller, waits, body, sessions);
    }

    private static String text(Map<String, String> env, String name, String fallback) {
        String v = env.get(name);
        return v == null || v.isBlank() ? fallback : v.strip();
    }

    private static int number(Map<String, String> env, String name, int fallback, int min, int max,
                              List<String> problems) {
        String v = env.get(name);
        if (v == null || v.isBlank()) {
            return fallback;
        }
        try {
            int n = Integer.parseInt(v.strip());
            if (n >= min && n <= max) {
                return n;
            }
        } catch (NumberFormatException e) {
            // said below
        }
        problems.add(name + " must be a whole number from " + min + " to " + max + ", got '" + v.strip() + "'.");
        return fallback;
    }
}
