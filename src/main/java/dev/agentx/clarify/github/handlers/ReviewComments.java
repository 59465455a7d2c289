package dev.agentx.clarify.github.handlers;

import com.fasterxml.jackson.databind.JsonNode;
import dev.agentx.clarify.github.Payloads;
import dev.agentx.clarify.protocol.CodeLine;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What a pull request's review comment ({@code pull_request_review_comment}'s {@code comment})
 * says of where it was made: the file and line(s) a question asked in it keeps, and the review
 * thread its rounds are posted in as replies. GitHub replies only to a thread's first comment, so
 * a comment that is itself a reply ({@code in_reply_to_id}) names the first one.
 */
final class ReviewComments {
    private static final Logger LOG = LoggerFactory.getLogger(ReviewComments.class);

    private ReviewComments() {
    }

    /**
     * The comment's place: {@code path}; {@code line} (else {@code original_line}, for a comment on
     * a line an outdated diff had), with {@code start_line} (else {@code original_start_line}) for
     * several lines; {@code side}; the thread's first comment. Null when the comment names no
     * usable file or thread (the question is then asked as on the conversation, with a log line).
     */
    static CodeLine codeLine(JsonNode comment) {
        String path = comment.path("path").asText("");
        long id = Payloads.id(comment.get("id"));
        long first = Payloads.id(comment.get("in_reply_to_id"));
        if (path.isEmpty() || id == 0) {
            LOG.warn("review comment {} names no file or no id; a question in it is asked on the conversation",
                    comment.path("id"));
            return null;
        }
        Integer line = line(comment, "line", "original_line");
        Integer start = line(comment, "start_line", "original_start_line");
        String side = comment.path("side").isTextual() ? comment.path("side").asText() : null;
        try {
            return new CodeLine(path, line, line == null ? null : start,
                    "LEFT".equals(side) || "RIGHT".equals(side) ? side : null, first > 0 ? first : id);
        } catch (IllegalArgumentException e) {
            LOG.warn("review comment {}: {}; a question in it is asked on the conversation", id, e.getMessage());
            return null;
        }
    }

    /** {@code field}, else {@code original}, when it is a line number; else null. */
    private static Integer line(JsonNode comment, String field, String original) {
        JsonNode n = comment.path(field);
        if (!n.canConvertToInt() || n.intValue() < 1) {
            n = comment.path(original);
        }
        return n.isIntegralNumber() && n.canConvertToInt() && n.intValue() >= 1 ? n.intValue() : null;
    }
}
