package dev.agentx.clarify.protocol;

/** Error codes of the protocol (docs/cli.md) and their CLI exit codes. */
public enum ErrorCode {
    SCOPE_VIOLATION(3),
    NOT_FOUND(3),
    MAX_ROUNDS_EXCEEDED(3),
    INVALID_STATE(3),
    VALIDATION(3),
    LOCK_TIMEOUT(4),
    USAGE(2),
    INTERNAL(1);

    private final int exitCode;

    ErrorCode(int exitCode) {
        this.exitCode = exitCode;
    }

    public int exitCode() {
        return exitCode;
    }
}
