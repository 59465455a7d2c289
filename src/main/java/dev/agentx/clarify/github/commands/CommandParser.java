package dev.agentx.clarify.github.commands;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Finds the {@code /clarify} commands of a comment body (docs/github-app.md). A pure function.
 *
 * <p>A command starts a line (at most three spaces before it), case insensitive, and runs until
 * the next command line, so a question may go on over several lines. A line is never a command
 * inside a fenced code block, an indented code block (four spaces or a tab), a {@code >} quote or
 * an HTML comment; a command written in inline code does not start its line, so it is ignored too.
 */
public final class CommandParser {
    /** The grammar, shown by {@code /clarify help} and in replies to malformed commands. */
    public static final String GRAMMAR = """
            /clarify @<role> [--non-blocking] [--topic "..."] <question, may go on over lines>
            /clarify answer [CLR-N-NNN] <answer>      id optional when only one is waiting on you
            /clarify followup CLR-N-NNN <question>
            /clarify resolve CLR-N-NNN [note]         requester; escalated ones: maintainers
            /clarify escalate CLR-N-NNN [reason]
            /clarify abandon CLR-N-NNN [reason]
            /clarify accept CLR-N-NNN                 confirm an agent's proposed answer (autonomy approve)
            /clarify status | /clarify help""";

    private static final Pattern COMMAND = Pattern.compile("^ {0,3}/clarify(?=\\s|$)(.*)$", Pattern.CASE_INSENSITIVE);
    private static final Pattern FENCE = Pattern.compile("^ {0,3}(`{3,}|~{3,})(.*)$");
    private static final Pattern QUOTE = Pattern.compile("^ {0,3}>");
    private static final Pattern INDENTED = Pattern.compile("^( {4,}|\\t)");
    private static final Pattern ID = Pattern.compile("(?i)CLR-\\d+-\\d{3,}");
    private static final Pattern ID_LIKE = Pattern.compile("(?i)CLR-\\S*");

    private CommandParser() {
    }

    public static List<CommentCommand> parse(String body) {
        if (body == null || body.isBlank()) {
            return List.of();
        }
        String[] lines = body.replace("\r\n", "\n").replace('\r', '\n').split("\n", -1);
        boolean[] command = commandLines(lines);
        List<CommentCommand> out = new ArrayList<>();
        for (int i = 0; i < lines.length; i++) {
            if (!command[i]) {
                continue;
            }
            Matcher m = COMMAND.matcher(lines[i]);
            if (!m.matches()) {
                continue;
            }
            StringBuilder rest = new StringBuilder(m.group(1));
            StringBuilder source = new StringBuilder(lines[i].strip());
            int j = i + 1;
            for (; j < lines.length && !command[j]; j++) {
                rest.append('\n').append(lines[j]);
                source.append('\n').append(lines[j]);
            }
            out.add(command(source.toString().stripTrailing(), rest.toString()));
            i = j - 1;
        }
        return List.copyOf(out);
    }

    /** Which lines start a command: outside code, quotes and HTML comments. */
    private static boolean[] commandLines(String[] lines) {
        boolean[] out = new boolean[lines.length];
        String fence = null;
        boolean inComment = false;
        for (int i = 0; i < lines.length; i++) {
            String line = lines[i];
            if (fence != null) {
                Matcher f = FENCE.matcher(line);
                if (f.matches() && f.group(1).charAt(0) == fence.charAt(0) && f.group(1).length() >= fence.length()
                        && f.group(2).isBlank()) {
                    fence = null;
                }
                continue;
            }
            boolean startsInComment = inComment;
            inComment = commentOpenAfter(line, inComment);
            if (startsInComment) {
                continue;
            }
            Matcher f = FENCE.matcher(line);
            if (f.matches() && !(f.group(1).charAt(0) == '`' && f.group(2).contains("`"))) {
                fence = f.group(1);
                continue;
            }
            if (QUOTE.matcher(line).find() || INDENTED.matcher(line).find()) {
                continue;
            }
            out[i] = COMMAND.matcher(line).matches();
        }
        return out;
    }

    /** Whether an HTML comment is still open at the end of {@code line}. */
    private static boolean commentOpenAfter(String line, boolean open) {
        int pos = 0;
        while (true) {
            if (open) {
                int end = line.indexOf("-->", pos);
                if (end < 0) {
                    return true;
                }
                open = false;
                pos = end + 3;
            } else {
                int start = line.indexOf("<!--", pos);
                if (start < 0) {
                    return false;
                }
                open = true;
                pos = start + 4;
            }
        }
    }

    private static CommentCommand command(String source, String rest) {
        Cursor c = new Cursor(rest);
        String word = c.word();
        if (word.isEmpty()) {
            return new CommentCommand.Invalid(source, "the command is missing after /clarify");
        }
        if (word.startsWith("@")) {
            return ask(source, word.substring(1), c);
        }
        String verb = word.toLowerCase(Locale.ROOT);
        switch (verb) {
            case "answer" -> {
                String id = c.peekWord();
                if (ID.matcher(id).matches()) {
                    c.word();
                    return new CommentCommand.Answer(source, id.toUpperCase(Locale.ROOT), c.text());
                }
                if (ID_LIKE.matcher(id).matches()) {
                    return badId(source, id);
                }
                return new CommentCommand.Answer(source, null, c.text());
            }
            case "followup", "follow-up" -> {
                String id = c.word();
                if (!ID.matcher(id).matches()) {
                    return badId(source, id);
                }
                return new CommentCommand.FollowUp(source, id.toUpperCase(Locale.ROOT), c.text());
            }
            case "resolve", "escalate", "abandon" -> {
                String id = c.word();
                if (!ID.matcher(id).matches()) {
                    return badId(source, id);
                }
                String upper = id.toUpperCase(Locale.ROOT);
                String text = c.text();
                String note = text.isBlank() ? null : text;
                return switch (verb) {
                    case "resolve" -> new CommentCommand.Resolve(source, upper, note);
                    case "escalate" -> new CommentCommand.Escalate(source, upper, note);
                    default -> new CommentCommand.Abandon(source, upper, note);
                };
            }
            case "accept" -> {
                String id = c.word();
                if (!ID.matcher(id).matches()) {
                    return badId(source, id);
                }
                return new CommentCommand.Accept(source, id.toUpperCase(Locale.ROOT));
            }
            case "status" -> {
                return new CommentCommand.Status(source);
            }
            case "help" -> {
                return new CommentCommand.Help(source);
            }
            default -> {
                return new CommentCommand.Invalid(source, "'" + word + "' is not a /clarify command; use @<role>, "
                        + "answer, followup, resolve, escalate, abandon, accept, status or help");
            }
        }
    }

    private static CommentCommand badId(String source, String id) {
        return new CommentCommand.Invalid(source, id.isEmpty() ? "the clarification id is missing (like CLR-42-001)"
                : "'" + id + "' is not a clarification id; ids look like CLR-42-001");
    }

    private static CommentCommand ask(String source, String role, Cursor c) {
        if (role.isEmpty() || !role.matches("[A-Za-z0-9][A-Za-z0-9_.-]*")) {
            return new CommentCommand.Invalid(source, "'@" + role + "' is not a role; write /clarify @architect <question>");
        }
        boolean blocking = true;
        String topic = null;
        while (c.peekWord().startsWith("--")) {
            String flag = c.word();
            switch (flag.toLowerCase(Locale.ROOT)) {
                case "--non-blocking" -> blocking = false;
                case "--topic" -> {
                    topic = c.quotedOrWord();
                    if (topic == null) {
                        return new CommentCommand.Invalid(source, "--topic needs a value, like --topic \"Auth method\"");
                    }
                }
                default -> {
                    return new CommentCommand.Invalid(source, "unknown option '" + flag
                            + "'; the options are --non-blocking and --topic \"...\"");
                }
            }
        }
        String question = c.text();
        if (question.isBlank()) {
            return new CommentCommand.Invalid(source, "the question is missing: /clarify @" + role + " <question>");
        }
        return new CommentCommand.Ask(source, role, blocking, topic, question);
    }

    /** Reads words, a quoted value and the remaining text of a command. */
    private static final class Cursor {
        private final String s;
        private int pos;

        Cursor(String s) {
            this.s = s;
        }

        private void skipSpaces() {
            while (pos < s.length() && (s.charAt(pos) == ' ' || s.charAt(pos) == '\t')) {
                pos++;
            }
        }

        /** The next word on the command line (never crosses a line end), or "". */
        String peekWord() {
            int save = pos;
            String w = word();
            pos = save;
            return w;
        }

        String word() {
            skipSpaces();
            int start = pos;
            while (pos < s.length() && !Character.isWhitespace(s.charAt(pos))) {
                pos++;
            }
            return s.substring(start, pos);
        }

        /** A value in double quotes ({@code \"} escapes a quote) or one word; null if none. */
        String quotedOrWord() {
            skipSpaces();
            if (pos < s.length() && s.charAt(pos) == '"') {
                StringBuilder b = new StringBuilder();
                for (int i = pos + 1; i < s.length(); i++) {
                    char ch = s.charAt(i);
                    if (ch == '\n') {
                        return null;
                    }
                    if (ch == '\\' && i + 1 < s.length() && s.charAt(i + 1) == '"') {
                        b.append('"');
                        i++;
                    } else if (ch == '"') {
                        pos = i + 1;
                        return b.toString();
                    } else {
                        b.append(ch);
                    }
                }
                return null;
            }
            String w = word();
            return w.isEmpty() ? null : w;
        }

        /** The rest: this line and the continuation lines, trimmed. */
        String text() {
            return s.substring(Math.min(pos, s.length())).strip();
        }
    }
}
