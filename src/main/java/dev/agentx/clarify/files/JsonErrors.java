package dev.agentx.clarify.files;

import com.fasterxml.jackson.core.JsonLocation;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import dev.agentx.clarify.protocol.Shorten;

/** JSON problems as users read them: one line, with the line and column where reading stopped. */
public final class JsonErrors {
    private JsonErrors() {
    }

    /** A one-line reason with the line and column where the parser stopped. */
    public static String describe(JsonProcessingException e) {
        return describe(e.getOriginalMessage() == null ? e.getClass().getSimpleName() : e.getOriginalMessage(),
                e.getLocation());
    }

    /** {@code message} as {@link #describe(JsonProcessingException)} shows a problem's, at {@code where}. */
    public static String describe(String message, JsonLocation where) {
        // Jackson names a location inside the message as "[Source: ...; line: 1, column: 37]"
        String msg = message.replaceAll("\\[Source: [^\\]]*?line: (\\d+), column: (\\d+)\\]", "line $1, column $2");
        msg = Shorten.to(msg.replaceAll("\\s+", " "), 300);
        if (where != null && where.getLineNr() > 0) {
            msg += " (line " + where.getLineNr() + ", column " + where.getColumnNr() + ")";
        }
        return msg;
    }

    /** A problem found by a streaming reader, located where the parser is now. */
    public static JsonProcessingException problem(JsonParser p, String message) {
        return problem(message, p.currentLocation());
    }

    /** A problem located at {@code where}. */
    public static JsonProcessingException problem(String message, JsonLocation where) {
        return new JsonProcessingException(message, where) {
        };
    }
}
