package dev.agentx.clarify.github.handlers;

import dev.agentx.clarify.config.AgentxConfig;
import dev.agentx.clarify.github.RepoRef;
import dev.agentx.clarify.github.api.GitHubApiException;
import dev.agentx.clarify.github.api.GitHubGateway;
import dev.agentx.clarify.protocol.Roles;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Who is who, from {@code [roles]} and {@code [maintainers]} of {@code agentx.toml}: the roles of a
 * login (listed by login, or as a member of a listed {@code @org/team}) and whether it is a
 * maintainer (repository permission at least {@code min_permission}, or member of a listed team).
 * Team members and permissions are looked up through the API and kept for {@link #CACHE}.
 */
public final class Actors {
    static final Duration CACHE = Duration.ofMinutes(5);
    /** The upstream priority of docs/protocol.md, then by name. */
    private static final Comparator<String> UPSTREAM_FIRST = Comparator.comparingInt((String r) -> {
        int i = Roles.PRIORITY.indexOf(r);
        return i < 0 ? Integer.MAX_VALUE : i;
    }).thenComparing(Comparator.naturalOrder());

    private final AgentxConfig config;
    private final GitHubGateway github;
    private final Clock clock;
    private final Map<String, Cached<Set<String>>> teams;
    private final Map<String, Cached<String>> permissions;

    private record Cached<T>(T value, Instant until) {
    }

    public Actors(AgentxConfig config, GitHubGateway github, Clock clock) {
        this(config, github, clock, new ConcurrentHashMap<>(), new ConcurrentHashMap<>());
    }

    private Actors(AgentxConfig config, GitHubGateway github, Clock clock, Map<String, Cached<Set<String>>> teams,
                   Map<String, Cached<String>> permissions) {
        this.config = config;
        this.github = github;
        this.clock = clock;
        this.teams = teams;
        this.permissions = permissions;
    }

    /** The same actors under a repository's config ({@code .github/agentx.toml} merged), sharing the caches. */
    public Actors with(AgentxConfig repoConfig) {
        return repoConfig == config ? this : new Actors(repoConfig, github, clock, teams, permissions);
    }

    /** Roles of {@code login}, most upstream first (the upstream priority of docs/protocol.md, then by name). */
    public List<String> roles(long installation, String login) {
        List<String> out = new ArrayList<>();
        for (Map.Entry<String, List<String>> e : config.roles().entrySet()) {
            for (String member : e.getValue()) {
                if (matches(installation, member, login)) {
                    out.add(e.getKey());
                    break;
                }
            }
        }
        out.sort(UPSTREAM_FIRST);
        return out;
    }

    /**
     * Roles of a GitHub Actions workflow run of {@code repo}, most upstream first: those whose
     * members list {@code workflow:PATH} where the run's {@code workflow_ref} (an OIDC token's claim,
     * {@code OWNER/NAME/PATH@REF}) names PATH in {@code repo} itself.
     */
    public List<String> workflowRoles(RepoRef repo, String workflowRef) {
        int at = workflowRef == null ? -1 : workflowRef.indexOf('@');
        String prefix = repo.fullName() + "/";
        if (at < 0 || !workflowRef.substring(0, at).toLowerCase(Locale.ROOT).startsWith(prefix.toLowerCase(Locale.ROOT))) {
            return List.of();
        }
        String path = workflowRef.substring(prefix.length(), at);
        List<String> out = new ArrayList<>();
        for (Map.Entry<String, List<String>> e : config.roles().entrySet()) {
            if (e.getValue().contains(dev.agentx.clarify.config.ConfigLoader.WORKFLOW_MEMBER + path)) {
                out.add(e.getKey());
            }
        }
        out.sort(UPSTREAM_FIRST);
        return out;
    }

    /** Whether {@code login} may read the repository (permission read or higher, as the App's installation sees it). */
    public boolean mayRead(long installation, RepoRef repo, String login) {
        return rank(permission(installation, repo, login)) >= 1;
    }

    /** Whether {@code login} is listed by name (not through a team) in {@code [roles]}. */
    public boolean listedByLogin(String login) {
        return config.roles().values().stream().flatMap(List::stream)
                .anyMatch(m -> !m.startsWith("@") && m.equalsIgnoreCase(login));
    }

    private boolean matches(long installation, String member, String login) {
        if (member.startsWith("@")) {
            int slash = member.indexOf('/');
            if (slash < 2 || slash == member.length() - 1) {
                return false;
            }
            return teamMembers(installation, member.substring(1, slash), member.substring(slash + 1))
                    .contains(login.toLowerCase(Locale.ROOT));
        }
        return member.equalsIgnoreCase(login);
    }

    private Set<String> teamMembers(long installation, String org, String slug) {
        String key = installation + ":" + org.toLowerCase(Locale.ROOT) + "/" + slug.toLowerCase(Locale.ROOT);
        Instant now = clock.instant();
        Cached<Set<String>> c = teams.get(key);
        if (c == null || !now.isBefore(c.until())) {
            c = new Cached<>(Set.copyOf(github.teamMembers(installation, org, slug)), now.plus(CACHE));
            teams.put(key, c);
        }
        return c.value();
    }

    /** Maintainer: repository permission at least {@code min_permission}, or member of a {@code [maintainers]} team. */
    public boolean isMaintainer(long installation, RepoRef repo, String login) {
        for (String team : config.maintainers().teams()) {
            if (matches(installation, team.startsWith("@") ? team : "@" + team, login)) {
                return true;
            }
        }
        return rank(permission(installation, repo, login)) >= required();
    }

    private String permission(long installation, RepoRef repo, String login) {
        String key = installation + ":" + repo.id() + ":" + repo + ":" + login.toLowerCase(Locale.ROOT);
        Instant now = clock.instant();
        Cached<String> c = permissions.get(key);
        if (c == null || !now.isBefore(c.until())) {
            String p;
            try {
                p = github.permission(installation, repo, login);
            } catch (GitHubApiException e) {
                if (!e.notFound()) {
                    throw e;
                }
                p = "none";
            }
            c = new Cached<>(p, now.plus(CACHE));
            permissions.put(key, c);
        }
        return c.value();
    }

    /**
     * The permission API reports admin, write, read or none (GitHub reports the maintain role as
     * write), so {@code min_permission = "maintain"} is met by admin only; list maintain-role
     * people's team under {@code [maintainers] teams} to let them in.
     */
    private int required() {
        return switch (config.maintainers().minPermission()) {
            case "admin", "maintain" -> 3;
            default -> 2;
        };
    }

    private static int rank(String permission) {
        return switch (permission) {
            case "admin" -> 3;
            case "maintain", "write" -> 2;
            case "read", "triage" -> 1;
            default -> 0;
        };
    }

    /** Who may resolve an escalated record, in words, naming the teams (which mentions them). */
    public String maintainerPolicy() {
        String perm = config.maintainers().minPermission();
        StringBuilder b = new StringBuilder("maintainers of this repository (permission ")
                .append(perm.equals("write") ? "write or higher" : perm.equals("maintain") ? "admin" : perm).append(')');
        List<String> t = config.maintainers().teams();
        if (!t.isEmpty()) {
            b.append(" and members of ");
            for (int i = 0; i < t.size(); i++) {
                b.append(i == 0 ? "" : ", ").append('@').append(t.get(i).replaceFirst("^@", ""));
            }
        }
        return b.toString();
    }

    /** Logins and teams to notify for questions to {@code role} (bots are left out: they are not notified). */
    public List<String> mentions(String role) {
        List<String> out = new ArrayList<>();
        for (String m : config.roles().getOrDefault(role, List.of())) {
            String name = m.startsWith("@") ? m.substring(1) : m;
            if (!name.toLowerCase(Locale.ROOT).endsWith("[bot]") && name.matches("[A-Za-z0-9][A-Za-z0-9/_.-]*")) {
                out.add(name);
            }
        }
        return out;
    }
}
