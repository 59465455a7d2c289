package dev.agentx.clarify.mcp;

import java.time.Duration;
import java.util.concurrent.Executor;
import java.util.concurrent.ScheduledExecutorService;

/**
 * What waiting calls share: the changes they subscribe to, the timer that ends a wait when its
 * time is up, and where a woken wait reads its ledger again (a look may read a database, so it is
 * not done on the thread that tells of changes). No wait has a thread of its own.
 *
 * @param changes what tells a waiting call that its issue's ledger changed
 * @param timer   ends waits whose time is up
 * @param readers where woken waits read the ledger again
 */
public record Waits(IssueChanges changes, ScheduledExecutorService timer, Executor readers) {
    /** How often every waiting call looks again when no change was told (notifications may be lost). */
    public static final Duration RECHECK = Duration.ofSeconds(30);
}
