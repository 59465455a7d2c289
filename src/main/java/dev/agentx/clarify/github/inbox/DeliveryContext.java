package dev.agentx.clarify.github.inbox;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.agentx.clarify.github.Payloads;
import dev.agentx.clarify.store.InboundDelivery;
import java.io.IOException;
import org.slf4j.MDC;

/**
 * What a delivery's work knows of it before its processor reads it: its body parsed once, and the
 * delivery id, repository and issue every log line of its work carries (MDC keys;
 * {@code AGENTX_LOG_FORMAT=json} writes them as fields).
 */
public final class DeliveryContext {
    public static final String MDC_DELIVERY = "delivery";
    public static final String MDC_REPOSITORY = "repository";
    public static final String MDC_ISSUE = "issue";

    private DeliveryContext() {
    }

    /** The body as a JSON object, or null if it is not one (the server checked it; an old or hand-made file may not be). */
    static JsonNode parse(ObjectMapper json, byte[] body) {
        try {
            JsonNode p = json.readTree(body);
            return p != null && p.isObject() ? p : null;
        } catch (IOException e) {
            return null;
        }
    }

    /** Puts the delivery id, repository and issue into the MDC; returns the payload's action. */
    static String put(InboundDelivery d, JsonNode p) {
        MDC.put(MDC_DELIVERY, d.id());
        if (p == null) {
            return "";
        }
        String repo = p.path("repository").path("full_name").asText("");
        int issue = Payloads.issueNumber(p);
        if (!repo.isEmpty()) {
            MDC.put(MDC_REPOSITORY, repo);
        }
        if (issue > 0) {
            MDC.put(MDC_ISSUE, String.valueOf(issue));
        }
        return p.path("action").asText("");
    }

    static void clear() {
        MDC.remove(MDC_DELIVERY);
        MDC.remove(MDC_REPOSITORY);
        MDC.remove(MDC_ISSUE);
    }
}
