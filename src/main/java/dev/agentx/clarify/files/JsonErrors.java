package dev.agentx.clarify.files;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import dev.agentx.clarify.protocol.Shorten;

/** JSON problems as users read them: one line, with the line and column where reading stopped. */
public final class JsonErrors {
    private JsonErrors() {
    }

    /** A one-line reason with the line and column where the parser stopped. */
    public static String describe(JsonProcessingException e) {
        String msg = e.getOriginalMessage() == null ? e.getClass().getSimpleName() : e.getOriginalMessage();
        // Jackson names a location inside the message as "[Source: ...; line: 1, column: 37]"
        msg = msg.replaceAll("\\[Source: [^\\]]*?line: (\\d+), column: (\\d+)\\]", "line $1, column $2");
        msg = Shorten.to(msg.replaceAll("\\s+", " "), 300);
        if (e.getLocation() != null && e.getLocation().getLineNr() > 0) {
            msg += " (line " + e.getLocation().getLineNr() + ", column " + e.getLocation().getColumnNr() + ")";
        }
        return msg;
    }

    /** A problem found by a streaming reader, located where the parser is now. */
    public static JsonProcessingException problem(JsonParser p, String message) {
        return new JsonProcessingException(message, p.currentLocation()) {
        };
    }
}
