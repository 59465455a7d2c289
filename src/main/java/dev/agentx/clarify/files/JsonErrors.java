package dev.agentx.clarify.files;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;

/** JSON problems as users read them: one line, with the line and column where reading stopped. */
public final class JsonErrors {
    private JsonErrors() {
    }

    /** A one-line reason with the line and column where the parser stopped. */
    public static String describe(JsonProcessingException e) {
        String msg = e.getOriginalMessage() == null ? e.getClass().getSimpleName() : e.getOriginalMessage();
        msg = msg.replaceAll("\\s+", " ");
        if (msg.length() > 300) {
            msg = msg.substring(0, 297) + "...";
        }
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
