package dev.agentx.clarify.github.repoconfig;

import dev.agentx.clarify.config.AgentxConfig;
import dev.agentx.clarify.github.RepoRef;
import dev.agentx.clarify.github.api.GitHubApiException;
import dev.agentx.clarify.github.api.GitHubGateway;
import dev.agentx.clarify.github.api.RepoFile;
import dev.agentx.clarify.protocol.ClarifyException;
import dev.agentx.clarify.workflow.WorkflowSource;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Each repository's effective config: its {@code .github/agentx.toml} on the default branch
 * ({@link RepoConfigMerge}) over the server's. The file is read through the contents API at most
 * once per {@code checkEvery} per repository; it is parsed again only when its blob sha changed.
 * A broken file leaves the server's config in force; {@link Resolved#problem()} names it once per
 * sha, for the caller to report on the issue where it bit. When GitHub cannot be asked, the last
 * known config stays in force.
 */
public final class RepoConfigs {
    private static final Logger LOG = LoggerFactory.getLogger(RepoConfigs.class);

    private final AgentxConfig server;
    private final Function<RepoRef, WorkflowSource> serverWorkflows;
    private final GitHubGateway github;
    private final Clock clock;
    private final Duration checkEvery;
    private final Map<RepoRef, Entry> entries = new ConcurrentHashMap<>();
    private final Map<RepoRef, ReentrantLock> checks = new ConcurrentHashMap<>();

    /** A repository's config as last read: the file's sha (null: no file), the merged config, the problem. */
    private record Entry(String sha, AgentxConfig config, String problem, Instant checkedAt) {
    }

    /**
     * The config in force, and the problem with the repository's file when it is newly found broken
     * (same sha: reported once).
     */
    public record Resolved(AgentxConfig config, String sha, Optional<String> problem) {
    }

    /**
     * @param serverWorkflows the workflows the server has for a repository (bundled and the files of its
     *                        {@code .agentx/workflows/}), which the repository's {@code [workflows]} override
     */
    public RepoConfigs(AgentxConfig server, Function<RepoRef, WorkflowSource> serverWorkflows, GitHubGateway github,
                       Clock clock, Duration checkEvery) {
        this.server = server;
        this.serverWorkflows = serverWorkflows;
        this.github = github;
        this.clock = clock;
        this.checkEvery = checkEvery;
    }

    /** The config in force for {@code repo} as last resolved (the server's before the first look). */
    public AgentxConfig current(RepoRef repo) {
        Entry e = entries.get(repo);
        return e == null ? server : e.config();
    }

    /**
     * Checks the repository's file when due, and returns the config in force. One thread at a time
     * asks GitHub for a repository's file: the others wait for it when nothing is known yet, and
     * meanwhile go on with the config last read when it is only due for a check (so the worker's
     * lanes do not all ask at once when a server starts or a minute is up).
     */
    public Resolved resolve(long installation, RepoRef repo) {
        Entry known = entries.get(repo);
        if (fresh(known)) {
            return new Resolved(known.config(), known.sha(), Optional.empty());
        }
        ReentrantLock checking = checks.computeIfAbsent(repo, r -> new ReentrantLock());
        if (known == null) {
            checking.lock();
        } else if (!checking.tryLock()) {
            return new Resolved(known.config(), known.sha(), Optional.empty()); // another thread is checking
        }
        try {
            Entry now = entries.get(repo);
            if (fresh(now)) { // checked by the thread we waited for
                return new Resolved(now.config(), now.sha(), Optional.empty());
            }
            return check(installation, repo, now);
        } finally {
            checking.unlock();
        }
    }

    private boolean fresh(Entry e) {
        return e != null && clock.instant().isBefore(e.checkedAt().plus(checkEvery));
    }

    /** Reads the repository's file and records what is in force; the caller holds the repository's check lock. */
    private Resolved check(long installation, RepoRef repo, Entry known) {
        Instant now = clock.instant();
        Optional<RepoFile> file;
        try {
            file = github.fileOnDefaultBranch(installation, repo, RepoConfigMerge.PATH);
        } catch (GitHubApiException e) {
            LOG.warn("cannot read {} of {}: {}; keeping the config in force", RepoConfigMerge.PATH, repo,
                    e.getMessage());
            Entry kept = known == null ? new Entry(null, server, null, now)
                    : new Entry(known.sha(), known.config(), known.problem(), now);
            entries.put(repo, kept);
            return new Resolved(kept.config(), kept.sha(), Optional.empty());
        }
        String sha = file.map(RepoFile::sha).orElse(null);
        if (known != null && java.util.Objects.equals(sha, known.sha())) {
            entries.put(repo, new Entry(known.sha(), known.config(), known.problem(), now));
            return new Resolved(known.config(), known.sha(), Optional.empty());
        }
        if (file.isEmpty()) {
            entries.put(repo, new Entry(null, server, null, now));
            return new Resolved(server, null, Optional.empty());
        }
        try {
            AgentxConfig merged = RepoConfigMerge.merge(server, serverWorkflows.apply(repo), repo,
                    RepoConfigMerge.PATH, file.get().text());
            entries.put(repo, new Entry(sha, merged, null, now));
            LOG.info("{}: using {} at blob {}", repo, RepoConfigMerge.PATH, sha);
            return new Resolved(merged, sha, Optional.empty());
        } catch (ClarifyException e) {
            LOG.warn("{}: {} is broken, the server's config applies: {}", repo, RepoConfigMerge.PATH, e.getMessage());
            entries.put(repo, new Entry(sha, server, e.getMessage(), now));
            return new Resolved(server, sha, Optional.of(e.getMessage()));
        }
    }
}
