package dev.agentx.clarify.render;

import dev.agentx.clarify.files.IsoInstant;
import dev.agentx.clarify.protocol.ClarificationRecord;
import dev.agentx.clarify.protocol.EntryType;
import dev.agentx.clarify.protocol.Status;
import dev.agentx.clarify.protocol.ThreadEntry;
import java.time.Duration;
import java.time.Instant;
import java.util.List;

/**
 * The terminal form of the thread (docs/cli.md):
 * <pre>
 * [Round 1] engineer -> architect (2026-02-26T10:00:00Z)
 *   Q: question text
 * [Round 1] architect -> engineer (2026-02-26T10:05:00Z)
 *   A: answer text
 * [RESOLVED] engineer (2026-02-26T10:06:00Z)
 * </pre>
 */
public final class CliRenderer {
    private final Ansi ansi;

    public CliRenderer(Ansi ansi) {
        this.ansi = ansi;
    }

    /** A header line for the record, then its thread. */
    public String record(ClarificationRecord r) {
        StringBuilder b = new StringBuilder();
        b.append(ansi.bold(r.id())).append(' ').append(ansi.status(r.status(), "[" + r.status().wire() + "]"))
                .append(' ').append(Visible.text(r.from())).append(" -> ").append(Visible.text(r.to()))
                .append("  \"").append(Visible.text(r.topic())).append("\"  round ").append(r.round()).append('/')
                .append(r.maxRounds()).append(r.blocking() ? ", blocking" : ", non-blocking").append('\n');
        if (r.codeLine() != null) {
            b.append("  On the code: ").append(Visible.text(r.codeLine().describe()));
            if (r.codeLine().side() != null) {
                b.append(" (").append(r.codeLine().side().equals("LEFT") ? "old" : "new").append(" version)");
            }
            b.append('\n');
        }
        if (!r.options().isEmpty()) {
            b.append("  Options:");
            List<String> o = r.options();
            for (int i = 0; i < o.size(); i++) {
                b.append(' ').append(i + 1).append(") ").append(Visible.text(o.get(i)));
            }
            b.append('\n');
        }
        b.append(thread(r));
        return b.toString();
    }

    public String thread(ClarificationRecord r) {
        StringBuilder b = new StringBuilder();
        for (ThreadEntry e : r.thread()) {
            b.append(entry(r, e));
        }
        return b.toString();
    }

    public String entry(ClarificationRecord r, ThreadEntry e) {
        StringBuilder b = new StringBuilder();
        // as Instant.toString writes it, without building DateTimeFormatter for it
        String when = IsoInstant.append(new StringBuilder(" ("), e.timestamp()).append(')').toString();
        switch (e.type()) {
            case QUESTION, ANSWER -> {
                String other = e.from().equals(r.from()) ? r.to() : r.from();
                b.append(ansi.dim("[Round " + e.round() + "]")).append(' ').append(Visible.text(e.from())).append(" -> ")
                        .append(Visible.text(other)).append(ansi.dim(when));
                if (e.isProposal()) {
                    // the way to accept it only while it waits for that: once answered or accepted it is the record's past
                    b.append(r.pendingProposal().filter(p -> p == e).isPresent()
                            ? " [proposed; a person accepts it with: agentx clarify accept " + r.id() + "]"
                            : " [proposed]");
                } else if (e.acceptedBy() != null) {
                    b.append(" [accepted by ").append(Visible.text(e.acceptedBy())).append(']');
                }
                b.append('\n');
                body(b, e.type() == EntryType.QUESTION ? "  Q: " : "  A: ", e.body());
                if (e.choice() != null && e.choice() < r.options().size()) {
                    b.append("  Choice: ").append(e.choice() + 1).append(") ").append(Visible.text(r.options().get(e.choice())))
                            .append('\n');
                }
            }
            case RESOLUTION -> {
                boolean abandoned = r.status() == Status.ABANDONED && e == r.thread().get(r.thread().size() - 1);
                Status shown = abandoned ? Status.ABANDONED : Status.RESOLVED;
                b.append(ansi.status(shown, abandoned ? "[ABANDONED]" : "[RESOLVED]")).append(' ').append(Visible.text(e.from()))
                        .append(ansi.dim(when)).append('\n');
                body(b, "  ", e.body());
            }
            case ESCALATION -> {
                b.append(ansi.status(Status.ESCALATED, "[ESCALATED]")).append(' ').append(Visible.text(e.from()))
                        .append(ansi.dim(when)).append('\n');
                body(b, "  ", e.body());
            }
            default -> throw new IllegalStateException("unknown entry type " + e.type());
        }
        return b.toString();
    }

    private static void body(StringBuilder b, String prefix, String text) {
        String indent = " ".repeat(prefix.length());
        List<String> lines = text.lines().toList();
        for (int i = 0; i < lines.size(); i++) {
            b.append(i == 0 ? prefix : indent).append(Visible.text(lines.get(i))).append('\n');
        }
        if (lines.isEmpty()) {
            b.append(prefix).append('\n');
        }
    }

    /** A table of records: id, status, agents, round, age, topic; as wide as it needs to be. */
    public String table(List<Row> rows, Instant now) {
        return table(rows, now, 0);
    }

    /**
     * A table of records: id, status, agents, round, age, topic. With {@code width} above 0 the
     * topic is cut (ending in "...") so that a row fits in that many columns, never wrapped; the
     * other columns are as wide as their longest value.
     */
    public String table(List<Row> rows, Instant now, int width) {
        if (rows.isEmpty()) {
            return "No active clarifications.\n";
        }
        int ids = "ID".length();
        int agents = "FROM -> TO".length();
        for (Row row : rows) {
            ids = Math.max(ids, row.record().id().length());
            agents = Math.max(agents, row.record().from().length() + 4 + row.record().to().length());
        }
        int topicAt = ids + 1 + 10 + 1 + agents + 1 + 6 + 1 + 9 + 1 + 5 + 1;
        // Padded by hand rather than with String.format: the same text (as "%-Ns"), without the
        // formatter's start-up cost in a fresh CLI process.
        StringBuilder b = new StringBuilder(128 * (rows.size() + 1));
        StringBuilder header = new StringBuilder();
        pad(header, "ID", ids).append(' ');
        pad(header, "STATUS", 10).append(' ');
        pad(header, "FROM -> TO", agents).append(' ');
        pad(header, "ROUND", 6).append(' ');
        pad(header, "BLOCKING", 9).append(' ');
        pad(header, "AGE", 5).append(' ').append("TOPIC");
        b.append(ansi.bold(header.toString())).append('\n');
        StringBuilder cell = new StringBuilder();
        for (Row row : rows) {
            ClarificationRecord r = row.record();
            pad(b, r.id(), ids).append(' ');
            cell.setLength(0);
            b.append(ansi.status(r.status(), pad(cell, r.status().wire(), 10).toString())).append(' ');
            pad(b, Visible.text(r.from() + " -> " + r.to()), agents).append(' ');
            pad(b, r.round() + "/" + r.maxRounds(), 6).append(' ');
            pad(b, r.blocking() ? "yes" : "no", 9).append(' ');
            pad(b, age(Duration.between(r.created(), now)), 5).append(' ');
            String topic = Visible.text(r.codeLine() == null ? r.topic()
                    : r.topic() + " (" + r.codeLine().describe() + ")");
            b.append(width > 0 ? fit(topic, width - topicAt) : topic).append('\n');
        }
        return b.toString();
    }

    /**
     * {@code text} on one line in at most {@code columns} characters: cut, ending in "...", when
     * longer; at least {@link #MIN_CELL} are kept, however narrow the terminal.
     */
    public static String fit(String text, int columns) {
        String line = text.replace('\n', ' ').replace('\r', ' ');
        int keep = Math.max(columns, MIN_CELL);
        return line.length() <= keep ? line : line.substring(0, keep - 3) + "...";
    }

    /** The fewest characters a cut cell keeps. */
    public static final int MIN_CELL = 10;

    /** Appends {@code text} left-justified in {@code width} characters, as {@code %-<width>s} does. */
    static StringBuilder pad(StringBuilder b, String text, int width) {
        b.append(text);
        for (int i = text.length(); i < width; i++) {
            b.append(' ');
        }
        return b;
    }

    /** A record with the issue it belongs to. */
    public record Row(int issue, ClarificationRecord record) {
    }

    public static String age(Duration d) {
        long s = Math.max(0, d.getSeconds());
        if (s < 60) {
            return s + "s";
        }
        if (s < 3600) {
            return (s / 60) + "m";
        }
        if (s < 86_400) {
            return (s / 3600) + "h";
        }
        return (s / 86_400) + "d";
    }
}
