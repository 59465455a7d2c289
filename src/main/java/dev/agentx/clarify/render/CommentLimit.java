package dev.agentx.clarify.render;

import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * GitHub refuses an issue comment longer than {@value #MAX} characters, and a refused reply would
 * leave the person who asked with no word of why. Every comment the App posts is fitted here: long
 * user text is cut with a visible note of how much was left out, and the hidden marker that ends a
 * comment is kept whole, so the comment stays parseable by {@code agentx sync}. Lengths are counted
 * in UTF-16 units, which is never fewer than the characters GitHub counts. A cut never splits a
 * character outside the Basic Multilingual Plane, nor an HTML character reference such as the
 * {@code @&#8203;} the renderer writes (half of one would show as stray text), and it never leaves
 * a code span open: the user text in it is written as it was ({@link UserText}), and without its
 * closing backticks GitHub would read it as text.
 */
public final class CommentLimit {
    /** GitHub's limit on a comment body. */
    public static final int MAX = 65_536;
    /** How much of a command the App quotes back in a reply. */
    public static final int QUOTED_COMMAND = 1_000;
    private static final String MARKER_START = "\n<!-- agentx:";
    /** A character reference, its ';' optional: {@code &#digits}, {@code &#xhex} or {@code &name}. */
    private static final Pattern REFERENCE = Pattern.compile("&(?:#[0-9]+|#[xX][0-9a-fA-F]+|[A-Za-z][A-Za-z0-9]*);?");
    /** Longer than any reference: the longest named one, with its '&' and ';', has 33 characters. */
    private static final int LONGEST_REFERENCE = 40;

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
        end = UserText.cutBeforeOpenSpan(text, beforeReference(text, end));
        return text.substring(0, end) + note(text.length() - end);
    }

    /**
     * {@code end}, or the start of the character reference it falls inside: the last '&' shortly
     * before {@code end} starts text that looks like a reference and runs on past {@code end} (a
     * ';' before {@code end} would have ended it).
     */
    private static int beforeReference(String text, int end) {
        int amp = text.lastIndexOf('&', end - 1);
        if (amp < 0 || amp < end - LONGEST_REFERENCE) {
            return end;
        }
        Matcher m = REFERENCE.matcher(text).region(amp, Math.min(text.length(), amp + LONGEST_REFERENCE));
        return m.lookingAt() && m.end() > end ? amp : end;
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
