package dev.agentx.clarify.store.postgres;

import java.util.function.BiConsumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Tells every replica which ledger changed: once the transaction that wrote a ledger row commits,
 * {@link #CHANGED} goes out ({@link Notifications#signal}, from the senders' thread, not in that
 * transaction), never for one rolled back, whichever process wrote it. A waiting MCP call on any
 * replica ends at once. A signal only lets a wait end sooner: listening begins with being told
 * that signals may have been missed, and waits look again after a while.
 *
 * <p>A replica that runs alone (no other one beat within 15 s at its last heartbeat) sends none,
 * which would cost the database a transaction for listeners that do not exist: it tells its own
 * listeners once the transaction committed. A process that is no replica (the CLI with a database
 * URL) always notifies.
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

    /**
     * Tells of {@code repo}'s ledger of {@code issue}, written by a transaction that committed: to
     * every process on the database ({@code toOthers}), or to this process's listeners alone.
     */
    static void committed(PostgresDatabase db, String repo, int issue, boolean toOthers) {
        if (toOthers) {
            db.notifications().signal(CHANGED, payload(repo, issue));
        } else {
            db.changedHere(repo, issue);
        }
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
