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
 * Posts an issue comment with its hidden {@code <!-- agentx-effect:... -->} tag in its first line,
 * the one effect GitHub would repeat if it were sent twice. The tag is looked up on the issue
 * before a comment whose earlier attempt may have landed is posted (a 5xx, no answer, still
 * pending when the process before ended, taken over from another replica), and after one that
 * another replica may have posted meanwhile, so that of two copies the earliest stays.
 */
final class CommentSender implements EffectSender<Effect.Comment> {
    private static final Logger LOG = LoggerFactory.getLogger(Outbox.class);
    private final GitHubGateway github;
    /** Told of each comment GitHub created, with its id (the dashboard links to it); never fails a send. */
    private volatile ObjLongConsumer<Effect.Comment> posted = (c, id) -> { };

    CommentSender(GitHubGateway github) {
        this.github = github;
    }

    /** Sets who is told of each comment posted. */
    void onPosted(ObjLongConsumer<Effect.Comment> listener) {
        this.posted = listener;
    }

    /** The hidden tag a comment carries so a repeated attempt can tell whether the first one landed. */
    static String tag(Effect e) {
        return "<!-- agentx-effect:" + EffectQueue.hash(e.key()) + " -->";
    }

    @Override
    public void send(Effect.Comment c, Attempt attempt) {
        String tag = tag(c);
        if (attempt.uncertain() && github.commentContains(c.installation(), c.repo(), c.issue(), tag,
                since(attempt))) {
            LOG.info("outbox: {} was posted by an earlier attempt; not posting it again", c.key());
            return;
        }
        long created = github.createComment(c.installation(), c.repo(), c.issue(),
                tag + "\n" + CommentLimit.fit(c.body(), CommentLimit.MAX - tag.length() - 1));
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
     * other's before posting, and neither had landed yet): when the issue shows an earlier
     * comment with the same tag, the one just created is a second copy and is deleted. GitHub's
     * comment ids grow with creation, so whichever replica checks, the earliest copy stays; the
     * later one's check always sees it. Returns the id of the comment that stays.
     */
    private long keepFirst(Effect.Comment c, String tag, long created, Attempt attempt) {
        try {
            List<Long> copies = github.commentsContaining(c.installation(), c.repo(), c.issue(), tag, since(attempt));
            long first = copies.isEmpty() ? created : copies.get(0); // oldest first
            if (first < created) {
                github.deleteComment(c.installation(), c.repo(), created);
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
