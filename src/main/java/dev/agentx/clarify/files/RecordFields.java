package dev.agentx.clarify.files;

import com.fasterxml.jackson.core.JsonParseException;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import java.io.IOException;
import java.time.Instant;

/**
 * Checked field reads for the hand-written readers of journal records (the inbox's and outbox's),
 * which a start runs over every record: half the time of binding each record with Jackson, with
 * the same refusals (a wrong type, trailing content). Each takes the parser on the value's token.
 */
public final class RecordFields {
    private RecordFields() {
    }

    /** Moves to the record's opening brace; fails if the record is not a JSON object. */
    public static void start(JsonParser p, String what) throws IOException {
        if (p.nextToken() != JsonToken.START_OBJECT) {
            throw new JsonParseException(p, what + " must be a JSON object");
        }
    }

    /** Fails if anything follows the record's closing brace. */
    public static void end(JsonParser p) throws IOException {
        if (p.nextToken() != null) {
            throw new JsonParseException(p, "content after the record's JSON object");
        }
    }

    /** A string or null. */
    public static String string(JsonParser p, JsonToken v) throws IOException {
        if (v == JsonToken.VALUE_NULL) {
            return null;
        }
        if (v != JsonToken.VALUE_STRING) {
            throw new JsonParseException(p, "'" + p.currentName() + "' must be a string");
        }
        return p.getText();
    }

    /** An integer. */
    public static long integer(JsonParser p, JsonToken v) throws IOException {
        if (v != JsonToken.VALUE_NUMBER_INT) {
            throw new JsonParseException(p, "'" + p.currentName() + "' must be an integer");
        }
        return JsonNumbers.longValue(p);
    }

    /** An instant as {@link Instant#toString} writes it (any form {@link Instant#parse} takes), or null. */
    public static Instant instant(JsonParser p, JsonToken v) throws IOException {
        String text = string(p, v);
        return text == null ? null : IsoInstant.parse(text);
    }

    /**
     * A value bound to {@code type} by the parser's codec (a tree for {@code JsonNode}), or null for
     * JSON null. Without {@code read} it is skipped unread and null: for a reader that reads in full
     * only the records still live at the end.
     */
    public static <T> T value(JsonParser p, JsonToken v, Class<T> type, boolean read) throws IOException {
        if (!read) {
            p.skipChildren();
            return null;
        }
        return v == JsonToken.VALUE_NULL ? null : p.readValueAs(type);
    }

    public static JsonParseException unknown(JsonParser p, String field) {
        return new JsonParseException(p, "unknown field '" + field + "'");
    }
}
