package dev.agentx.clarify.store.postgres;

import java.util.function.BiConsumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Tells every replica which ledger changed: once a transaction that wrote ledger rows commits,
 * {@link #CHANGED} goes out for each ({@link Notifications#signalSoon}: after the commit, from a
 * thread of its own, with other signals queued meanwhile), and never for one rolled back,
 * whichever process wrote it. A waiting MCP call on any replica ends at once. A signal only lets
 * a wait end sooner: listening begins with being told that signals may have been missed, and
 * waits look again after a while; a process killed between its commit and the signal leaves it
 * to that look.
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

    /** Signals, after its commit, that {@code repo}'s ledger of {@code issue} changed. */
    static void send(Notifications notifications, String repo, int issue) {
        notifications.signalSoon(CHANGED, payload(repo, issue));
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
