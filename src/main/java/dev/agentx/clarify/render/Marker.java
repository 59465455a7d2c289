package dev.agentx.clarify.render;

import com.fasterxml.jackson.core.JsonFactoryBuilder;
import com.fasterxml.jackson.core.SerializableString;
import com.fasterxml.jackson.core.io.CharacterEscapes;
import com.fasterxml.jackson.core.json.JsonWriteFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.agentx.clarify.files.IsoInstant;
import dev.agentx.clarify.protocol.Autonomy;
import dev.agentx.clarify.protocol.ClarificationId;
import dev.agentx.clarify.protocol.ClarificationRecord;
import dev.agentx.clarify.protocol.CodeLine;
import dev.agentx.clarify.protocol.EntryType;
import dev.agentx.clarify.protocol.Status;
import dev.agentx.clarify.protocol.ThreadEntry;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * The hidden marker that ends every comment the app posts:
 * {@code <!-- agentx:{"id":"CLR-N-NNN","round":R,"kind":"...","v":1,"record":{...},"index":I,"entry":{...}} -->}.
 * {@code id}, {@code round} and {@code kind} come first. {@code record} is the record's
 * state when the comment was rendered, without its thread (with {@code codeLine} when the question
 * was asked on a line of code); {@code index} and {@code entry} are the
 * thread entry the comment shows (absent on stale notices). Together they let {@code agentx sync}
 * rebuild the ledger exactly. The JSON is ASCII: non-ASCII characters and {@code - < > & @} inside
 * strings are written as {@code \\uXXXX} escapes, so user text can never close the HTML comment,
 * and no {@code @name} of user text appears in the comment's raw body (a workflow that starts an
 * agent when a comment's body contains {@code @claude} would otherwise start it on any comment
 * quoting such text, not only on the one that wakes it).
 *
 * @param record the record's fields without its thread
 * @param index the thread index of {@code entry}, or -1
 * @param entry the thread entry, or null (stale notices)
 */
public record Marker(String id, int round, MarkdownRenderer.Kind kind, ClarificationRecord record, int index,
                     ThreadEntry entry) {
    public static final String OPEN = "<!-- agentx:";
    public static final String CLOSE = " -->";
    public static final int VERSION = 1;

    private static final ObjectMapper JSON = JsonMapper.builder(new JsonFactoryBuilder()
            .characterEscapes(new SafeEscapes()).enable(JsonWriteFeature.ESCAPE_NON_ASCII).build()).build();

    /** Escapes {@code - < > & @} as well as the standard set, so no {@code -->} and no raw mention can appear. */
    private static final class SafeEscapes extends CharacterEscapes {
        private static final long serialVersionUID = 1L;
        private final int[] table;

        SafeEscapes() {
            table = standardAsciiEscapesForJSON();
            for (char c : new char[] {'-', '<', '>', '&', '@'}) {
                table[c] = ESCAPE_STANDARD;
            }
        }

        @Override
        public int[] getEscapeCodesForAscii() {
            return table;
        }

        @Override
        public SerializableString getEscapeSequence(int ch) {
            return null;
        }
    }

    /** The marker text, {@code <!-- agentx:{...} -->}. */
    public String render() {
        ObjectNode o = JSON.createObjectNode();
        o.put("v", VERSION);
        o.set("record", header(record));
        if (entry != null) {
            o.put("index", index);
            o.set("entry", entry(entry));
        }
        String rest;
        try {
            rest = JSON.writeValueAsString(o);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        ClarificationId.parse(id); // the id is written plain: it must be CLR-<n>-<seq>
        return OPEN + "{\"id\":\"" + id + "\",\"round\":" + round + ",\"kind\":\"" + kind.wire() + "\","
                + rest.substring(1) + CLOSE;
    }

    private static ObjectNode header(ClarificationRecord r) {
        ObjectNode h = JSON.createObjectNode();
        h.put("from", r.from());
        h.put("to", r.to());
        h.put("topic", r.topic());
        h.put("blocking", r.blocking());
        h.put("status", r.status().wire());
        h.put("round", r.round());
        h.put("maxRounds", r.maxRounds());
        h.put("created", r.created().toString());
        h.put("staleAfter", r.staleAfter().toString());
        if (r.reaskedAt() != null) {
            h.put("reaskedAt", r.reaskedAt().toString());
        }
        if (r.resolvedAt() != null) {
            h.put("resolvedAt", r.resolvedAt().toString());
        }
        if (!r.options().isEmpty()) {
            ArrayNode a = h.putArray("options");
            r.options().forEach(a::add);
        }
        if (r.autonomy() != null) {
            h.put("autonomy", r.autonomy().wire());
        }
        if (r.codeLine() != null) {
            h.set("codeLine", JSON.valueToTree(r.codeLine()));
        }
        return h;
    }

    private static ObjectNode entry(ThreadEntry e) {
        ObjectNode o = JSON.createObjectNode();
        o.put("round", e.round());
        o.put("from", e.from());
        o.put("type", e.type().wire());
        o.put("body", e.body());
        o.put("timestamp", e.timestamp().toString());
        if (e.choice() != null) {
            o.put("choice", e.choice());
        }
        if (e.proposed() != null) {
            o.put("proposed", e.proposed());
        }
        if (e.acceptedBy() != null) {
            o.put("acceptedBy", e.acceptedBy());
        }
        if (e.openQuestionId() != null) {
            o.put("openQuestionId", e.openQuestionId());
        }
        if (e.request() != null) {
            o.put("request", e.request());
        }
        return o;
    }

    /**
     * The marker at the end of a comment body. Empty when the body has none; a marker that is
     * there but unreadable (damaged, or of another version) is an {@link IllegalArgumentException}
     * saying what is wrong.
     */
    public static Optional<Marker> parse(String body) {
        String text = body.stripTrailing();
        int at = text.lastIndexOf(OPEN);
        if (at < 0 || !text.endsWith(CLOSE.strip())) {
            return Optional.empty();
        }
        String json = text.substring(at + OPEN.length(), text.length() - CLOSE.strip().length()).strip();
        JsonNode o;
        try {
            o = JSON.readTree(json);
        } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
            throw new IllegalArgumentException("the marker is not valid JSON: " + e.getOriginalMessage());
        }
        if (o == null || !o.isObject()) {
            throw new IllegalArgumentException("the marker is not a JSON object");
        }
        String id = text(o, "id");
        MarkdownRenderer.Kind kind = MarkdownRenderer.Kind.fromWire(text(o, "kind"));
        int round = number(o, "round");
        int v = number(o, "v");
        if (v != VERSION) {
            throw new IllegalArgumentException("marker of " + id + " has version " + v + "; this agentx reads "
                    + VERSION);
        }
        JsonNode h = o.get("record");
        if (h == null || !h.isObject()) {
            throw new IllegalArgumentException("marker of " + id + " carries no record; it cannot be rebuilt "
                    + "from comments");
        }
        List<String> options = new ArrayList<>();
        h.path("options").forEach(n -> options.add(n.asText()));
        ClarificationRecord record = new ClarificationRecord(id, text(h, "from"), text(h, "to"), text(h, "topic"),
                bool(h, "blocking"), Status.fromWire(text(h, "status")), number(h, "round"), number(h, "maxRounds"),
                instant(h, "created"), instant(h, "staleAfter"),
                h.hasNonNull("resolvedAt") ? instant(h, "resolvedAt") : null, options, List.of(),
                h.hasNonNull("autonomy") ? Autonomy.fromWire(text(h, "autonomy")) : null,
                h.hasNonNull("reaskedAt") ? instant(h, "reaskedAt") : null,
                h.hasNonNull("codeLine") ? codeLine(id, h.get("codeLine")) : null);
        ThreadEntry entry = null;
        int index = -1;
        if (o.has("entry")) {
            JsonNode e = o.get("entry");
            index = number(o, "index");
            entry = new ThreadEntry(number(e, "round"), text(e, "from"), EntryType.fromWire(text(e, "type")),
                    text(e, "body"), instant(e, "timestamp"), e.has("choice") ? number(e, "choice") : null,
                    e.has("proposed") ? bool(e, "proposed") : null,
                    e.has("acceptedBy") ? text(e, "acceptedBy") : null,
                    e.has("openQuestionId") ? text(e, "openQuestionId") : null,
                    e.has("request") ? text(e, "request") : null);
        }
        return Optional.of(new Marker(id, round, kind, record, index, entry));
    }

    /** The line of code a record was asked on, as {@link #header} writes it. */
    private static CodeLine codeLine(String id, JsonNode n) {
        try {
            return JSON.treeToValue(n, CodeLine.class);
        } catch (com.fasterxml.jackson.core.JsonProcessingException | IllegalArgumentException e) {
            Throwable why = e.getCause() instanceof IllegalArgumentException i ? i : e;
            throw new IllegalArgumentException("marker of " + id + " has a 'codeLine' that cannot be read: "
                    + (why instanceof com.fasterxml.jackson.core.JsonProcessingException j ? j.getOriginalMessage()
                    : why.getMessage()));
        }
    }

    private static String text(JsonNode o, String field) {
        JsonNode n = o.get(field);
        if (n == null || !n.isTextual()) {
            throw new IllegalArgumentException("marker field '" + field + "' must be a string");
        }
        return n.asText();
    }

    private static int number(JsonNode o, String field) {
        JsonNode n = o.get(field);
        if (n == null || !n.isInt()) {
            throw new IllegalArgumentException("marker field '" + field + "' must be an integer");
        }
        return n.asInt();
    }

    private static boolean bool(JsonNode o, String field) {
        JsonNode n = o.get(field);
        if (n == null || !n.isBoolean()) {
            throw new IllegalArgumentException("marker field '" + field + "' must be true or false");
        }
        return n.asBoolean();
    }

    private static Instant instant(JsonNode o, String field) {
        try {
            return IsoInstant.parse(text(o, field));
        } catch (java.time.format.DateTimeParseException e) {
            throw new IllegalArgumentException("marker field '" + field + "' is not an ISO-8601 instant");
        }
    }
}
