package dev.agentx.clarify.protocol;

/** Error codes of the protocol (docs/cli.md) and their CLI exit codes. */
public enum ErrorCode {
    SCOPE_VIOLATION(3),
    NOT_FOUND(3),
    MAX_ROUNDS_EXCEEDED(3),
    INVALID_STATE(3),
    VALIDATION(3),
    /**
     * The caller may not do this here: a remote MCP caller with no role in the repository, or
     * acting on a repository its token is not for, or one the App does not serve.
     */
    NOT_PERMITTED(3),
    LOCK_TIMEOUT(4),
    /** The lock was taken over while this writer held it: nothing was written; safe to retry. */
    LOCK_LOST(4),
    /**
     * A service the command needs did not answer: the database could not be reached, or the
     * connection to it broke (PostgreSQL); GitHub's API gave no answer or failed for a while (a
     * 5xx, a rate limit). The environment's failure, not a bug: run it again once it answers.
     * Exit 1, with the other failures that are neither usage nor the protocol's.
     */
    UNAVAILABLE(1),
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
