package dev.agentx.clarify.github.outbox;

import com.fasterxml.jackson.annotation.JsonSubTypes;
import com.fasterxml.jackson.annotation.JsonTypeInfo;
import dev.agentx.clarify.github.RepoRef;
import java.util.List;

/**
 * One thing to do on GitHub, kept in the outbox until it is done. {@code key} names the effect
 * for good (for example {@code Codertocat/Hello-World#1/CLR-1-001/0}): an effect whose key was
 * already queued or done is never queued again, so nothing is posted twice.
 */
@JsonTypeInfo(use = JsonTypeInfo.Id.NAME, property = "type")
@JsonSubTypes({
        @JsonSubTypes.Type(value = Effect.Comment.class, name = "comment"),
        @JsonSubTypes.Type(value = Effect.ReviewReply.class, name = "review-reply"),
        @JsonSubTypes.Type(value = Effect.Reaction.class, name = "reaction"),
        @JsonSubTypes.Type(value = Effect.AddLabels.class, name = "add-labels"),
        @JsonSubTypes.Type(value = Effect.RemoveLabel.class, name = "remove-label"),
        @JsonSubTypes.Type(value = Effect.Notification.class, name = "notification"),
        @JsonSubTypes.Type(value = Effect.CheckRun.class, name = "check-run")})
public sealed interface Effect {
    String key();

    long installation();

    RepoRef repo();

    int issue();

    /**
     * The same effect sent as installation {@code installation} to {@code repo}: where its
     * repository is now ({@link Destinations}), which a rename, a transfer or a new installation
     * changes; its key stays the one it was queued with.
     */
    Effect addressedTo(long installation, RepoRef repo);

    /** An issue comment. */
    record Comment(String key, long installation, RepoRef repo, int issue, String body) implements Effect {
        @Override
        public Comment addressedTo(long installation, RepoRef repo) {
            return new Comment(key, installation, repo, issue, body);
        }
    }

    /**
     * A reply in a pull request's review thread: {@code issue} is the pull request's number,
     * {@code thread} the id of the review comment that starts the thread.
     */
    record ReviewReply(String key, long installation, RepoRef repo, int issue, long thread, String body)
            implements Effect {
        @Override
        public ReviewReply addressedTo(long installation, RepoRef repo) {
            return new ReviewReply(key, installation, repo, issue, thread, body);
        }
    }

    /** A reaction on a comment, or on the issue itself when {@code commentId} is null. */
    record Reaction(String key, long installation, RepoRef repo, int issue, Long commentId, String content)
            implements Effect {
        @Override
        public Reaction addressedTo(long installation, RepoRef repo) {
            return new Reaction(key, installation, repo, issue, commentId, content);
        }
    }

    record AddLabels(String key, long installation, RepoRef repo, int issue, List<String> labels) implements Effect {
        public AddLabels {
            labels = List.copyOf(labels);
        }

        @Override
        public AddLabels addressedTo(long installation, RepoRef repo) {
            return new AddLabels(key, installation, repo, issue, labels);
        }
    }

    record RemoveLabel(String key, long installation, RepoRef repo, int issue, String label) implements Effect {
        @Override
        public RemoveLabel addressedTo(long installation, RepoRef repo) {
            return new RemoveLabel(key, installation, repo, issue, label);
        }
    }

    /**
     * A notification POSTed to a {@code [[notify]]} receiver, not to GitHub: {@code body} as it is
     * sent on every attempt, {@code signature} its {@code X-AgentX-Signature-256} (null: unsigned;
     * the secret itself is never kept), {@code delivery} its {@code X-AgentX-Delivery}. Its line is
     * the receiver's ({@code receiver}, {@link dev.agentx.clarify.config.NotifyReceiver#id()}), not
     * the issue's: a slow receiver holds back only its own notifications. {@code url} is a
     * credential of its own for some receivers (a Slack webhook's), so it is never logged or shown
     * ({@link #toString()}).
     */
    record Notification(String key, long installation, RepoRef repo, int issue, String receiver, String url,
                        boolean allowPrivate, String event, String clarification, String delivery, String body,
                        String signature) implements Effect {
        @Override
        public String toString() {
            return "Notification[" + key + ", " + event + " of " + clarification + " to "
                    + dev.agentx.clarify.config.NotifyReceiver.shown(url) + ", delivery " + delivery + "]";
        }

        /** Unchanged: a notification goes to its receiver, wherever the repository is now. */
        @Override
        public Notification addressedTo(long installation, RepoRef repo) {
            return this;
        }
    }

    /**
     * The merge gate's check run on a pull request's head commit, as one evaluation left it:
     * {@code issue} is the pull request's number, {@code sequence} the evaluation's number (the
     * pull request's evaluations count up), so of two sends on one commit the newer wins ({@link
     * CheckRunSender}). {@code conclusion} as the Checks API names it; {@code summary} Markdown.
     */
    record CheckRun(String key, long installation, RepoRef repo, int issue, String headSha, long sequence,
                    String conclusion, String title, String summary, String detailsUrl) implements Effect {
        @Override
        public CheckRun addressedTo(long installation, RepoRef repo) {
            return new CheckRun(key, installation, repo, issue, headSha, sequence, conclusion, title, summary,
                    detailsUrl);
        }
    }
}
