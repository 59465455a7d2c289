package dev.agentx.clarify.github.sync;

import java.util.List;

/**
 * What {@code agentx sync} did for a repository. {@code store}: where it compared and wrote (the
 * data dir's files, or the database); {@code write}: whether {@code --write} was given.
 */
public record SyncReport(String repository, String appLogin, long installation, String store, boolean write,
                         List<IssueSync> issues) {
    public SyncReport {
        issues = List.copyOf(issues);
    }

    /**
     * Whether every issue is in sync, written or not on GitHub; otherwise (exit code 3) something
     * differs, could not be rebuilt, waits in the outbox, or is ahead of GitHub.
     */
    public boolean clean() {
        return issues.stream().allMatch(i -> i.outcome().equals(IssueSync.IN_SYNC)
                || i.outcome().equals(IssueSync.WRITTEN) || i.outcome().equals(IssueSync.NOT_ON_GITHUB));
    }
}
