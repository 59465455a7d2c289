package dev.agentx.clarify.github.sync;

import dev.agentx.clarify.github.RepoRef;
import java.util.List;

/** What {@code agentx sync} reads from GitHub, as the app. Every failure is a GitHubApiException. */
public interface CommentSource {
    /** The app's bot login, {@code <app-slug>[bot]}: the author of every comment the app posts. */
    String appLogin();

    /**
     * {@code repo} as GitHub has it now: its name and GitHub's id of it, under which the server
     * keeps its state.
     */
    RepoRef repository(RepoRef repo);

    /** The id of the app's installation on {@code repo}. */
    long installation(RepoRef repo);

    /** Issues and pull requests of {@code repo} (open and closed) that have comments, ascending. */
    List<Integer> issuesWithComments(RepoRef repo);

    /**
     * The comments of an issue, oldest first; of a pull request, then its review comments, oldest
     * first (where the rounds of a clarification asked in review are).
     */
    List<IssueComment> comments(RepoRef repo, int issue);
}
