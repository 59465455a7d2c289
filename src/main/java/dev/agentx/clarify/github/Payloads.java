package dev.agentx.clarify.github;

import com.fasterxml.jackson.databind.JsonNode;

/**
 * Numbers read from a webhook payload, checked rather than narrowed: Jackson's {@code asInt()}
 * wraps a number past {@code int} around (4294967303 would become issue 7), so a number that is
 * not a whole number in range is treated as no number at all.
 */
public final class Payloads {
    /** What {@link #issueNumber} returns for a payload whose issue number is not a usable one. */
    public static final int INVALID = -1;

    private Payloads() {
    }

    /** The payload's {@code issue.number}: 0 when there is none, {@link #INVALID} when it is out of range or not whole. */
    public static int issueNumber(JsonNode payload) {
        JsonNode n = payload.path("issue").path("number");
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
     * received; others may run side by side. The repository and issue the payload is about, or ""
     * for one about no issue (ping, installation).
     */
    public static String orderKey(JsonNode payload) {
        String repo = payload.path("repository").path("full_name").asText("");
        int issue = issueNumber(payload);
        return repo.isEmpty() || issue <= 0 ? "" : repo + "#" + issue;
    }
}
