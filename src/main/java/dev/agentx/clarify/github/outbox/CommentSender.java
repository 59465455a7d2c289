package dev.agentx.clarify.github.outbox;

import dev.agentx.clarify.github.api.GitHubApiException;
import dev.agentx.clarify.github.api.GitHubGateway;
import dev.agentx.clarify.render.CommentLimit;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.function.ObjLongConsumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Posts a comment (on an issue's conversation, or as a reply in a pull request's review thread)
 * with its hidden {@code <!-- agentx-effect:... -->} tag in its first line: comments are the
 * effects GitHub would repeat if they were sent twice. The tag is looked up where the comment
 * goes before a comment whose earlier attempt may have landed is posted (a 5xx, no answer, still
 * pending when the process before ended, taken over from another replica), and after one that
 * another replica may have posted meanwhile, so that of two copies the earliest stays.
 */
final class CommentSender<E extends Effect> implements EffectSender<E> {
    private static final Logger LOG = LoggerFactory.getLogger(Outbox.class);
    private final Place<E> place;
    /** Told of each comment GitHub created, with its id (the dashboard links to it); never fails a send. */
    private volatile ObjLongConsumer<E> posted = (c, id) -> { };

    /** Where an effect's comment goes on GitHub: how it is posted, looked for and deleted. */
    interface Place<E> {
        /** The comment's text, without its tag. */
        String body(E effect);

        /** Posts {@code body}; returns the new comment's id. */
        long create(E effect, String body);

        /** The ids of the comments there created at or after {@code since} that contain {@code tag}, oldest first. */
        List<Long> containing(E effect, String tag, Instant since);

        /** Deletes comment {@code id} there. */
        void delete(E effect, long id);
    }

    private CommentSender(Place<E> place) {
        this.place = place;
    }

    /** Issue comments: {@code POST /repos/{owner}/{repo}/issues/{issue_number}/comments}. */
    static CommentSender<Effect.Comment> conversation(GitHubGateway github) {
        return new CommentSender<>(new Place<>() {
            public String body(Effect.Comment c) {
                return c.body();
            }

            public long create(Effect.Comment c, String body) {
                return github.createComment(c.installation(), c.repo(), c.issue(), body);
            }

            public List<Long> containing(Effect.Comment c, String tag, Instant since) {
                return github.commentsContaining(c.installation(), c.repo(), c.issue(), tag, since);
            }

            public void delete(Effect.Comment c, long id) {
                github.deleteComment(c.installation(), c.repo(), id);
            }
        });
    }

    /**
     * Replies in a review thread: {@code POST /repos/{owner}/{repo}/pulls/{pull_number}/comments/{comment_id}/replies},
     * looked for among the pull request's review comments.
     */
    static CommentSender<Effect.ReviewReply> reviewThread(GitHubGateway github) {
        return new CommentSender<>(new Place<>() {
            public String body(Effect.ReviewReply r) {
                return r.body();
            }

            public long create(Effect.ReviewReply r, String body) {
                return github.replyInReviewThread(r.installation(), r.repo(), r.issue(), r.thread(), body);
            }

            public List<Long> containing(Effect.ReviewReply r, String tag, Instant since) {
                return github.reviewCommentsContaining(r.installation(), r.repo(), r.issue(), tag, since);
            }

            public void delete(Effect.ReviewReply r, long id) {
                github.deleteReviewComment(r.installation(), r.repo(), id);
            }
        });
    }

    /** Sets who is told of each comment posted. */
    void onPosted(ObjLongConsumer<E> listener) {
        this.posted = listener;
    }

    /** The hidden tag a comment carries so a repeated attempt can tell whether the first one landed. */
    static String tag(Effect e) {
        return "<!-- agentx-effect:" + EffectQueue.hash(e.key()) + " -->";
    }

    @Override
    public void send(E c, Attempt attempt) {
        String tag = tag(c);
        if (attempt.uncertain() && !place.containing(c, tag, since(attempt)).isEmpty()) {
            LOG.info("outbox: {} was posted by an earlier attempt; not posting it again", c.key());
            return;
        }
        long created = place.create(c, tag + "\n" + CommentLimit.fit(place.body(c), CommentLimit.MAX - tag.length() - 1));
        // a copy another replica may have posted meanwhile: taken over (uncertain), or sent as
        // this replica's heartbeats lapsed (paused between its last check and the request)
        long id = attempt.maybeTwice() ? keepFirst(c, tag, created, attempt) : created;
        try {
            posted.accept(c, id);
        } catch (RuntimeException e) {
            LOG.warn("outbox: comment {} posted as {}, but that was not recorded: {}", c.key(), id, e.toString());
        }
    }

    /** Where a look for an effect's comment starts: a minute before it was queued (clocks differ). */
    private static Instant since(Attempt attempt) {
        return attempt.queuedAt() == null ? Instant.EPOCH : attempt.queuedAt().minus(Duration.ofMinutes(1));
    }

    /**
     * After a comment was created that another replica may have posted too (each looked for the
     * other's before posting, and neither had landed yet): when the place shows an earlier
     * comment with the same tag, the one just created is a second copy and is deleted. GitHub's
     * comment ids grow with creation, so whichever replica checks, the earliest copy stays; the
     * later one's check always sees it. Returns the id of the comment that stays.
     */
    private long keepFirst(E c, String tag, long created, Attempt attempt) {
        try {
            List<Long> copies = place.containing(c, tag, since(attempt));
            long first = copies.isEmpty() ? created : copies.get(0); // oldest first
            if (first < created) {
                place.delete(c, created);
                LOG.warn("outbox: {} was posted by another replica meanwhile (comment {}); deleted this replica's "
                        + "copy {}", c.key(), first, created);
                return first;
            }
        } catch (GitHubApiException e) {
            LOG.warn("outbox: {} posted as {}; whether another replica posted it too could not be checked: {}",
                    c.key(), created, e.getMessage());
        }
        return created;
    }
}
