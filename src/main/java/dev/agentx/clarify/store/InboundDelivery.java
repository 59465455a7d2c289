package dev.agentx.clarify.store;

import java.time.Instant;
import java.util.regex.Pattern;

/** A verified webhook delivery as kept in the inbox: GitHub's delivery id, event name and the raw body. */
public record InboundDelivery(String id, String event, Instant receivedAt, byte[] body) {
    /** What a delivery id may be: GitHub's are GUIDs; this also keeps any id usable in a file name. */
    private static final Pattern ID = Pattern.compile("[A-Za-z0-9][A-Za-z0-9._-]{0,99}");

    public static boolean validId(String id) {
        return id != null && ID.matcher(id).matches();
    }
}
