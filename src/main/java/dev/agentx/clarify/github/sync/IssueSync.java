package dev.agentx.clarify.github.sync;

import java.util.List;

/**
 * What {@code agentx sync} found for one issue.
 *
 * @param outcome {@code in-sync}: the local ledger is byte-identical to the rebuilt one;
 *                {@code differs}: it is not (see {@code differences}), nothing written;
 *                {@code written}: it differed and the rebuilt ledger was written ({@code --write});
 *                {@code not-on-github}: a local ledger, but no comment of the app on the issue, left alone;
 *                {@code broken}: the app's comments cannot be rebuilt into a ledger (see {@code problems});
 *                {@code unsent}: the server's outbox still holds effects for the issue that GitHub does not
 *                show yet, so the ledger is left alone (see {@code problems}: how many);
 *                {@code ahead}: the local ledger has thread entries (or records) that GitHub does not show
 *                and nothing GitHub shows that it lacks, so it is left alone (see {@code problems}: which)
 */
public record IssueSync(int issue, String outcome, List<Difference> differences, List<String> ignored,
                        List<String> problems) {
    public static final String IN_SYNC = "in-sync";
    public static final String DIFFERS = "differs";
    public static final String WRITTEN = "written";
    public static final String NOT_ON_GITHUB = "not-on-github";
    public static final String BROKEN = "broken";
    public static final String UNSENT = "unsent";
    public static final String AHEAD = "ahead";

    public IssueSync {
        differences = List.copyOf(differences);
        ignored = List.copyOf(ignored);
        problems = List.copyOf(problems);
    }
}
