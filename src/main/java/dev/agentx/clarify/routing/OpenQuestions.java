package dev.agentx.clarify.routing;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.agentx.clarify.files.IsoInstant;
import dev.agentx.clarify.files.JsonErrors;
import dev.agentx.clarify.files.JsonSupport;
import dev.agentx.clarify.protocol.ClarifyException;
import dev.agentx.clarify.protocol.ErrorCode;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.HexFormat;
import java.util.List;
import java.util.Set;

/**
 * The agent question protocol: an agent's output (a JSON object) holding {@code open_questions} or
 * {@code openQuestions}, an array of {@code {id?, text, createdAt?}}. A question without an id gets
 * {@code text-<first 12 hex digits of the SHA-256 of its text>}, so the same output read twice
 * names its questions the same way. Pure: parsing only, every problem is a VALIDATION error that
 * names the source and the question.
 */
public final class OpenQuestions {
    public static final int MAX_ID = 200;

    private static final ObjectMapper MAPPER = JsonSupport.mapper();

    /** One open question; {@code createdAt} may be null. */
    public record OpenQuestion(String id, String text, Instant createdAt) {
    }

    private OpenQuestions() {
    }

    public static List<OpenQuestion> parse(String source, String json) {
        JsonNode root;
        try {
            root = MAPPER.readTree(json);
        } catch (JsonProcessingException e) {
            throw invalid(source, "is not valid JSON: " + JsonErrors.describe(e));
        }
        if (root == null || !root.isObject()) {
            throw invalid(source, "must hold a JSON object with \"open_questions\" or \"openQuestions\"");
        }
        boolean snake = root.has("open_questions");
        boolean camel = root.has("openQuestions");
        if (snake && camel) {
            throw invalid(source, "holds both \"open_questions\" and \"openQuestions\"; keep one");
        }
        if (!snake && !camel) {
            throw invalid(source, "holds neither \"open_questions\" nor \"openQuestions\"");
        }
        String key = snake ? "open_questions" : "openQuestions";
        JsonNode array = root.get(key);
        if (!array.isArray()) {
            throw invalid(source, "field \"" + key + "\" must be an array of {id?, text, createdAt?}");
        }
        List<OpenQuestion> out = new ArrayList<>();
        Set<String> ids = new HashSet<>();
        for (int i = 0; i < array.size(); i++) {
            String where = key + "[" + i + "]";
            JsonNode q = array.get(i);
            if (!q.isObject()) {
                throw invalid(source, where + " must be an object {id?, text, createdAt?}");
            }
            JsonNode textNode = q.get("text");
            if (textNode == null || !textNode.isTextual() || textNode.asText().isBlank()) {
                throw invalid(source, where + " needs a non-empty string \"text\"");
            }
            String text = textNode.asText().strip();
            String id = id(source, where, q.get("id"), text);
            if (!ids.add(id)) {
                throw invalid(source, where + " repeats the id '" + id + "'; ids must be unique");
            }
            Instant createdAt = null;
            JsonNode created = q.get("createdAt");
            if (created != null && !created.isNull()) {
                try {
                    createdAt = IsoInstant.parse(created.asText());
                } catch (DateTimeParseException e) {
                    throw invalid(source, where + " has createdAt '" + created.asText()
                            + "', which is not an ISO-8601 time like 2026-02-26T10:00:00Z");
                }
            }
            out.add(new OpenQuestion(id, text, createdAt));
        }
        return out;
    }

    private static String id(String source, String where, JsonNode node, String text) {
        if (node == null || node.isNull()) {
            return "text-" + sha256(text).substring(0, 12);
        }
        if (!node.isTextual() && !node.isIntegralNumber()) {
            throw invalid(source, where + " has an id that is neither a string nor an integer");
        }
        String id = node.asText().strip();
        if (id.isEmpty() || id.length() > MAX_ID || id.chars().anyMatch(c -> c < 0x20 || c == 0x7f)) {
            throw invalid(source, where + " has an id that is empty, longer than " + MAX_ID
                    + " characters or not one line");
        }
        return id;
    }

    private static String sha256(String text) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(text.getBytes(StandardCharsets.UTF_8)));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    private static ClarifyException invalid(String source, String problem) {
        return new ClarifyException(ErrorCode.VALIDATION, source + " " + problem + ".");
    }
}
