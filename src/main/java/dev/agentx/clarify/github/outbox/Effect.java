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
        @JsonSubTypes.Type(value = Effect.RemoveLabel.class, name = "remove-label")})
public sealed interface Effect {
    String key();

    long installation();

    RepoRef repo();

    int issue();

    /** An issue comment. */
    record Comment(String key, long installation, RepoRef repo, int issue, String body) implements Effect {
    }

    /**
     * A reply in a pull request's review thread: {@code issue} is the pull request's number,
     * {@code thread} the id of the review comment that starts the thread.
     */
    record ReviewReply(String key, long installation, RepoRef repo, int issue, long thread, String body)
            implements Effect {
    }

    /** A reaction on a comment, or on the issue itself when {@code commentId} is null. */
    record Reaction(String key, long installation, RepoRef repo, int issue, Long commentId, String content)
            implements Effect {
    }

    record AddLabels(String key, long installation, RepoRef repo, int issue, List<String> labels) implements Effect {
        public AddLabels {
            labels = List.copyOf(labels);
        }
    }

    record RemoveLabel(String key, long installation, RepoRef repo, int issue, String label) implements Effect {
    }
}
