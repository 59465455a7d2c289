package dev.agentx.clarify.deploy.replicas;

import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The little JSON the replicas check writes and reads, by hand: the check runs on the JDK alone
 * ({@code java -cp target/test-classes}), with no JSON library on its class path.
 */
final class JsonText {
    private JsonText() {
    }

    /** {@code s} as a JSON string, quoted and escaped. */
    static String string(String s) {
        StringBuilder b = new StringBuilder("\"");
        for (char c : s.toCharArray()) {
            switch (c) {
                case '"' -> b.append("\\\"");
                case '\\' -> b.append("\\\\");
                case '\n' -> b.append("\\n");
                case '\r' -> b.append("\\r");
                case '\t' -> b.append("\\t");
                default -> {
                    if (c < 0x20) {
                        b.append(String.format("\\u%04x", (int) c));
                    } else {
                        b.append(c);
                    }
                }
            }
        }
        return b.append('"').toString();
    }

    /** The first string value of {@code key} in a JSON object (enough for a comment's {@code body}). */
    static String stringField(String jsonText, String key) {
        Matcher m = Pattern.compile("\"" + Pattern.quote(key) + "\"\\s*:\\s*\"").matcher(jsonText);
        if (!m.find()) {
            return "";
        }
        StringBuilder b = new StringBuilder();
        for (int i = m.end(); i < jsonText.length(); i++) {
            char c = jsonText.charAt(i);
            if (c == '"') {
                break;
            }
            if (c == '\\' && i + 1 < jsonText.length()) {
                char e = jsonText.charAt(++i);
                switch (e) {
                    case 'n' -> b.append('\n');
                    case 'r' -> b.append('\r');
                    case 't' -> b.append('\t');
                    case 'b' -> b.append('\b');
                    case 'f' -> b.append('\f');
                    case 'u' -> {
                        b.append((char) Integer.parseInt(jsonText.substring(i + 1, i + 5), 16));
                        i += 4;
                    }
                    default -> b.append(e);
                }
            } else {
                b.append(c);
            }
        }
        return b.toString();
    }
}
