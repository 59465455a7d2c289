package dev.agentx.clarify.lock;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyOrder;
import java.time.Instant;

/**
 * Content of a {@code .lock} file: SPEC-1 section 4.4 ({@code pid, timestamp, agent}) plus the
 * owner's unique token, host and process start time, so that only the owner releases it and a
 * dead owner on this host is recognised at once, even if its pid was reused.
 */
@JsonPropertyOrder({"pid", "timestamp", "agent", "token", "host", "processStart"})
@JsonInclude(JsonInclude.Include.NON_NULL)
public record LockInfo(long pid, Instant timestamp, String agent, String token, String host, Instant processStart) {
}
