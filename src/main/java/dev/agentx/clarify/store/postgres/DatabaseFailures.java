package dev.agentx.clarify.store.postgres;

import dev.agentx.clarify.files.IoErrors;
import dev.agentx.clarify.protocol.ClarifyException;
import dev.agentx.clarify.protocol.ErrorCode;
import java.sql.SQLException;
import java.util.Optional;
import java.util.function.Predicate;

/**
 * What a failure of the database means for whoever called it, as an {@link ErrorCode}: a lock
 * wait that ran out (LOCK_TIMEOUT, safe to retry), a check of ours that refused the transaction
 * (LOCK_LOST), a connection that broke or could not be made (UNAVAILABLE), anything else
 * (INTERNAL); each message names the database.
 */
final class DatabaseFailures {
    /** The SQLSTATE of {@code agentx_refuse}, a check that failed its transaction (V2__refuse.sql). */
    static final String REFUSED = "P0001";

    private DatabaseFailures() {
    }

    /** {@code e}, a failure of a statement of {@code database}, as the caller's error. */
    static ClarifyException of(SQLException e, String database) {
        if ("55P03".equals(e.getSQLState())) {
            return new ClarifyException(ErrorCode.LOCK_TIMEOUT, "Another writer held the lock for over "
                    + PostgresDatabase.LOCK_TIMEOUT + " in " + database + "; nothing was changed. Retry.", e);
        }
        Optional<Throwable> refused = cause(e, t -> t instanceof SQLException s
                && REFUSED.equals(s.getSQLState()));
        if (refused.isPresent()) {
            // a check by agentx_refuse failed the transaction: what it guarded was no longer this writer's
            Throwable t = refused.get();
            String why = t instanceof org.postgresql.util.PSQLException p && p.getServerErrorMessage() != null
                    ? p.getServerErrorMessage().getMessage() : t.getMessage();
            return new ClarifyException(ErrorCode.LOCK_LOST, why, e);
        }
        return new ClarifyException(connectionLost(e) ? ErrorCode.UNAVAILABLE : ErrorCode.INTERNAL, "PostgreSQL at "
                + database + ": " + IoErrors.innermost(e), e);
    }

    /**
     * Whether {@code e} says the connection broke: SQLSTATE class 08, the server shutting down
     * (57P01-57P03), or the session ended for sitting in its transaction past {@link
     * PostgresDatabase#IDLE_IN_TRANSACTION_TIMEOUT} (25P03: this process was paused).
     */
    static boolean connectionLost(Throwable e) {
        return cause(e, t -> t instanceof SQLException s && s.getSQLState() != null
                && (s.getSQLState().startsWith("08") || s.getSQLState().matches("57P0[123]|25P03"))).isPresent();
    }

    /** Why a connection could not be made, in a few words: the driver's reason, a host name it could not find. */
    static String connectFailure(Throwable e) {
        return cause(e, t -> t instanceof java.net.UnknownHostException).map(t -> "unknown host " + t.getMessage())
                .orElseGet(() -> IoErrors.innermost(e).replaceAll("[.\\s]+$", ""));
    }

    /** The first of {@code e} and its causes that {@code which} accepts. */
    static Optional<Throwable> cause(Throwable e, Predicate<Throwable> which) {
        for (Throwable t = e; t != null; t = t.getCause() == t ? null : t.getCause()) {
            if (which.test(t)) {
                return Optional.of(t);
            }
        }
        return Optional.empty();
    }
}
