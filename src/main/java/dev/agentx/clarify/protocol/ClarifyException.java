package dev.agentx.clarify.protocol;

import java.util.Objects;

/** A refusal with a protocol error code and a message that says what to do. */
public class ClarifyException extends RuntimeException {
    private final ErrorCode code;

    public ClarifyException(ErrorCode code, String message) {
        super(message);
        this.code = Objects.requireNonNull(code);
    }

    public ClarifyException(ErrorCode code, String message, Throwable cause) {
        super(message, cause);
        this.code = Objects.requireNonNull(code);
    }

    public ErrorCode code() {
        return code;
    }
}
