package dev.agentx.clarify.files;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import java.io.IOException;

/**
 * {@link JsonParser#getIntValue} and {@link JsonParser#getLongValue} for the small integers our
 * files hold, read from the token's characters. jackson-core's own number parsing starts with
 * {@code NumberInput}, whose class initialiser compiles a regular expression, a cost every
 * CLI run would pay to read ledgers and the monitor index. Anything but a plain integer token short
 * that fits goes to jackson-core, so values, errors and messages are its own.
 */
public final class JsonNumbers {
    private static final int INT_DIGITS = 9;
    private static final int LONG_DIGITS = 19;

    private JsonNumbers() {
    }

    public static int intValue(JsonParser p) throws IOException {
        long v = small(p, INT_DIGITS);
        return v == Long.MIN_VALUE ? p.getIntValue() : (int) v;
    }

    public static long longValue(JsonParser p) throws IOException {
        long v = small(p, LONG_DIGITS);
        return v == Long.MIN_VALUE ? p.getLongValue() : v;
    }

    /** The current integer token's value if it has at most maxDigits digits and fits a long, else Long.MIN_VALUE. */
    private static long small(JsonParser p, int maxDigits) throws IOException {
        if (p.currentToken() != JsonToken.VALUE_NUMBER_INT) {
            return Long.MIN_VALUE;
        }
        char[] text = p.getTextCharacters();
        int from = p.getTextOffset();
        int end = from + p.getTextLength();
        boolean negative = from < end && text[from] == '-';
        if (negative) {
            from++;
        }
        if (from == end || end - from > maxDigits) {
            return Long.MIN_VALUE;
        }
        long v = 0;
        for (int i = from; i < end; i++) {
            char c = text[i];
            if (c < '0' || c > '9' || v > (Long.MAX_VALUE - (c - '0')) / 10) {
                return Long.MIN_VALUE;
            }
            v = v * 10 + (c - '0');
        }
        return negative ? -v : v;
    }
}
