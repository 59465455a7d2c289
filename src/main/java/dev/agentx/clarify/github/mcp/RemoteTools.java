package dev.agentx.clarify.github.mcp;

import dev.agentx.clarify.app.LocalMode;
import dev.agentx.clarify.github.RepoRef;
import dev.agentx.clarify.github.RepositoryNames;
import dev.agentx.clarify.github.api.GitHubApiException;
import dev.agentx.clarify.github.api.GitHubGateway;
import dev.agentx.clarify.github.handlers.Actors;
import dev.agentx.clarify.github.handlers.IssueCommands;
import dev.agentx.clarify.github.handlers.IssueContext;
import dev.agentx.clarify.github.handlers.IssueMirror;
import dev.agentx.clarify.github.outbox.Outbox;
import dev.agentx.clarify.mcp.ClarifyTools;
import dev.agentx.clarify.mcp.McpWorkspace;
import dev.agentx.clarify.mcp.ToolCatalogue;
import dev.agentx.clarify.mcp.ToolCommands;
import dev.agentx.clarify.mcp.ToolResult;
import dev.agentx.clarify.mcp.Waits;
import dev.agentx.clarify.metrics.ServerMetrics;
import dev.agentx.clarify.protocol.ClarificationId;
import dev.agentx.clarify.protocol.ClarifyException;
import dev.agentx.clarify.protocol.ErrorCode;
import dev.agentx.clarify.protocol.Roles;
import dev.agentx.clarify.store.UnitOfWork;
import dev.agentx.clarify.workflow.Step;
import dev.agentx.clarify.workflow.Workflow;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.ScheduledExecutorService;
import java.util.function.BiFunction;
import java.util.function.Consumer;
import java.util.function.Function;

/**
 * The tools of {@code agentx mcp} for a remote caller: what the HTTP side adds is only who the
 * caller is and which repository it may touch. A call names its {@code repository}; the App must
 * be installed on it, and the repository is found by GitHub's id of it, as every other path of
 * GitHub Mode keeps it: the id recorded for that name ({@link RepositoryNames}), else the id GitHub
 * gives the name as the installation sees it (a repository the server has not heard of yet, or a
 * rename it has not seen: recorded before the call writes). An
 * Actions run may act only on its own repository; the caller's role comes from the repository's
 * {@code [roles]} (a user's login or team, and the user must be able to read the repository; a
 * run's workflow file). Then the call is {@link ClarifyTools}'s, acting as that role, its commands
 * carried out as a comment's are ({@link IssueCommands}). Every refusal is a tool error that names
 * why, before anything is written.
 */
final class RemoteTools {
    /** How long a repository's installation (or its absence) is kept. */
    static final Duration INSTALLATION_CACHE = Duration.ofMinutes(5);

    private final RepositoryNames names;
    private final BiFunction<Long, RepoRef, Optional<RepoRef>> lookup;
    private final Function<RepoRef, LocalMode> repositories;
    private final GitHubGateway github;
    private final Actors actors;
    private final IssueMirror mirror;
    private final Outbox outbox;
    private final UnitOfWork unit;
    private final Consumer<IssueContext> afterCommand;
    private final RepositoryChanges changes;
    private final ScheduledExecutorService timer;
    private final Executor readers;
    private final CallerLimits limits;
    private final ServerMetrics metrics;
    private final Clock clock;
    private final Map<String, Installed> installations = new ConcurrentHashMap<>();

    private record Installed(OptionalLong id, Instant until) {
    }

    /**
     * {@code lookup}: the repository with a name as installation sees it now, with its id, or empty
     * when it cannot see it ({@code GET /repos/OWNER/NAME}).
     */
    RemoteTools(RepositoryNames names, BiFunction<Long, RepoRef, Optional<RepoRef>> lookup,
                Function<RepoRef, LocalMode> repositories, GitHubGateway github,
                Actors actors, IssueMirror mirror, Outbox outbox, UnitOfWork unit, Consumer<IssueContext> afterCommand,
                RepositoryChanges changes, ScheduledExecutorService timer, Executor readers, CallerLimits limits,
                ServerMetrics metrics, Clock clock) {
        this.names = names;
        this.lookup = lookup;
        this.repositories = repositories;
        this.github = github;
        this.actors = actors;
        this.mirror = mirror;
        this.outbox = outbox;
        this.unit = unit;
        this.afterCommand = afterCommand;
        this.changes = changes;
        this.timer = timer;
        this.readers = readers;
        this.limits = limits;
        this.metrics = metrics;
        this.clock = clock;
    }

    /** Runs {@code tool} for {@code caller}. Never completes exceptionally: a refusal is a result with {@code error}. */
    CompletableFuture<ToolResult> call(Caller caller, String tool, Map<String, Object> arguments,
                                       CompletableFuture<?> ended) {
        Map<String, Object> args = new HashMap<>(arguments == null ? Map.of() : arguments);
        Object named = args.remove(ToolCatalogue.REPOSITORY);
        try {
            RepoRef asked = named(caller, named);
            long installation = installation(asked);
            Found found = byId(asked, installation,
                    caller instanceof Caller.ActionsRun run ? run.repositoryId() : 0);
            RepoRef ref = found.ref();
            LocalMode local = repositories.apply(ref);
            Actors roles = actors.with(local.config());
            List<String> mine = roles(caller, ref, installation, roles);
            String role = pick(mine, tool, args, local);
            if (found.fromGitHub()) {
                // the repository's id and current name, as a delivery naming it would record them
                ref = names.seen(ref, installation, clock.instant());
            }
            Optional<Runnable> release = Optional.empty();
            if (waits(tool, args)) {
                StringBuilder why = new StringBuilder();
                release = limits.waitSlot(caller, why);
                if (release.isEmpty()) {
                    return done(ToolResult.failed(ErrorCode.UNAVAILABLE, "Not waiting: " + why + "."));
                }
            }
            ToolCommands commands = new IssueCommands(local, ref, installation, mirror, outbox, unit, afterCommand);
            McpWorkspace ws = new McpWorkspace(role, clock, local.engine(), local.ledgers(), local.statuses(),
                    local.activeLedgers(), () -> ToolCommands.NO_PASS, List::of, null, commands);
            Waits waits = new Waits(changes.of(ref.stateKey()), timer, readers);
            CompletableFuture<ToolResult> result = new ClarifyTools(ws, waits).call(tool, args, ended);
            release.ifPresent(r -> result.whenComplete((v, e) -> r.run()));
            return result;
        } catch (ClarifyException e) {
            return done(ToolResult.failed(e.code(), e.getMessage()));
        } catch (GitHubApiException e) {
            return done(ToolResult.failed(ErrorCode.UNAVAILABLE, "GitHub could not be asked now: " + e.getMessage()
                    + ". Call again shortly."));
        }
    }

    private static CompletableFuture<ToolResult> done(ToolResult r) {
        return CompletableFuture.completedFuture(r);
    }

    /** Whether the call may wait for an answer (and so takes a waiting place). */
    private static boolean waits(String tool, Map<String, Object> args) {
        Object w = args.get("wait_seconds");
        return (tool.equals("clarify_ask") || tool.equals("clarify_followup") || tool.equals("clarify_wait"))
                && w != null && !String.valueOf(w).strip().matches("0+(\\.0*)?");
    }

    /** The repository the call names; refused unless the caller may act on it. */
    private RepoRef named(Caller caller, Object named) {
        if (!(named instanceof String text) || text.isBlank()) {
            throw new ClarifyException(ErrorCode.USAGE, "argument '" + ToolCatalogue.REPOSITORY + "' is required: "
                    + "the repository, OWNER/NAME.");
        }
        RepoRef asked;
        try {
            asked = RepoRef.parse(text.strip());
        } catch (IllegalArgumentException e) {
            throw new ClarifyException(ErrorCode.USAGE, "argument '" + ToolCatalogue.REPOSITORY + "' must be "
                    + "OWNER/NAME, got '" + text.strip() + "'.");
        }
        if (caller instanceof Caller.ActionsRun run && !run.repository().equalsIgnoreCase(asked.fullName())) {
            metrics.mcpRefused("repository");
            throw new ClarifyException(ErrorCode.NOT_PERMITTED, "This token is a workflow run's of " + run.repository()
                    + ": it may act on that repository only, not " + asked.fullName() + ".");
        }
        return asked;
    }

    /** A repository with its id, and whether GitHub gave the id (the server has no record of the name). */
    private record Found(RepoRef ref, boolean fromGitHub) {
    }

    /**
     * The repository named {@code asked}, with its id: the id recorded for the name (renames and
     * transfers the server saw followed), else the one GitHub gives the name as the installation
     * sees it; refused when it cannot see it. {@code runsIn}: the id of the repository an Actions
     * token's run is in (0: not known); a recorded id that is another (a name that has passed to
     * another repository, the server not told yet) is asked of GitHub, and the run is refused
     * unless GitHub's is its own.
     */
    private Found byId(RepoRef asked, long installation, long runsIn) {
        Optional<RepoRef> known = names.byName(asked.fullName());
        if (known.isPresent() && (runsIn == 0 || known.get().id() == runsIn)) {
            return new Found(known.get(), false);
        }
        Optional<RepoRef> seen = lookup.apply(installation, asked);
        if (seen.isEmpty()) {
            metrics.mcpRefused("repository");
            throw new ClarifyException(ErrorCode.NOT_PERMITTED, "The AgentX Clarify App does not serve "
                    + asked.fullName() + ": its installation " + installation + " cannot see that repository. "
                    + "Name a repository the App is installed on.");
        }
        if (runsIn != 0 && seen.get().id() != runsIn) {
            metrics.mcpRefused("repository");
            throw new ClarifyException(ErrorCode.NOT_PERMITTED, "This token is a workflow run's of the repository "
                    + "with id " + runsIn + "; " + asked.fullName() + " is the repository with id " + seen.get().id()
                    + " on GitHub: it may act on its own repository only.");
        }
        return new Found(seen.get(), true);
    }

    /** The App's installation on the repository; refused when it is not installed there (kept a few minutes). */
    private long installation(RepoRef ref) {
        Instant now = clock.instant();
        String key = ref.fullName().toLowerCase(java.util.Locale.ROOT);
        Installed i = installations.get(key);
        if (i == null || !now.isBefore(i.until())) {
            i = new Installed(github.installationOf(ref), now.plus(INSTALLATION_CACHE));
            installations.put(key, i);
        }
        if (i.id().isEmpty()) {
            metrics.mcpRefused("repository");
            throw new ClarifyException(ErrorCode.NOT_PERMITTED, "The AgentX Clarify App does not serve "
                    + ref.fullName() + ": it is not installed on it. Install the App on it, or name a repository "
                    + "it is installed on.");
        }
        return i.id().getAsLong();
    }

    /** The caller's roles in the repository, most upstream first; refused when it has none (or may not read it). */
    private List<String> roles(Caller caller, RepoRef ref, long installation, Actors roles) {
        if (caller instanceof Caller.User user) {
            if (!roles.mayRead(installation, ref, user.login())) {
                metrics.mcpRefused("no_role");
                throw new ClarifyException(ErrorCode.NOT_PERMITTED, "@" + user.login() + " cannot read "
                        + ref.fullName() + ".");
            }
            List<String> found = roles.roles(installation, user.login());
            if (found.isEmpty()) {
                metrics.mcpRefused("no_role");
                throw new ClarifyException(ErrorCode.NOT_PERMITTED, "@" + user.login() + " has no role in "
                        + ref.fullName() + "'s agentx.toml [roles], so the hub does not know on whose behalf to act. "
                        + "Ask the App's operator to add you (or a team of yours) under [roles].");
            }
            return found;
        }
        Caller.ActionsRun run = (Caller.ActionsRun) caller;
        List<String> found = roles.workflowRoles(ref, run.workflowRef());
        if (found.isEmpty()) {
            metrics.mcpRefused("no_role");
            int at = run.workflowRef().indexOf('@');
            String file = at < 0 ? run.workflowRef() : run.workflowRef().substring(0, at);
            String path = file.length() > ref.fullName().length() ? file.substring(ref.fullName().length() + 1) : file;
            throw new ClarifyException(ErrorCode.NOT_PERMITTED, "The workflow " + run.workflowRef() + " has no role "
                    + "in " + ref.fullName() + "'s agentx.toml [roles]. Add \"workflow:" + path + "\" to the role it "
                    + "acts as, e.g. engineer = [\"workflow:" + path + "\"].");
        }
        return found;
    }

    /**
     * The role a call acts as, of the caller's: for an ask, the first whose workflow step may ask
     * the target (as a comment's ask picks it); for a call on a record, the first that is the
     * record's requester or target; else the most upstream.
     */
    private static String pick(List<String> roles, String tool, Map<String, Object> args, LocalMode local) {
        if (roles.size() == 1) {
            return roles.get(0);
        }
        try {
            if (tool.equals("clarify_ask") && args.get("to") instanceof String to) {
                String workflow = args.get("workflow") instanceof String w ? w : local.config().defaultWorkflow();
                Workflow wf = local.workflows().workflow(workflow);
                for (String role : roles) {
                    Optional<Step> step = wf.stepOf(role);
                    if (step.isPresent() && step.get().canClarify().contains(Roles.canonical(to))) {
                        return role;
                    }
                }
            } else if (args.get("id") instanceof String id) {
                ClarificationId cid = ClarificationId.parse(id);
                var record = local.ledgers().read(cid.issue()).flatMap(l -> l.find(cid.toString()));
                if (record.isPresent()) {
                    for (String role : roles) {
                        if (role.equals(record.get().from()) || role.equals(record.get().to())) {
                            return role;
                        }
                    }
                }
            }
        } catch (RuntimeException e) {
            // the call itself meets what is wrong with its arguments, and says so
        }
        return roles.get(0);
    }
}
