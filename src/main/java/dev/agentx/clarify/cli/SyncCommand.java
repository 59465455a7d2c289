package dev.agentx.clarify.cli;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.agentx.clarify.config.ConfigLoader;
import dev.agentx.clarify.github.GitHubSettings;
import dev.agentx.clarify.github.RepoRef;
import dev.agentx.clarify.github.api.GitHubApiException;
import dev.agentx.clarify.github.auth.AppJwt;
import dev.agentx.clarify.github.sync.Difference;
import dev.agentx.clarify.github.sync.Hub4jCommentSource;
import dev.agentx.clarify.github.sync.IssueSync;
import dev.agentx.clarify.github.sync.MirrorSync;
import dev.agentx.clarify.github.sync.SyncReport;
import dev.agentx.clarify.lock.LockManager;
import dev.agentx.clarify.logging.LogSetup;
import dev.agentx.clarify.protocol.ErrorCode;
import java.util.HashMap;
import java.util.Map;
import java.util.OptionalInt;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** {@code agentx sync}: rebuild or verify GitHub Mode's ledger mirror from the app's own comments. */
@Command(name = "sync", mixinStandardHelpOptions = true,
        description = {"Rebuild or verify the server's copy of a repository's ledgers (under "
                + "$AGENTX_DATA_DIR/repos/) from the comments the GitHub App posted: their hidden markers "
                + "carry every field of the ledger.",
                "Only comments written by the app's bot user (<app-slug>[bot]) are trusted. Differences are "
                        + "reported per record and field; nothing is written without --write."},
        footer = {"", "Environment: as for 'agentx serve', without the webhook secret:",
                "  GITHUB_APP_ID, GITHUB_APP_PRIVATE_KEY or GITHUB_APP_PRIVATE_KEY_FILE,",
                "  GITHUB_API_URL, AGENTX_DATA_DIR.",
                "", "Exit codes: 0 in sync (or written), 1 internal or GitHub API error,",
                "  2 usage or environment, 3 differences found without --write, or comments",
                "  that cannot be rebuilt.",
                "", "Examples:", "  agentx sync --repo acme/widgets --issue 42",
                "  agentx sync --repo acme/widgets --write", "  agentx sync --repo acme/widgets --json"})
final class SyncCommand implements Callable<Integer> {
    private final CliContext ctx;

    @Option(names = "--repo", required = true, paramLabel = "OWNER/NAME", description = "The repository.")
    String repo;

    @Option(names = "--issue", paramLabel = "N", description = "Only this issue (default: every issue with a "
            + "local ledger or with comments on GitHub).")
    Integer issue;

    @Option(names = "--write", description = "Replace local ledgers that differ by the ones rebuilt from GitHub.")
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
            Map<String, String> env = new HashMap<>(ctx.env);
            // sync receives no webhooks: the secret is not needed, so do not insist on it
            env.putIfAbsent("GITHUB_WEBHOOK_SECRET", "unused-by-sync");
            settings = GitHubSettings.fromEnv(env, ctx.cwd);
        } catch (IllegalArgumentException e) {
            return ctx.error(ErrorCode.USAGE, e.getMessage().replace("agentx serve cannot start", "agentx sync cannot start"));
        }
        LogSetup.bridgeJavaUtilLogging(); // the GitHub client's lines in our format
        MirrorSync sync = new MirrorSync(new Hub4jCommentSource(settings.apiUrl(),
                new AppJwt(settings.appId(), settings.privateKey(), ctx.clock)), settings.dataDir(),
                LockManager.standard(ctx.clock),
                // the status label names as the server's agentx.toml gives them (a repository's own
                // [labels] is not read here: the server replaces any other names at its next event)
                ConfigLoader.load(settings.dataDir().resolve("agentx.toml")).labels());
        SyncReport report;
        try {
            report = sync.run(ref, issue == null ? OptionalInt.empty() : OptionalInt.of(issue), write);
        } catch (GitHubApiException e) {
            String hint = e.status() != 404 ? "" : " Is the app installed on " + ref + ", and GITHUB_APP_ID right?"
                    + (issue == null ? "" : " Does issue #" + issue + " still exist there (not deleted or moved)?");
            return ctx.error(ErrorCode.INTERNAL, e.getMessage() + "." + hint);
        }
        if (ctx.json()) {
            ctx.printJson(json(report));
        } else {
            print(report);
        }
        return report.clean() ? 0 : ErrorCode.VALIDATION.exitCode();
    }

    private ObjectNode json(SyncReport report) {
        ObjectNode root = ctx.mapper().createObjectNode();
        root.put("repository", report.repository());
        root.put("app", report.appLogin());
        root.put("installation", report.installation());
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
        if (report.issues().isEmpty()) {
            b.append("No issue has a ledger or a comment of the app.\n");
        }
        for (IssueSync i : report.issues()) {
            b.append("#").append(i.issue()).append(": ").append(switch (i.outcome()) {
                case IssueSync.IN_SYNC -> "in sync";
                case IssueSync.DIFFERS -> i.differences().size() + " difference(s); run with --write to rebuild";
                case IssueSync.WRITTEN -> "rebuilt from GitHub (" + i.differences().size() + " difference(s))";
                case IssueSync.NOT_ON_GITHUB -> "no comment of the app on GitHub; local ledger left alone";
                default -> "cannot be rebuilt from its comments";
            }).append('\n');
            for (Difference d : i.differences()) {
                b.append("  ").append(d.record()).append(' ').append(d.field()).append(": local ")
                        .append(d.local() == null ? "(absent)" : d.local()).append(", GitHub ")
                        .append(d.github() == null ? "(absent)" : d.github()).append('\n');
            }
            i.problems().forEach(p -> b.append("  problem: ").append(p).append('\n'));
            i.ignored().forEach(p -> b.append("  ignored: ").append(p).append('\n'));
        }
        ctx.out.print(b);
        ctx.out.flush();
    }
}
