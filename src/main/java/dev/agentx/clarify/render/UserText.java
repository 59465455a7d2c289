package dev.agentx.clarify.render;

import java.util.ArrayList;
import java.util.List;

/**
 * User text (questions, answers, topics, options) as it goes into a comment. Outside code, what
 * could hide text, forge our hidden marker or mention someone is escaped
 * ({@link MarkdownRenderer#neutralise}). Inside code (a fenced code block, or a code span) the text
 * is kept as written: GitHub shows code verbatim, so an escape there would show as {@code &lt;} or
 * {@code @&#8203;}, and it reads no HTML and links no mention in code. A question about
 * {@code `List<String>`} or {@code `@Transactional`} shows as asked.
 *
 * <p>Text left as written is only safe where GitHub certainly reads code, so code is recognised
 * only where no reading of the Markdown can differ:
 * <ul>
 *   <li>A fenced block opens on a line that starts with three or more backticks (whose info
 *       string has none) or tildes, at the line's first column: such a line opens a fence whatever
 *       came before it (a fence is not a lazy continuation, and a list item's content would be
 *       indented). It runs to the line that closes it as CommonMark closes it (up to three spaces,
 *       at least as many of the same character, nothing else), or to the end of the quote, where
 *       GitHub ends it too.</li>
 *   <li>Code spans are read line by line, and only when every backtick string outside the fences
 *       finds its closing string on its own line. A string left open could pair with one on a
 *       later line of the same paragraph, which would shift every span after it; then nothing is
 *       taken for code. A line with a {@code |} is escaped whole: in a table GitHub splits cells
 *       before it looks for spans.</li>
 * </ul>
 * Where code is not recognised, the text is escaped as everywhere else: an escape that shows in
 * code is the worst that can happen.
 */
public final class UserText {
    private UserText() {
    }

    /** The text as a {@code >} quote, line by line. */
    public static String quote(String text) {
        String[] lines = text.strip().split("\\R", -1);
        boolean[] fenced = new boolean[lines.length];
        boolean certain = true;
        Fence open = null;
        for (int i = 0; i < lines.length; i++) {
            if (open == null) {
                open = Fence.opening(lines[i]);
                fenced[i] = open != null;
                // a fence indented by one to three columns opens one at the top, or in a list item
                // (where a line that follows less indented ends it): which, only the lists tell
                certain &= open != null || !Fence.mayOpenIndented(lines[i]);
            } else {
                fenced[i] = true;
                if (open.closedBy(lines[i])) {
                    open = null;
                }
            }
        }
        List<List<int[]>> spans = new ArrayList<>();
        for (int i = 0; i < lines.length && certain; i++) {
            List<int[]> s = fenced[i] ? List.of() : spans(lines[i]);
            certain = s != null;
            spans.add(s);
        }
        StringBuilder b = new StringBuilder();
        for (int i = 0; i < lines.length; i++) {
            String line = lines[i];
            b.append("> ").append(!certain ? MarkdownRenderer.neutralise(line) : fenced[i] ? line
                    : withSpans(line, spans.get(i), false)).append('\n');
        }
        return b.toString().stripTrailing();
    }

    /** One line of text shown in emphasis: {@code *text*}, its line breaks made spaces. */
    public static String inline(String text) {
        String line = text.replaceAll("\\R", " ");
        List<int[]> s = spans(line);
        return "*" + (s == null ? outside(line, true) : withSpans(line, s, true)) + "*";
    }

    /**
     * Where a cut at {@code end} of rendered text may fall so that it leaves no code span open:
     * {@code end}, or the start of the backtick string on the cut's line that the cut would leave
     * without its closing string (the text after it, written as it was, would show as text).
     */
    public static int cutBeforeOpenSpan(String rendered, int end) {
        int lineStart = rendered.lastIndexOf('\n', end - 1) + 1;
        String part = rendered.substring(lineStart, end);
        int open = firstUnclosed(part);
        return open < 0 ? end : lineStart + open;
    }

    private static String withSpans(String line, List<int[]> spans, boolean emphasis) {
        if (line.indexOf('|') >= 0) {
            return outside(line, emphasis);
        }
        StringBuilder b = new StringBuilder();
        int at = 0;
        for (int[] s : spans) {
            b.append(outside(line.substring(at, s[0]), emphasis)).append(line, s[0], s[1]);
            at = s[1];
        }
        return b.append(outside(line.substring(at), emphasis)).toString();
    }

    private static String outside(String text, boolean emphasis) {
        String safe = MarkdownRenderer.neutralise(text);
        return emphasis ? safe.replace("*", "\\*") : safe;
    }

    /**
     * The code spans of one line as CommonMark reads them, each as {start, end} with its backtick
     * strings, or null when a backtick string outside a span has no closing string on the line.
     */
    static List<int[]> spans(String line) {
        List<int[]> out = new ArrayList<>();
        return scan(line, out) < 0 ? out : null;
    }

    /** The start of the first backtick string in {@code part} left without its closing string, or -1. */
    private static int firstUnclosed(String part) {
        return scan(part, new ArrayList<>());
    }

    /**
     * Reads the code spans of {@code line} into {@code spans} up to the first backtick string
     * left without its closing string, and returns where that starts, or -1 if there is none.
     */
    private static int scan(String line, List<int[]> spans) {
        int i = 0;
        int n = line.length();
        while (i < n) {
            char c = line.charAt(i);
            if (c == '\\' && i + 1 < n && isAsciiPunctuation(line.charAt(i + 1))) {
                i += 2; // an escaped backtick opens nothing
                continue;
            }
            if (c != '`') {
                i++;
                continue;
            }
            int run = runLength(line, i);
            int close = closing(line, i + run, run);
            if (close < 0) {
                return i;
            }
            spans.add(new int[] {i, close + run});
            i = close + run;
        }
        return -1;
    }

    /** Where the next backtick string of exactly {@code run} backticks from {@code from} starts, or -1. */
    private static int closing(String line, int from, int run) {
        int j = from;
        while (j < line.length()) {
            if (line.charAt(j) != '`') {
                j++;
                continue;
            }
            int len = runLength(line, j);
            if (len == run) {
                return j;
            }
            j += len;
        }
        return -1;
    }

    private static int runLength(String s, int at) {
        int end = at;
        while (end < s.length() && s.charAt(end) == '`') {
            end++;
        }
        return end - at;
    }

    private static boolean isAsciiPunctuation(char c) {
        return c >= '!' && c <= '/' || c >= ':' && c <= '@' || c >= '[' && c <= '`' || c >= '{' && c <= '~';
    }

    /** Where the spaces and tabs that start {@code line} end. */
    private static int indentEnd(String line) {
        int i = 0;
        while (i < line.length() && (line.charAt(i) == ' ' || line.charAt(i) == '\t')) {
            i++;
        }
        return i;
    }

    /**
     * The columns the first {@code end} characters (spaces and tabs) of a quoted line indent it by:
     * the line follows {@code "> "}, so it starts at column 2, and a tab runs to the next multiple of 4.
     */
    private static int indentWidth(String line, int end) {
        int column = 2;
        for (int i = 0; i < end; i++) {
            column = line.charAt(i) == '\t' ? column + 4 - column % 4 : column + 1;
        }
        return column - 2;
    }

    /** An open fenced code block: its character and how many of them opened it. */
    private record Fence(char mark, int length) {
        /** The fence {@code line} opens, or null: three or more backticks or tildes from the first column. */
        static Fence opening(String line) {
            if (line.isEmpty() || line.charAt(0) != '`' && line.charAt(0) != '~') {
                return null;
            }
            char mark = line.charAt(0);
            int length = 0;
            while (length < line.length() && line.charAt(length) == mark) {
                length++;
            }
            if (length < 3 || mark == '`' && line.indexOf('`', length) >= 0) {
                return null; // a backtick fence's info string may not hold a backtick
            }
            return new Fence(mark, length);
        }

        /**
         * Whether {@code line}, indented by one to three columns, starts with three or more
         * backticks or tildes: a fence GitHub may open (see {@link #quote}).
         */
        static boolean mayOpenIndented(String line) {
            int i = indentEnd(line);
            int width = indentWidth(line, i);
            return width >= 1 && width <= 3 && i + 2 < line.length()
                    && (line.startsWith("```", i) || line.startsWith("~~~", i));
        }

        /**
         * Whether {@code line} closes this fence: indented by up to three columns, as many marks or
         * more, then only spaces or tabs.
         */
        boolean closedBy(String line) {
            int i = indentEnd(line);
            if (indentWidth(line, i) > 3) {
                return false;
            }
            int start = i;
            while (i < line.length() && line.charAt(i) == mark) {
                i++;
            }
            if (i - start < length) {
                return false;
            }
            for (; i < line.length(); i++) {
                if (line.charAt(i) != ' ' && line.charAt(i) != '\t') {
                    return false;
                }
            }
            return true;
        }
    }
}
