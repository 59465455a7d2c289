package dev.agentx.clarify.github.api;

import dev.agentx.clarify.github.RepoRef;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * The GitHub REST calls GitHub Mode makes, in plain values, each as the app's installation
 * {@code installation}. Every failure is a {@link GitHubApiException}.
 */
public interface GitHubGateway {
    /** Creates an issue comment; returns its id. */
    long createComment(long installation, RepoRef repo, int issue, String body);

    /** The ids of the comments created at or after {@code since} on the issue that contain {@code text}, oldest first. */
    java.util.List<Long> commentsContaining(long installation, RepoRef repo, int issue, String text, Instant since);

    /** Whether a comment created at or after {@code since} on the issue contains {@code text}. */
    default boolean commentContains(long installation, RepoRef repo, int issue, String text, Instant since) {
        return !commentsContaining(installation, repo, issue, text, since).isEmpty();
    }

    /** Deletes an issue comment. */
    void deleteComment(long installation, RepoRef repo, long commentId);

    /**
     * Replies in the review thread of pull request {@code pull} that review comment {@code thread}
     * starts ({@code POST /repos/{owner}/{repo}/pulls/{pull_number}/comments/{comment_id}/replies});
     * returns the reply's id.
     */
    long replyInReviewThread(long installation, RepoRef repo, int pull, long thread, String body);

    /**
     * The ids of the review comments of pull request {@code pull} created at or after {@code since}
     * that contain {@code text}, oldest first ({@code GET /repos/{owner}/{repo}/pulls/{pull_number}/comments}).
     */
    List<Long> reviewCommentsContaining(long installation, RepoRef repo, int pull, String text, Instant since);

    /** Deletes a review comment ({@code DELETE /repos/{owner}/{repo}/pulls/comments/{comment_id}}). */
    void deleteReviewComment(long installation, RepoRef repo, long commentId);

    /** Adds a reaction ({@code +1}, {@code -1}, {@code confused}, {@code rocket}...) to a comment. */
    void reactToComment(long installation, RepoRef repo, int issue, long commentId, String content);

    /** Adds a reaction to the issue itself (its opening post). */
    void reactToIssue(long installation, RepoRef repo, int issue, String content);

    void addLabels(long installation, RepoRef repo, int issue, List<String> labels);

    /** Removes a label; a label that is not there is not an error. */
    void removeLabel(long installation, RepoRef repo, int issue, String label);

    /** The user's repository permission: admin, write, read or none. */
    String permission(long installation, RepoRef repo, String login);

    /** A file on the repository's default branch (contents API), or empty when there is none. */
    Optional<RepoFile> fileOnDefaultBranch(long installation, RepoRef repo, String path);

    /** One of the App's webhook deliveries as GitHub lists them ({@code GET /app/hook/deliveries}). */
    record Delivery(long id, String guid, Instant deliveredAt, boolean redelivery, int statusCode, String event,
                    String action) {
    }

    /** A page of deliveries, newest first, and the cursor of the next page (null: this is the last). */
    record DeliveryPage(List<Delivery> deliveries, String next) {
    }

    /** A page of the App's webhook deliveries, as the App itself (its JWT); {@code cursor} null: the newest. */
    DeliveryPage deliveries(String cursor);

    /** Asks GitHub to send delivery {@code id} again, with its GUID ({@code POST .../attempts}). */
    void redeliver(long id);

    /** The logins (lower case) of the members of the team {@code org/slug}. */
    Set<String> teamMembers(long installation, String org, String slug);

    /** One check run on a commit as GitHub lists it: its id and the {@code external_id} its maker gave it (null: none). */
    record CheckRunSeen(long id, String externalId) {
    }

    /** What a check run is created or updated with: completed, with its conclusion and output. */
    record CheckRunOutput(String name, String headSha, String externalId, String conclusion, String title,
                          String summary, String detailsUrl, Instant completedAt) {
        /** What a create and an update both send: completed, the conclusion, the output, the evaluation's id. */
        public Map<String, Object> requestBody() {
            Map<String, Object> body = new java.util.LinkedHashMap<>();
            body.put("external_id", externalId);
            if (detailsUrl != null) {
                body.put("details_url", detailsUrl);
            }
            body.put("status", "completed");
            body.put("conclusion", conclusion);
            body.put("completed_at", java.time.format.DateTimeFormatter.ISO_INSTANT.format(
                    completedAt.truncatedTo(java.time.temporal.ChronoUnit.SECONDS)));
            body.put("output", Map.of("title", title, "summary", summary));
            return body;
        }
    }

    /** The check runs named {@code name} on commit {@code sha}, as the installation sees them (at most 100). */
    List<CheckRunSeen> checkRuns(long installation, RepoRef repo, String sha, String name);

    /** Creates a completed check run on {@code run.headSha()}; returns its id. */
    long createCheckRun(long installation, RepoRef repo, CheckRunOutput run);

    /** Updates check run {@code id} to {@code run}'s conclusion and output. */
    void updateCheckRun(long installation, RepoRef repo, long id, CheckRunOutput run);

    /**
     * The App's installation on the repository ({@code GET /repos/OWNER/NAME/installation}, as the
     * App itself), or empty when the App is not installed there.
     */
    java.util.OptionalLong installationOf(RepoRef repo);

    /**
     * {@code repo} as installation {@code installation} sees it ({@code GET /repos/OWNER/NAME}): the
     * owner and name GitHub gives it now (an old name leads to a renamed or transferred repository)
     * and its id; empty when the installation cannot see it (404).
     */
    Optional<RepoRef> repositoryOf(long installation, RepoRef repo);

    /**
     * The login a user token belongs to ({@code GET /user} with that token, not as the App), or
     * empty when GitHub does not take the token (401). The token is never logged or kept.
     */
    Optional<String> loginOf(String userToken);
}
