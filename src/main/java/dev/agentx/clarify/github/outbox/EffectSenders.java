package dev.agentx.clarify.github.outbox;

import dev.agentx.clarify.github.api.GitHubGateway;
import java.util.HashMap;
import java.util.Map;

/** The sender of each kind of {@link Effect}; building it fails when a kind has none. */
final class EffectSenders {
    private final Map<Class<?>, EffectSender<?>> byKind;

    private EffectSenders(Map<Class<?>, EffectSender<?>> byKind) {
        for (Class<?> kind : Effect.class.getPermittedSubclasses()) {
            if (!byKind.containsKey(kind)) {
                throw new IllegalStateException("no sender for the effect " + kind.getSimpleName());
            }
        }
        this.byKind = Map.copyOf(byKind);
    }

    /**
     * The effects on GitHub, as the App's installation: comments by {@code comments} and replies in
     * review threads (both with their hidden tag), reactions and labels by one call each, which
     * GitHub applies once however often it is made (one reaction per user and content, a label
     * once); the merge gate's check runs by {@link CheckRunSender} (one run per pull request and
     * commit, the newest evaluation kept); and notifications to their receivers by {@code
     * notifications}.
     */
    static EffectSenders gitHub(GitHubGateway github, CommentSender<Effect.Comment> comments,
                                NotificationSender notifications, java.time.Clock clock) {
        Map<Class<?>, EffectSender<?>> senders = new HashMap<>();
        put(senders, Effect.Notification.class, notifications);
        put(senders, Effect.Comment.class, comments);
        put(senders, Effect.ReviewReply.class, CommentSender.reviewThread(github));
        put(senders, Effect.Reaction.class, (r, attempt) -> {
            if (r.commentId() == null) {
                github.reactToIssue(r.installation(), r.repo(), r.issue(), r.content());
            } else {
                github.reactToComment(r.installation(), r.repo(), r.issue(), r.commentId(), r.content());
            }
        });
        put(senders, Effect.AddLabels.class, (a, attempt) -> github.addLabels(a.installation(), a.repo(), a.issue(),
                a.labels()));
        put(senders, Effect.RemoveLabel.class, (r, attempt) -> github.removeLabel(r.installation(), r.repo(),
                r.issue(), r.label()));
        put(senders, Effect.CheckRun.class, new CheckRunSender(github, clock));
        return new EffectSenders(senders);
    }

    private static <E extends Effect> void put(Map<Class<?>, EffectSender<?>> senders, Class<E> kind,
                                               EffectSender<E> sender) {
        senders.put(kind, sender);
    }

    /** The sender of {@code effect}'s kind. */
    @SuppressWarnings("unchecked") // put only pairs a kind with a sender of that kind
    <E extends Effect> EffectSender<E> of(E effect) {
        return (EffectSender<E>) byKind.get(effect.getClass());
    }
}
