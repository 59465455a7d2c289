package dev.agentx.clarify.cli;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.agentx.clarify.config.ConfigLoader;
import dev.agentx.clarify.config.Labels;
import dev.agentx.clarify.github.EnvFile;
import dev.agentx.clarify.github.GitHubSettings;
import dev.agentx.clarify.github.RepoRef;
import dev.agentx.clarify.github.api.GitHubApiException;
import dev.agentx.clarify.github.auth.AppJwt;
import dev.agentx.clarify.github.outbox.Outbox;
import dev.agentx.clarify.github.sync.Difference;
import dev.agentx.clarify.github.sync.Hub4jCommentSource;
import dev.agentx.clarify.github.sync.IssueSync;
import dev.agentx.clarify.github.sync.MirrorStore;
import dev.agentx.clarify.github.sync.MirrorSync;
import dev.agentx.clarify.github.sync.SyncReport;
import dev.agentx.clarify.lock.LockManager;
import dev.agentx.clarify.logging.LogSetup;
import dev.agentx.clarify.protocol.ClarifyException;
import dev.agentx.clarify.protocol.ErrorCode;
import dev.agentx.clarify.store.files.DataDirectory;
import dev.agentx.clarify.store.postgres.PgDeliveryQueue;
import dev.agentx.clarify.store.postgres.PostgresDatabase;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalInt;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code agentx sync}: rebuild or verify the server's ledgers from the app's own comments, in the
 * store the server uses: PostgreSQL when {@code AGENTX_DATABASE_URL} is set (as {@code agentx
 * serve} reads it: the environment over the data dir's {@code agentx.env}, the password file
 * included), else the data dir's files.
 */
@Command(name = "sync", mixinStandardHelpOptions = true,
        description = {"Rebuild or verify the server's ledgers of a repository from the comments the GitHub App "
                + "posted: their hidden markers carry every field of the ledger. It works on the server's store: "
                + "PostgreSQL when AGENTX_DATABASE_URL is set (read as 'agentx serve' reads it, also from the "
                + "agentx.env of the data dir), else the files under $AGENTX_DATA_DIR/repos/.",
                "Only comments written by the app's bot user (<app-slug>[bot]) are trusted. Differences are "
                        + "reported per record and field; nothing is written without --write, which is refused "
                        + "while a server runs on the store. --write leaves alone an issue the server's outbox "
                        + "still has effects for, and a ledger with entries GitHub does not show (ahead)."},
        footer = {"", "Environment: as for 'agentx serve', without the webhook secret:",
                "  GITHUB_APP_ID, GITHUB_APP_PRIVATE_KEY or GITHUB_APP_PRIVATE_KEY_FILE,",
                "  GITHUB_API_URL, AGENTX_DATA_DIR, AGENTX_DATABASE_URL,",
                "  AGENTX_DATABASE_PASSWORD_FILE.",
                "", "Exit codes: 0 in sync (or written), 1 internal or GitHub API error,",
                "  2 usage or environment, or --write while a server runs, 3 differences",
                "  found without --write, comments that cannot be rebuilt, an issue the",
                "  server's outbox still has effects for, or a ledger ahead of GitHub.",
                "", "Examples:", "  agentx sync --repo acme/widgets --issue 42",
                "  agentx sync --repo acme/widgets --write", "  agentx sync --repo acme/widgets --json"})
final class SyncCommand implements Callable<Integer> {
    private final CliContext ctx;

    @Option(names = "--repo", required = true, paramLabel = "OWNER/NAME", description = "The repository.")
    String repo;

    @Option(names = "--issue", paramLabel = "N", description = "Only this issue (default: every issue with a "
            + "ledger in the server's store or with comments on GitHub).")
    Integer issue;

    @Option(names = "--write", description = "Replace the server's ledgers that differ by the ones rebuilt from "
            + "GitHub, except those ahead of GitHub or with effects still in the outbox. Refused while a server "
            + "runs on the store.")
    boolean write;

    SyncCommand(CliContext ctx) {
        this.ctx = ctx;
    }

    @Override
    public Integer call() {
        RepoRef ref;
        try {
            String[] parts = repo.split("/", -1);
            if (parts.length != 2) {
                throw new IllegalArgumentException("--repo must be OWNER/NAME, got '" + repo + "'");
            }
            ref = new RepoRef(parts[0], parts[1]);
        } catch (IllegalArgumentException e) {
            return ctx.error(ErrorCode.USAGE, e.getMessage());
        }
        if (issue != null && issue < 1) {
            return ctx.error(ErrorCode.USAGE, "--issue must be a positive issue number, got " + issue);
        }
        GitHubSettings settings;
        try {
            // the data dir's agentx.env fills in what the environment lacks, as for agentx serve
            Map<String, String> env = new HashMap<>(EnvFile.merge(ctx.env, ctx.cwd).env());
            // sync receives no webhooks: the secret is not needed, so do not insist on it
            env.putIfAbsent("GITHUB_WEBHOOK_SECRET", "unused-by-sync");
            settings = GitHubSettings.fromEnv(env, ctx.cwd);
        } catch (IllegalArgumentException e) {
            return ctx.error(ErrorCode.USAGE, e.getMessage().replace("agentx serve cannot start", "agentx sync cannot start"));
        }
        LogSetup.bridgeJavaUtilLogging(); // the GitHub client's lines in our format
        // the status label names as the server's agentx.toml gives them (a repository's own
        // [labels] is not read here: the server replaces any other names at its next event)
        Labels labels = ConfigLoader.load(settings.dataDir().resolve("agentx.toml")).labels();
        Hub4jCommentSource source = new Hub4jCommentSource(settings.apiUrl(),
                new AppJwt(settings.appId(), settings.privateKey(), ctx.clock));
        MirrorSync sync = new MirrorSync(source);
        SyncReport report;
        try {
            // the server keeps a repository's state by GitHub's id of it, which GitHub tells
            source.appLogin(); // the App first: a wrong GITHUB_APP_ID or an unreachable API said as such
            ref = source.repository(ref);
        } catch (GitHubApiException e) {
            String hint = e.status() != 404 ? "" : " Is the app installed on " + ref + ", and GITHUB_APP_ID right?";
            String reach = e.status() > 0 ? "" : " Is GITHUB_API_URL (" + settings.apiUrl() + ") right, and GitHub "
                    + "reachable from here?";
            return ctx.error(e.retryable() ? ErrorCode.UNAVAILABLE : ErrorCode.INTERNAL, e.getMessage() + "." + hint
                    + reach);
        }
        try (Opened store = open(settings, ref, labels)) {
            // the outbox is the data dir's on either store; what it still holds, GitHub does not show yet
            Map<Integer, Integer> unsent = MirrorSync.unsentByIssue(
                    Outbox.pendingIn(settings.dataDir().resolve("outbox")), ref);
            report = sync.run(ref, store.mirror(), unsent, issue == null ? OptionalInt.empty() : OptionalInt.of(issue),
                    write);
        } catch (GitHubApiException e) {
            String hint = e.status() != 404 ? "" : " Is the app installed on " + ref + ", and GITHUB_APP_ID right?"
                    + (issue == null ? "" : " Does issue #" + issue + " still exist there (not deleted or moved)?");
            String reach = e.status() > 0 ? "" : " Is GITHUB_API_URL (" + settings.apiUrl() + ") right, and GitHub "
                    + "reachable from here?";
            return ctx.error(e.retryable() ? ErrorCode.UNAVAILABLE : ErrorCode.INTERNAL, e.getMessage() + "." + hint
                    + reach);
        }
        if (ctx.json()) {
            ctx.printJson(json(report));
        } else {
            print(report);
        }
        return report.clean() ? 0 : ErrorCode.VALIDATION.exitCode();
    }

    /** The server's store of the repository as sync works on it, and what to close after. */
    private record Opened(MirrorStore mirror, AutoCloseable held) implements AutoCloseable {
        @Override
        public void close() {
            try {
                held.close();
            } catch (Exception e) {
                // a lock the kernel releases when the process ends, or a pool whose connections end with it
            }
        }
    }

    /**
     * The server's store: its database when {@code AGENTX_DATABASE_URL} is set, else its data dir's
     * files. With {@code --write}, refused while a server runs on it (a replica that beat within
     * {@link PgDeliveryQueue#GONE_AFTER}; the data dir's {@code server.lock}), which is then held
     * for the run on files.
     */
    private Opened open(GitHubSettings settings, RepoRef ref, Labels labels) {
        if (settings.database() == null) {
            AutoCloseable held = write ? DataDirectory.lockForSync(settings.dataDir()) : () -> { };
            if (write) {
                recordRepository(new DataDirectory(settings.dataDir(), null).records(), ref);
            }
            return new Opened(MirrorStore.files(settings.dataDir(), ref, LockManager.standard(ctx.clock), labels),
                    held);
        }
        // --write changes the database as the server does, so brings its schema up to date as the server
        // would at its start; a comparison only reads, and leaves the schema as it is
        PostgresDatabase db = PostgresDatabase.open(settings.database(), 2, Duration.ZERO,
                write ? PostgresDatabase.Schema.MIGRATE : PostgresDatabase.Schema.EXPECT_CURRENT);
        try {
            if (write) {
                Map<String, Long> running = db.runningReplicas();
                if (!running.isEmpty()) {
                    StringBuilder who = new StringBuilder();
                    running.forEach((replica, age) -> who.append(who.isEmpty() ? "" : ", ").append(replica)
                            .append(" (its heartbeat ").append(age).append(" s old)"));
                    throw new ClarifyException(ErrorCode.USAGE, db.describe() + " is in use by running agentx "
                            + "serve " + (running.size() == 1 ? "replica " : "replicas ") + who + ": stop every "
                            + "server on it first; nothing was written. A running server may still hold comments to "
                            + "post that GitHub does not show yet, and 'agentx sync --write' would replace ledgers "
                            + "under it (a server killed without stopping counts as running for "
                            + PgDeliveryQueue.GONE_AFTER.toSeconds() + " s).");
                }
            }
            if (write) {
                recordRepository(db.records(), ref);
            }
            return new Opened(MirrorStore.postgres(db, ref, ref.rootIn(settings.dataDir()),
                    labels, ctx.clock), db);
        } catch (RuntimeException e) {
            db.close();
            throw e;
        }
    }

    /**
     * Records which repository the state of {@code ref}'s id is, under its name as GitHub gives it,
     * unless the store knows that id already: a server started on what sync rebuilt then serves it.
     */
    private void recordRepository(dev.agentx.clarify.store.RepositoryRecords records, RepoRef ref) {
        if (records.repositories().stream().noneMatch(r -> r.id() == ref.id())) {
            records.put(new dev.agentx.clarify.store.RepositoryRecords.Repository(ref.id(), ref.owner(), ref.name(),
                    ctx.clock.instant(), 0, null, null));
        }
    }

    private ObjectNode json(SyncReport report) {
        ObjectNode root = ctx.mapper().createObjectNode();
        root.put("repository", report.repository());
        root.put("app", report.appLogin());
        root.put("installation", report.installation());
        root.put("store", report.store());
        root.put("write", report.write());
        root.put("clean", report.clean());
        ArrayNode issues = root.putArray("issues");
        for (IssueSync i : report.issues()) {
            ObjectNode n = issues.addObject();
            n.put("issue", i.issue());
            n.put("outcome", i.outcome());
            ArrayNode d = n.putArray("differences");
            for (Difference f : i.differences()) {
                d.addObject().put("record", f.record()).put("field", f.field()).put("local", f.local())
                        .put("github", f.github());
            }
            ArrayNode ignored = n.putArray("ignored");
            i.ignored().forEach(ignored::add);
            ArrayNode problems = n.putArray("problems");
            i.problems().forEach(problems::add);
        }
        return root;
    }

    private void print(SyncReport report) {
        StringBuilder b = new StringBuilder();
        b.append("Repository ").append(report.repository()).append(" (app ").append(report.appLogin())
                .append(", installation ").append(report.installation()).append(")\n");
        b.append("State: ").append(report.store()).append('\n');
        if (report.issues().isEmpty()) {
            b.append("No issue has a ledger or a comment of the app.\n");
        }
        for (IssueSync i : report.issues()) {
            b.append("#").append(i.issue()).append(": ").append(switch (i.outcome()) {
                case IssueSync.IN_SYNC -> "in sync";
                case IssueSync.DIFFERS -> i.differences().size() + " difference(s); run with --write to rebuild";
                case IssueSync.WRITTEN -> "rebuilt from GitHub (" + i.differences().size() + " difference(s))";
                case IssueSync.NOT_ON_GITHUB -> "no comment of the app on GitHub; local ledger left alone";
                case IssueSync.UNSENT -> i.problems().get(0) + "; ledger left alone: start agentx serve so its "
                        + "outbox posts them, then run agentx sync again";
                case IssueSync.AHEAD -> "the local ledger has entries GitHub does not show; left alone: run agentx "
                        + "serve so its outbox posts them (if the app's comments were deleted on GitHub, the "
                        + "ledger is the record of what happened)";
                default -> "cannot be rebuilt from its comments";
            }).append('\n');
            for (Difference d : i.differences()) {
                b.append("  ").append(d.record()).append(' ').append(d.field()).append(": local ")
                        .append(d.local() == null ? "(absent)" : d.local()).append(", GitHub ")
                        .append(d.github() == null ? "(absent)" : d.github()).append('\n');
            }
            List<String> problems = i.outcome().equals(IssueSync.UNSENT) ? i.problems().subList(1, i.problems().size())
                    : i.problems();
            String label = i.outcome().equals(IssueSync.AHEAD) ? "  not on GitHub: " : "  problem: ";
            problems.forEach(p -> b.append(label).append(p).append('\n'));
            i.ignored().forEach(p -> b.append("  ignored: ").append(p).append('\n'));
        }
        ctx.out.print(b);
        ctx.out.flush();
    }
}
