package dev.agentx.clarify.protocol;

/** Error codes of the protocol (docs/cli.md) and their CLI exit codes. */
public enum ErrorCode {
    SCOPE_VIOLATION(3),
    NOT_FOUND(3),
    MAX_ROUNDS_EXCEEDED(3),
    INVALID_STATE(3),
    VALIDATION(3),
    LOCK_TIMEOUT(4),
    /** The lock was taken over while this writer held it: nothing was written; safe to retry. */
    LOCK_LOST(4),
    /**
     * The database could not be reached, or the connection to it broke (PostgreSQL): run it again
     * once it answers.
     */
    UNAVAILABLE(4),
    USAGE(2),
    /** A ledger file that cannot be read: restore it, or rebuild it (GitHub Mode: agentx sync --write). */
    LEDGER_DAMAGED(1),
    /** A ledger with fields this version does not know: it is read, but only a newer version may change it. */
    LEDGER_NEWER(1),
    INTERNAL(1);

    private final int exitCode;

    ErrorCode(int exitCode) {
        this.exitCode = exitCode;
    }

    public int exitCode() {
        return exitCode;
    }
}
