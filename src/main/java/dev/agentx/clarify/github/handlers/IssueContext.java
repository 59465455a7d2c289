package dev.agentx.clarify.github.handlers;

import dev.agentx.clarify.cli.LocalMode;
import dev.agentx.clarify.github.RepoRef;
import java.util.List;
import java.util.Locale;

/**
 * The issue an event is about, with the repository's composition root.
 *
 * @param labels the issue's label names as the payload lists them
 */
public record IssueContext(long installation, RepoRef repo, LocalMode local, int issue, String title,
                           List<String> labels) {
    public IssueContext {
        labels = List.copyOf(labels);
    }

    /** The workflow named by a {@code type:<name>} label, or null (the config's default_workflow). */
    public String workflow() {
        for (String l : labels) {
            if (l.toLowerCase(Locale.ROOT).startsWith("type:") && l.length() > 5) {
                return l.substring(5).strip().toLowerCase(Locale.ROOT);
            }
        }
        return null;
    }
}
