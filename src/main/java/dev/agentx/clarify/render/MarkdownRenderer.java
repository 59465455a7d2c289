package dev.agentx.clarify.render;

import dev.agentx.clarify.protocol.ClarificationRecord;
import dev.agentx.clarify.protocol.Status;
import dev.agentx.clarify.protocol.ThreadEntry;
import java.util.List;
import java.util.Locale;

/**
 * The Markdown form GitHub Mode posts as issue comments. User text is quoted and neutralised so it
 * can neither trigger a command (it sits in a {@code >} quote, which the command parser ignores),
 * nor mention anyone ({@code @} is followed by a zero-width space entity), nor forge our hidden
 * marker ({@code <} and {@code >} are escaped); code in it is kept as written ({@link UserText}). Every comment ends with the {@link Marker}
 * {@code <!-- agentx:{"id":...,"round":R,"kind":...,...} -->}, which also carries what
 * {@code agentx sync} needs to rebuild the ledger.
 */
public final class MarkdownRenderer {

    /** The kinds of comment, as written in the hidden marker. */
    public enum Kind {
        QUESTION, ANSWER, RESOLUTION, ESCALATION, STALE;

        public String wire() {
            return name().toLowerCase(Locale.ROOT);
        }

        public static Kind fromWire(String value) {
            for (Kind k : values()) {
                if (k.wire().equals(value)) {
                    return k;
                }
            }
            throw new IllegalArgumentException("unknown marker kind '" + value
                    + "'; expected question, answer, resolution, escalation or stale");
        }
    }

    /** The comment for thread entry {@code index} of {@code r}. {@code mentions} are logins to notify (questions only). */
    public String entry(ClarificationRecord r, int index, List<String> mentions) {
        return entry(r, index, mentions, null);
    }

    /**
     * The comment for thread entry {@code index} of {@code r}, whose last line before the hidden
     * marker wakes the requester with {@code wake} (its role's {@code [wake]} mention; null: none)
     * when the entry settles its question ({@link WakeLine}). The mention is the operator's, not
     * user text: it is written as configured, not neutralised, so it pings.
     */
    public String entry(ClarificationRecord r, int index, List<String> mentions, String wake) {
        ThreadEntry e = r.thread().get(index);
        StringBuilder b = new StringBuilder();
        Kind kind;
        switch (e.type()) {
            case QUESTION -> {
                kind = Kind.QUESTION;
                b.append("**Clarification ").append(r.id()).append("** - round ").append(e.round()).append(" of ")
                        .append(r.maxRounds()).append(r.blocking() ? " - blocking" : " - non-blocking").append("\n\n");
                b.append("**").append(safe(e.from())).append("** asks **").append(safe(r.to())).append("** about: ")
                        .append(inline(r.topic())).append("\n\n");
                if (r.codeLine() != null) {
                    b.append("On the code: ").append(inline(r.codeLine().describe())).append("\n\n");
                }
                b.append(quote(e.body())).append('\n');
                if (!r.options().isEmpty() && e.round() == 1) {
                    b.append("\nOptions:\n");
                    for (int i = 0; i < r.options().size(); i++) {
                        b.append(i + 1).append(". ").append(inline(r.options().get(i))).append('\n');
                    }
                }
                if (!mentions.isEmpty()) {
                    b.append('\n');
                    for (String m : mentions) {
                        b.append('@').append(m).append(' ');
                    }
                    b.append("- your answer is requested.\n");
                }
                b.append("\nAnswer with `/clarify answer ").append(r.id()).append(" <answer>`.\n");
            }
            case ANSWER -> {
                kind = Kind.ANSWER;
                b.append("**Clarification ").append(r.id()).append("** - ")
                        .append(e.isProposal() ? "proposed answer to round " : "answer to round ").append(e.round())
                        .append("\n\n**").append(safe(e.from())).append(e.isProposal() ? "** proposes to **" : "** answers **")
                        .append(safe(r.from())).append("**:\n\n").append(quote(e.body())).append('\n');
                if (e.choice() != null && e.choice() < r.options().size()) {
                    b.append("\nChosen option: ").append(e.choice() + 1).append(". ")
                            .append(inline(r.options().get(e.choice()))).append('\n');
                }
                if (!mentions.isEmpty()) {
                    b.append('\n');
                    for (String m : mentions) {
                        b.append('@').append(m).append(' ');
                    }
                    b.append(e.isProposal() ? "- please review this proposed answer.\n"
                            : "- for your information: this answer was given for your role.\n");
                }
                if (e.isProposal()) {
                    b.append("\nIt counts once a person in the role accepts it with `/clarify accept ").append(r.id())
                            .append("`, or answers it with `/clarify answer ").append(r.id()).append(" <answer>`.\n");
                } else {
                    if (e.acceptedBy() != null) {
                        b.append("\nAccepted by ").append(safe(e.acceptedBy())).append(".\n");
                    }
                    b.append("\nFollow up with `/clarify followup ").append(r.id())
                            .append(" <question>` or close it with `/clarify resolve ").append(r.id()).append("`.\n");
                }
            }
            case RESOLUTION -> {
                kind = Kind.RESOLUTION;
                boolean abandoned = r.status() == Status.ABANDONED;
                b.append("**Clarification ").append(r.id()).append("** - ").append(abandoned ? "abandoned" : "resolved")
                        .append(" by **").append(safe(e.from())).append("**\n\n").append(quote(e.body())).append('\n');
            }
            case ESCALATION -> {
                kind = Kind.ESCALATION;
                b.append("**Clarification ").append(r.id()).append("** - escalated to a human\n\n")
                        .append(quote(e.body())).append('\n');
                b.append("\nA maintainer decides with `/clarify resolve ").append(r.id())
                        .append(" <decision>` or `/clarify abandon ").append(r.id()).append(" <reason>`.\n");
            }
            default -> throw new IllegalStateException("unknown entry " + e.type());
        }
        WakeLine.of(r, index, wake).ifPresent(line -> b.append('\n').append(line).append('\n'));
        b.append('\n').append(new Marker(r.id(), e.round(), kind, r, index, e).render());
        return b.toString();
    }

    /** The notice that a question went stale and was asked again. */
    public String stale(ClarificationRecord r, List<String> mentions) {
        StringBuilder b = new StringBuilder();
        b.append("**Clarification ").append(r.id()).append("** - no answer from **").append(safe(r.to()))
                .append("** within the SLA; asking again.\n\n");
        r.lastQuestion().ifPresent(q -> b.append(quote(q.body())).append('\n'));
        if (!mentions.isEmpty()) {
            b.append('\n');
            for (String m : mentions) {
                b.append('@').append(m).append(' ');
            }
            b.append("- please answer; it is escalated if it goes stale again.\n");
        }
        b.append('\n').append(new Marker(r.id(), r.round(), Kind.STALE, r, -1, null).render());
        return b.toString();
    }

    /** The whole thread of a record, for status replies. */
    public String thread(ClarificationRecord r) {
        StringBuilder b = new StringBuilder();
        b.append("**").append(r.id()).append("** `").append(r.status().wire()).append("` ").append(safe(r.from()))
                .append(" -> ").append(safe(r.to())).append(": ").append(inline(r.topic())).append(" (round ")
                .append(r.round()).append('/').append(r.maxRounds()).append(")");
        if (r.codeLine() != null) {
            b.append(" on ").append(inline(r.codeLine().describe()));
        }
        b.append("\n\n");
        for (ThreadEntry e : r.thread()) {
            String label = switch (e.type()) {
                case QUESTION -> "Q" + e.round();
                case ANSWER -> "A" + e.round();
                case RESOLUTION -> r.status() == Status.ABANDONED ? "Abandoned" : "Resolved";
                case ESCALATION -> "Escalated";
            };
            b.append("- **").append(label).append("** (").append(safe(e.from())).append("): ")
                    .append(inline(e.body().lines().findFirst().orElse(""))).append('\n');
        }
        return b.toString();
    }

    /** Quotes user text line by line, neutralised outside code ({@link UserText#quote}). */
    public static String quote(String text) {
        return UserText.quote(text);
    }

    /** One line of user text shown inline, neutralised outside code ({@link UserText#inline}). */
    public static String inline(String text) {
        return UserText.inline(text);
    }

    private static String safe(String name) {
        return neutralise(name);
    }

    /** Escapes markup that could hide text, forge a marker or mention someone. */
    public static String neutralise(String s) {
        return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("@", "@&#8203;");
    }
}
