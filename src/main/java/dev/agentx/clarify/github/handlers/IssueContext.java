package dev.agentx.clarify.github.handlers;

import dev.agentx.clarify.app.LocalMode;
import dev.agentx.clarify.github.RepoRef;
import dev.agentx.clarify.protocol.CodeLine;
import java.util.List;

/**
 * The issue an event is about, with the repository's composition root.
 *
 * @param labels the issue's label names as the payload lists them
 * @param codeLine for a pull request's review comment: the line of code it was made on, which a
 *                 question it asks keeps, and its review thread; null for any other event
 */
public record IssueContext(long installation, RepoRef repo, LocalMode local, int issue, String title,
                           List<String> labels, CodeLine codeLine) {
    public IssueContext {
        labels = List.copyOf(labels);
    }

    public IssueContext(long installation, RepoRef repo, LocalMode local, int issue, String title,
                        List<String> labels) {
        this(installation, repo, local, issue, title, labels, null);
    }

    /**
     * The workflow named by a workflow label ({@code type:<name>}, or the repository's
     * {@code [labels] workflow_prefix}), or null (the config's default_workflow).
     */
    public String workflow() {
        return local.config().labels().workflowOf(labels);
    }
}
