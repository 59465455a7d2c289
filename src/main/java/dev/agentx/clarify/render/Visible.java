package dev.agentx.clarify.render;

/**
 * Text from agents and from GitHub, made safe to print on a person's terminal: every control
 * character but newline and tab (ESC, BEL, carriage return, DEL, the C1 range) is shown as its
 * escape, {@code \u001b}, so a question cannot recolour, move the cursor, retitle the window or
 * ring the bell of whoever reads it. JSON output needs none of this: JSON escapes them itself.
 */
public final class Visible {
    private Visible() {
    }

    /** Whether {@code c} is shown as its escape. */
    public static boolean hidden(char c) {
        return c < 0x20 && c != '\n' && c != '\t' || c >= 0x7f && c <= 0x9f;
    }

    /** {@code s} with its control characters shown as escapes. */
    public static String text(String s) {
        if (s == null) {
            return null;
        }
        int i = 0;
        while (i < s.length() && !hidden(s.charAt(i))) {
            i++;
        }
        if (i == s.length()) {
            return s;
        }
        StringBuilder b = new StringBuilder(s.length() + 16).append(s, 0, i);
        for (; i < s.length(); i++) {
            char c = s.charAt(i);
            if (hidden(c)) {
                b.append("\\u").append(String.format("%04x", (int) c));
            } else {
                b.append(c);
            }
        }
        return b.toString();
    }
}
