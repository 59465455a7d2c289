package dev.agentx.clarify.store;

import java.time.Instant;

/** A verified webhook delivery as kept in the inbox: GitHub's delivery id, event name and the raw body. */
public record InboundDelivery(String id, String event, Instant receivedAt, byte[] body) {
}
