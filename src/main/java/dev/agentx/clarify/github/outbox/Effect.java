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
        @JsonSubTypes.Type(value = Effect.Reaction.class, name = "reaction"),
        @JsonSubTypes.Type(value = Effect.AddLabels.class, name = "add-labels"),
        @JsonSubTypes.Type(value = Effect.RemoveLabel.class, name = "remove-label"),
        @JsonSubTypes.Type(value = Effect.Notification.class, name = "notification")})
public sealed interface Effect {
    String key();

    long installation();

    RepoRef repo();

    int issue();

    /** An issue comment. */
    record Comment(String key, long installation, RepoRef repo, int issue, String body) implements Effect {
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
    }
}
