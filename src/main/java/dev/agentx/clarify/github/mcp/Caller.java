package dev.agentx.clarify.github.mcp;

/**
 * Who calls {@code /mcp}, as its bearer token says: a GitHub user (a personal access token or an
 * OAuth user token) or a GitHub Actions workflow run (its OIDC token). Nothing else is a caller.
 */
public sealed interface Caller {
    /** What limits and metrics count the caller by; never a token. */
    String key();

    /** The kind, for metrics: {@code user} or {@code actions}. */
    String kind();

    /** A GitHub user, by login. */
    record User(String login) implements Caller {
        @Override
        public String key() {
            return "user:" + login.toLowerCase(java.util.Locale.ROOT);
        }

        @Override
        public String kind() {
            return "user";
        }
    }

    /**
     * A GitHub Actions workflow run: the repository it runs in (the only one it may act on), by
     * name and by GitHub's id ({@code repository_id}; 0 when the token has none), the workflow file
     * and ref it runs ({@code workflow_ref}: {@code OWNER/NAME/PATH@REF}) and the run.
     */
    record ActionsRun(String repository, long repositoryId, String workflowRef, String runId) implements Caller {
        @Override
        public String key() {
            return "actions:" + workflowRef.toLowerCase(java.util.Locale.ROOT) + "#" + runId;
        }

        @Override
        public String kind() {
            return "actions";
        }
    }
}
