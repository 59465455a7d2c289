package dev.agentx.clarify.github.sync;

import dev.agentx.clarify.github.RepoRef;
import dev.agentx.clarify.ledger.LedgerCodec;
import dev.agentx.clarify.protocol.Ledger;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.TreeSet;

/**
 * {@code agentx sync}: rebuilds each issue's ledger from the app's comments ({@link LedgerRebuilder})
 * and compares it with the server's state of the repository ({@link MirrorStore}: the data dir's
 * files, or PostgreSQL). With {@code write}, a ledger that differs is replaced by the rebuilt one
 * (GitHub is the authority), and the issue is recorded as posted so that the server posts nothing
 * again. Issues with a ledger but no comment of the app are reported and left alone.
 */
public final class MirrorSync {
    private final CommentSource github;
    private final LedgerCodec codec = new LedgerCodec();
    private final LedgerDiff diff = new LedgerDiff();

    public MirrorSync(CommentSource github) {
        this.github = github;
    }

    public SyncReport run(RepoRef repo, MirrorStore store, OptionalInt only, boolean write) {
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
            if (!rebuild.problems().isEmpty()) {
                out.add(new IssueSync(issue, IssueSync.BROKEN, List.of(), rebuild.ignored(), rebuild.problems()));
                continue;
            }
            if (rebuild.ledger().isEmpty()) {
                if (local.isPresent() || only.isPresent()) {
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
            if (write) {
                store.replace(rebuilt, installation);
            }
            out.add(new IssueSync(issue, write ? IssueSync.WRITTEN : IssueSync.DIFFERS, differences,
                    rebuild.ignored(), List.of()));
        }
        return new SyncReport(repo.fullName(), login, installation, store.describe(), write, out);
    }
}
