package dev.agentx.clarify.render;

/**
 * GitHub refuses an issue comment longer than {@value #MAX} characters, and a refused reply would
 * leave the person who asked with no word of why. Every comment the App posts is fitted here: long
 * user text is cut with a visible note of how much was left out, and the hidden marker that ends a
 * comment is kept whole, so the comment stays parseable by {@code agentx sync}. Lengths are counted
 * in UTF-16 units, which is never fewer than the characters GitHub counts.
 */
public final class CommentLimit {
    /** GitHub's limit on a comment body. */
    public static final int MAX = 65_536;
    /** How much of a command the App quotes back in a reply. */
    public static final int QUOTED_COMMAND = 1_000;
    private static final String MARKER_START = "\n<!-- agentx:";

    private CommentLimit() {
    }

    /** {@code text} cut to at most {@code max} characters, ending in a note of what was cut. */
    public static String cut(String text, int max) {
        if (text.length() <= max) {
            return text;
        }
        // the note for the whole length is at least as long as the note for what is left out
        int end = max - note(text.length()).length();
        if (end <= 0) {
            return text.substring(0, Math.max(0, max));
        }
        if (Character.isHighSurrogate(text.charAt(end - 1))) {
            end--; // never split a character in two
        }
        return text.substring(0, end) + note(text.length() - end);
    }

    /**
     * {@code body} fitted to {@code max} characters: the text before its trailing hidden marker is
     * cut (with the note), the marker kept whole.
     */
    public static String fit(String body, int max) {
        if (body.length() <= max) {
            return body;
        }
        int marker = body.lastIndexOf(MARKER_START);
        if (marker < 0 || !body.stripTrailing().endsWith("-->")) {
            return cut(body, max);
        }
        String tail = body.substring(marker);
        return cut(body.substring(0, marker), Math.max(0, max - tail.length())) + tail;
    }

    private static String note(int left) {
        return "\n\n*[... " + String.format("%,d", left) + " more characters not shown]*";
    }
}
