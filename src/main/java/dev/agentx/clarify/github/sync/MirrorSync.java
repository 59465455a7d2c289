package dev.agentx.clarify.github.sync;

import dev.agentx.clarify.github.RepoRef;
import dev.agentx.clarify.github.outbox.Effect;
import dev.agentx.clarify.ledger.LedgerCodec;
import dev.agentx.clarify.protocol.Ledger;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * {@code agentx sync}: rebuilds each issue's ledger from the app's comments ({@link LedgerRebuilder})
 * and compares it with the server's state of the repository ({@link MirrorStore}: the data dir's
 * files, or PostgreSQL). With {@code write}, a ledger that differs is replaced by the rebuilt one
 * (GitHub is the authority), and the issue is recorded as posted so that the server posts nothing
 * again. Left alone, and reported, are: issues with a ledger but no comment of the app; issues
 * for which the server's outbox still holds effects not sent (GitHub does not show them yet, and
 * the rebuilt ledger would lack them); and ledgers ahead of GitHub (entries GitHub does not show:
 * not posted yet, or the app's comments deleted), which a rebuild would lose.
 */
public final class MirrorSync {
    private final CommentSource github;
    private final LedgerCodec codec = new LedgerCodec();
    private final LedgerDiff diff = new LedgerDiff();

    public MirrorSync(CommentSource github) {
        this.github = github;
    }

    /**
     * The effects of {@code pending} (the outbox's queue) for issues of {@code repo}, counted per
     * issue: by the repository's id (queued under whatever name it had then).
     */
    public static Map<Integer, Integer> unsentByIssue(List<Effect> pending, RepoRef repo) {
        Map<Integer, Integer> out = new TreeMap<>();
        for (Effect e : pending) {
            if (e.repo().id() == repo.id()) {
                out.merge(e.issue(), 1, Integer::sum);
            }
        }
        return out;
    }

    /**
     * Compares (and with {@code write} rebuilds) the issues of {@code repo}: {@code only} one, or
     * every issue with a ledger in {@code store} or comments on GitHub. {@code unsent}: the
     * effects per issue the server's outbox still holds ({@link #unsentByIssue}).
     */
    public SyncReport run(RepoRef repo, MirrorStore store, Map<Integer, Integer> unsent, OptionalInt only,
                          boolean write) {
        String login = github.appLogin();
        long installation = github.installation(repo);
        TreeSet<Integer> issues = new TreeSet<>();
        if (only.isPresent()) {
            issues.add(only.getAsInt());
        } else {
            issues.addAll(store.issues());
            issues.addAll(github.issuesWithComments(repo));
        }
        LedgerRebuilder rebuilder = new LedgerRebuilder(login);
        List<IssueSync> out = new ArrayList<>();
        for (int issue : issues) {
            Rebuild rebuild = rebuilder.rebuild(issue, github.comments(repo, issue));
            Optional<Ledger> local = store.read(issue);
            int waiting = unsent.getOrDefault(issue, 0);
            if (!rebuild.problems().isEmpty()) {
                out.add(waiting > 0 ? unsent(issue, waiting, List.of(), rebuild)
                        : new IssueSync(issue, IssueSync.BROKEN, List.of(), rebuild.ignored(), rebuild.problems()));
                continue;
            }
            if (rebuild.ledger().isEmpty()) {
                if (waiting > 0) {
                    out.add(unsent(issue, waiting, List.of(), rebuild));
                } else if (local.isPresent() || only.isPresent()) {
                    out.add(new IssueSync(issue, IssueSync.NOT_ON_GITHUB, List.of(), rebuild.ignored(), List.of()));
                }
                continue;
            }
            Ledger rebuilt = rebuild.ledger().get();
            if (local.isPresent() && Arrays.equals(codec.encode(local.get()), codec.encode(rebuilt))) {
                out.add(new IssueSync(issue, IssueSync.IN_SYNC, List.of(), rebuild.ignored(), List.of()));
                continue;
            }
            List<Difference> differences = diff.diff(local.orElse(null), rebuilt);
            if (waiting > 0) {
                // the rebuilt ledger lacks what the outbox has still to post: written, it would lose it
                out.add(unsent(issue, waiting, differences, rebuild));
                continue;
            }
            List<String> ahead = diff.ahead(local.orElse(null), rebuilt);
            if (!ahead.isEmpty()) {
                // GitHub shows a strict prefix of the ledger: a rebuild would drop the entries past it
                out.add(new IssueSync(issue, IssueSync.AHEAD, differences, rebuild.ignored(), ahead));
                continue;
            }
            if (write) {
                store.replace(rebuilt, installation);
            }
            out.add(new IssueSync(issue, write ? IssueSync.WRITTEN : IssueSync.DIFFERS, differences,
                    rebuild.ignored(), List.of()));
        }
        return new SyncReport(repo.fullName(), login, installation, store.describe(), write, out);
    }

    private static IssueSync unsent(int issue, int waiting, List<Difference> differences, Rebuild rebuild) {
        List<String> problems = new ArrayList<>();
        problems.add("the server's outbox still has " + waiting + " effect" + (waiting == 1 ? "" : "s")
                + " for this issue that GitHub does not show yet");
        problems.addAll(rebuild.problems());
        return new IssueSync(issue, IssueSync.UNSENT, differences, rebuild.ignored(), problems);
    }
}
