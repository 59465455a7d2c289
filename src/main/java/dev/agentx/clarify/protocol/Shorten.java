package dev.agentx.clarify.protocol;

/**
 * Shortens text shown on one line (summaries, error messages) to a number of characters counted
 * in code points, so a character outside the Basic Multilingual Plane (an emoji) is never split
 * into a lone surrogate, which would corrupt the text stored or posted.
 */
public final class Shorten {
    private static final String ELLIPSIS = "...";

    private Shorten() {
    }

    /**
     * {@code text} as it is when it has at most {@code max} code points; else its first
     * {@code max - 3} code points followed by "...", {@code max} code points in all.
     */
    public static String to(String text, int max) {
        if (text.codePointCount(0, text.length()) <= max) {
            return text;
        }
        int keep = Math.max(0, max - ELLIPSIS.length());
        return text.substring(0, text.offsetByCodePoints(0, keep)) + ELLIPSIS;
    }

    /**
     * {@code text} as it is when it has at most {@code max} code points; else "..." followed by
     * its last {@code max - 3} code points: for text whose end says the most, such as a failing
     * program's diagnostics, where the cause comes last.
     */
    public static String toEnd(String text, int max) {
        int n = text.codePointCount(0, text.length());
        if (n <= max) {
            return text;
        }
        int keep = Math.max(0, max - ELLIPSIS.length());
        return ELLIPSIS + text.substring(text.offsetByCodePoints(0, n - keep));
    }
}
