package dev.agentx.clarify.store.postgres;

import java.util.function.BiConsumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Tells every replica which ledger changed: each write of a ledger row sends {@link #CHANGED}
 * ({@link Notifications}) in its own transaction, so the signal goes out once that commits and
 * never for one rolled back, whichever process wrote it. A waiting MCP call on any replica ends
 * at once. A signal only lets a wait end sooner: listening begins with being told that signals
 * may have been missed, and waits look again after a while.
 *
 * <p>A replica that runs alone (no other one beat within 15 s at its last heartbeat) sends none:
 * PostgreSQL commits the transactions that notify one at a time, each holding one lock for the
 * whole database through its WAL flush, so its delivery transactions would wait for each other's
 * flushes instead of sharing one, for listeners that do not exist. It tells its own listeners
 * once the transaction committed. A process that is no replica (the CLI with a database URL)
 * always notifies.
 */
final class LedgerSignals {
    private static final Logger LOG = LoggerFactory.getLogger(LedgerSignals.class);
    /** The channel; the payload is {@code ISSUE REPO} (the issue number, a space, the repository as the store keys it). */
    static final String CHANGED = "agentx_ledger_changed";

    private LedgerSignals() {
    }

    /** The payload of a change of {@code repo}'s ledger of {@code issue}. */
    static String payload(String repo, int issue) {
        return issue + " " + repo;
    }

    /** Hands {@code changed} each change any replica commits, and {@code missed} whenever listening (re)starts. */
    static void listen(Notifications notifications, BiConsumer<String, Integer> changed, Runnable missed) {
        notifications.listen(CHANGED, payload -> {
            int space = payload.indexOf(' ');
            try {
                changed.accept(payload.substring(space + 1), Integer.parseInt(payload.substring(0, space)));
            } catch (RuntimeException e) {
                LOG.debug("a ledger signal that is not ours ignored: {}", payload);
            }
        }, missed);
    }
}
