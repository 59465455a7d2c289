package dev.agentx.clarify.github;

import com.fasterxml.jackson.core.JsonParseException;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.MissingNode;
import java.io.IOException;

/**
 * What the server reads of a webhook payload before its handlers: the numbers, checked rather
 * than narrowed (Jackson's {@code asInt()} wraps a number past {@code int} around, 4294967303
 * would become issue 7, so a number that is not a whole number in range is treated as no number
 * at all), the order key, and the {@link Head} the acknowledgement reads without the whole tree.
 */
public final class Payloads {
    /** Reads the parts of {@link #head}; without FAIL_ON_TRAILING_TOKENS, which would refuse the rest of the body. */
    private static final ObjectMapper JSON = new ObjectMapper();
    /** What {@link #issueNumber} returns for a payload whose issue number is not a usable one. */
    public static final int INVALID = -1;

    private Payloads() {
    }

    /**
     * The payload's {@code issue.number}, or for an event of a pull request (a review comment) its
     * {@code pull_request.number}, which is its issue's: 0 when there is none, {@link #INVALID}
     * when it is out of range or not whole.
     */
    public static int issueNumber(JsonNode payload) {
        JsonNode issue = payload.path("issue").path("number");
        return number(issue.isMissingNode() ? payload.path("pull_request").path("number") : issue);
    }

    private static int number(JsonNode n) {
        if (n.isMissingNode() || n.isNull()) {
            return 0;
        }
        return n.isIntegralNumber() && n.canConvertToInt() && n.intValue() > 0 ? n.intValue() : INVALID;
    }

    /** A positive whole number that fits a {@code long} (an installation's or a comment's id), else 0. */
    public static long id(JsonNode n) {
        return n != null && n.isIntegralNumber() && n.canConvertToLong() && n.longValue() > 0 ? n.longValue() : 0;
    }

    /**
     * What orders deliveries: those with the same key are processed one after another in the order
     * received; others may run side by side. The repository (by GitHub's id of it, which a rename
     * or a transfer keeps) and the issue the payload is about, as {@code <id>#<number>}, or "" for
     * one about no issue (ping, installation) or about no repository with an id.
     */
    public static String orderKey(JsonNode payload) {
        return orderKey(payload.path("repository").path("id"), issueNumber(payload));
    }

    private static String orderKey(JsonNode repositoryId, int issue) {
        long repo = id(repositoryId);
        return repo == 0 || issue <= 0 ? "" : repo + "#" + issue;
    }

    /**
     * What the acknowledgement reads of a payload: its {@code action}, {@code repository.id},
     * {@code issue.number} (else {@code pull_request.number}, as {@link Payloads#issueNumber}) and
     * {@code installation} (null when absent), each as the payload's tree would give it (a missing
     * one as a missing node, a name given twice as its last).
     */
    public record Head(JsonNode action, JsonNode repositoryId, JsonNode issueNumber, JsonNode installation) {
        /** As {@link Payloads#issueNumber}. */
        public int issue() {
            return number(issueNumber);
        }

        /** As {@link Payloads#orderKey}. */
        public String orderKey() {
            return Payloads.orderKey(repositoryId, issue());
        }
    }

    /**
     * Reads the {@link Head} of a JSON object in one pass, without building the tree of the
     * rest (a delivery's body is mostly a repository and a user the acknowledgement does not read),
     * while checking that all of it is JSON as {@code ObjectMapper.readTree} would: nesting within
     * the parser's limits and nothing after the object. Null when the body is no JSON object.
     *
     * @throws JsonParseException (or another {@code JsonProcessingException}) when it is not JSON
     */
    public static Head head(byte[] body) throws IOException {
        try (JsonParser p = JSON.createParser(body)) {
            if (p.nextToken() != JsonToken.START_OBJECT) {
                if (p.currentToken() != null) {
                    p.skipChildren(); // an array or a scalar: still refused as not JSON if it is malformed
                    trailing(p);
                }
                return null;
            }
            JsonNode action = MissingNode.getInstance();
            JsonNode repositoryId = MissingNode.getInstance();
            JsonNode number = MissingNode.getInstance();
            JsonNode pull = MissingNode.getInstance();
            JsonNode installation = null;
            while (p.nextToken() == JsonToken.FIELD_NAME) {
                String name = p.currentName();
                p.nextToken();
                switch (name) {
                    case "action" -> action = JSON.readTree(p);
                    case "installation" -> installation = JSON.readTree(p);
                    case "repository" -> repositoryId = member(p, "id");
                    case "issue" -> number = member(p, "number");
                    case "pull_request" -> pull = member(p, "number");
                    default -> p.skipChildren();
                }
            }
            trailing(p);
            return new Head(action, repositoryId, number.isMissingNode() ? pull : number, installation);
        }
    }

    /** The member {@code name} of the object the parser is at (the last if given twice), then past it. */
    private static JsonNode member(JsonParser p, String name) throws IOException {
        JsonNode found = MissingNode.getInstance();
        if (p.currentToken() != JsonToken.START_OBJECT) {
            p.skipChildren();
            return found;
        }
        while (p.nextToken() == JsonToken.FIELD_NAME) {
            String field = p.currentName();
            p.nextToken();
            if (field.equals(name)) {
                found = JSON.readTree(p);
            } else {
                p.skipChildren();
            }
        }
        return found;
    }

    private static void trailing(JsonParser p) throws IOException {
        JsonToken next = p.nextToken();
        if (next != null) {
            throw new JsonParseException(p, "content after the JSON value (" + next + ")");
        }
    }
}
