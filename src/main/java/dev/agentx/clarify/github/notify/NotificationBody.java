package dev.agentx.clarify.github.notify;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.agentx.clarify.protocol.ClarificationRecord;
import dev.agentx.clarify.protocol.ThreadEntry;

/**
 * The body of a notification, in a receiver's format: {@code json}, the documented and versioned
 * body (docs/notifications.md, {@link #VERSION}), or {@code slack}, a message for a Slack incoming
 * webhook. Made once, when the notification is queued, and sent as made on every attempt.
 */
final class NotificationBody {
    /** The version of the {@code json} body; a change that could break a receiver makes a new one. */
    static final int VERSION = 1;
    /** Slack's limit on a section's text, less room for the quote marks and the cut's mark. */
    private static final int SLACK_SECTION = 2900;

    private NotificationBody() {
    }

    /** What a notification tells: the event, where, which clarification, and the entry it is about. */
    record About(String event, String delivery, String repository, int issue, String issueUrl, String commentUrl,
                 ClarificationRecord record, ThreadEntry entry) {
    }

    /** The {@code json} body. */
    static String json(About a) {
        JsonNodeFactory f = JsonNodeFactory.instance;
        ObjectNode n = f.objectNode();
        ClarificationRecord r = a.record();
        ThreadEntry e = a.entry();
        n.put("version", VERSION);
        n.put("event", a.event());
        n.put("delivery", a.delivery());
        n.put("repository", a.repository());
        n.put("issue", a.issue());
        n.put("issue_url", a.issueUrl());
        if (a.commentUrl() == null) {
            n.putNull("comment_url");
        } else {
            n.put("comment_url", a.commentUrl());
        }
        ObjectNode c = n.putObject("clarification");
        c.put("id", r.id());
        c.put("from", r.from());
        c.put("to", r.to());
        c.put("topic", r.topic());
        c.put("round", e.round());
        c.put("max_rounds", r.maxRounds());
        c.put("blocking", r.blocking());
        c.put("status", r.status().wire());
        ObjectNode entry = n.putObject("entry");
        entry.put("type", e.type().wire());
        entry.put("by", e.from());
        entry.put("text", e.body());
        entry.put("at", e.timestamp().toString());
        return n.toString();
    }

    /**
     * The {@code slack} body: {@code text} (the notification's line, which Slack shows where blocks
     * cannot be) and {@code blocks} (that line with a link to the issue, the entry's text as a
     * quote, and who asked whom). Every piece of user text has Slack's control characters
     * {@code &}, {@code <} and {@code >} escaped, so it can neither mention anyone ({@code <!channel>},
     * {@code <@U123>}) nor make a link; the message sets no {@code link_names}, so a plain
     * {@code @channel} in the text stays text.
     */
    static String slack(About a) {
        JsonNodeFactory f = JsonNodeFactory.instance;
        ClarificationRecord r = a.record();
        ThreadEntry e = a.entry();
        String where = a.repository() + "#" + a.issue();
        String line = r.id() + " " + verb(a.event()) + " by " + escape(e.from()) + " on " + where + ": "
                + escape(r.topic());
        ObjectNode n = f.objectNode();
        n.put("text", line);
        ArrayNode blocks = n.putArray("blocks");
        blocks.addObject().put("type", "section").putObject("text").put("type", "mrkdwn")
                .put("text", "*<" + a.issueUrl() + "|" + where + ">* " + r.id() + " *" + verb(a.event())
                        + "* by " + escape(e.from()) + "\n*Topic:* " + escape(r.topic()));
        blocks.addObject().put("type", "section").putObject("text").put("type", "mrkdwn")
                .put("text", quote(e.body()));
        blocks.addObject().put("type", "context").putArray("elements").addObject().put("type", "mrkdwn")
                .put("text", escape(r.from()) + " asked " + escape(r.to()) + " - round " + e.round() + " of "
                        + r.maxRounds() + (r.blocking() ? " - blocking" : " - non-blocking")
                        + (a.commentUrl() == null ? "" : " - <" + a.commentUrl() + "|comment>"));
        return n.toString();
    }

    private static String verb(String event) {
        return switch (event) {
            case "asked" -> "asked";
            case "answered" -> "answered";
            case "stale" -> "went stale";
            case "escalated" -> "escalated";
            case "resolved" -> "resolved";
            case "abandoned" -> "abandoned";
            default -> event;
        };
    }

    /** User text with Slack's control characters escaped (api.slack.com, formatting: escaping). */
    static String escape(String text) {
        return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;");
    }

    /** The text as a Slack quote, line by line, escaped, cut to fit a section (never inside an escape). */
    static String quote(String text) {
        StringBuilder b = new StringBuilder();
        String[] lines = text.strip().split("\\R", -1);
        for (int i = 0; i < lines.length; i++) {
            String l = "> " + escape(lines[i]) + (i < lines.length - 1 ? "\n" : "");
            if (b.length() + l.length() > SLACK_SECTION) {
                int room = SLACK_SECTION - b.length();
                int cut = Math.max(0, room);
                int amp = l.lastIndexOf('&', cut);
                if (amp >= 0 && l.indexOf(';', amp) >= cut) {
                    cut = amp; // not inside &amp; &lt; &gt;
                }
                if (cut > 0 && Character.isHighSurrogate(l.charAt(cut - 1))) {
                    cut--;
                }
                b.append(l, 0, cut).append("...");
                return b.toString();
            }
            b.append(l);
        }
        return b.toString();
    }
}
