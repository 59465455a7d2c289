package dev.agentx.clarify.store;

import java.util.Map;

/**
 * The ids of the comments the App posted, by their effect key, per issue, so that the dashboard
 * links each thread entry to its comment on GitHub. A cache of what GitHub holds: a lost entry
 * only loses a link (the issue's link stays). On PostgreSQL every replica records and reads the
 * same links, so a dashboard behind a load balancer links the comments any replica posted.
 */
public interface CommentLinks {
    /** Records that the comment of effect {@code key} on {@code repo} ({@code owner/name}) issue {@code issue} is GitHub's comment {@code commentId}. */
    void record(String repo, int issue, String key, long commentId);

    /** The comment ids of the issue by effect key; empty if none is recorded. */
    Map<String, Long> of(String repo, int issue);
}
