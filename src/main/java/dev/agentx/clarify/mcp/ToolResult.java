package dev.agentx.clarify.mcp;

import dev.agentx.clarify.protocol.ErrorCode;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * What a tool call returns: the text an agent reads, the same facts as structured data, and whether
 * it failed. A failure carries our error code in its text ({@code SCOPE_VIOLATION: ...}, the CLI's
 * wording) and in {@code data.error}.
 */
public record ToolResult(String text, Map<String, Object> data, boolean error) {
    public ToolResult {
        data = Collections.unmodifiableMap(new LinkedHashMap<>(data));
    }

    public static ToolResult ok(String text, Map<String, Object> data) {
        return new ToolResult(text, data, false);
    }

    public static ToolResult failed(ErrorCode code, String message) {
        return failed(code, message, "");
    }

    /**
     * A failure; {@code detail} (may be empty), e.g. an escalation's summary, follows the error line in
     * the text and is the error's {@code detail} in the structured content.
     */
    public static ToolResult failed(ErrorCode code, String message, String detail) {
        Map<String, Object> error = new LinkedHashMap<>();
        error.put("code", code.name());
        error.put("message", message);
        error.put("exitCode", code.exitCode());
        if (!detail.isEmpty()) {
            error.put("detail", detail);
        }
        String text = code.name() + ": " + message + (detail.isEmpty() ? "" : "\n\n" + detail);
        return new ToolResult(text, Map.of("error", error), true);
    }
}
