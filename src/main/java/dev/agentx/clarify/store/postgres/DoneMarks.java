package dev.agentx.clarify.store.postgres;

import dev.agentx.clarify.store.DeliveryQueue.Queued;
import dev.agentx.clarify.store.UnitOfWork;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Clock;
import java.time.Instant;
import java.util.Set;
import java.util.function.LongPredicate;

/**
 * The done marks of a replica's deliveries: each deletes the delivery's row from the queue and
 * records its outcome in its received row, in one statement ({@link #DONE_MARK}); inside a
 * delivery's transaction it is that transaction's last statement, sent with its commit, and it
 * refuses a delivery that is no longer this replica's turn. Once a mark is committed, the replica
 * that waits for the delivery's line is signalled ({@link LineSignals}).
 */
final class DoneMarks {
    /**
     * The done mark: deletes the delivery's row from the queue, if this replica holds it (and, when
     * told to check the line, no earlier delivery of its line is queued), and records the outcome
     * in its received row, which keeps a failed delivery's body for whoever
     * looks into the failure (as {@code inbox/failed/} does on files; nothing reads a processed
     * one's again: the id alone makes a redelivery a duplicate). It also sets {@code
     * synchronous_commit} off for the rest of the transaction if that has written nothing before:
     * the condition's uncorrelated subquery is evaluated once, before the statement deletes its row
     * (which gives the transaction an id), and is always true. One statement, where a SELECT of its
     * own first would cost every delivery a round trip. Returns one row: whether a later delivery
     * of the line waits for it, the line's order key, and whether the row was this replica's; when
     * it was not and the mark is told to refuse that, the statement fails with the given message
     * ({@code agentx_refuse}), in the database, so that the COMMIT sent with it does not run.
     * Parameters: seq, replica, check the line, failed, state, failure, done at, refuse, message
     * ({@link #markBinder}).
     */
    static final String DONE_MARK = "WITH done AS (DELETE FROM delivery_queue d WHERE d.seq = ? AND d.replica = ? "
            + "AND (NOT ?::boolean OR " + DeliveryTurns.FIRST_IN_LINE + ") "
            + "AND (SELECT count(set_config('synchronous_commit', 'off', true)) FROM (SELECT 1 WHERE "
            + "pg_current_xact_id_if_assigned() IS NULL) AS wrote_nothing) >= 0 "
            + "RETURNING d.seq, d.replica, CASE WHEN ?::boolean THEN d.body END AS kept, d.waited, d.order_key), "
            + "marked AS (UPDATE deliveries h SET state = ?, failure = ?, done_at = ?, replica = done.replica, "
            + "body = done.kept FROM done WHERE h.seq = done.seq RETURNING done.waited, done.order_key) "
            + "SELECT coalesce(m.waited, false), m.order_key, CASE WHEN m.order_key IS NOT NULL THEN true "
            + "WHEN ?::boolean THEN agentx_refuse(?::text) ELSE false END FROM (SELECT 1) AS one "
            + "LEFT JOIN marked m ON true";

    /**
     * The parameters of {@link #DONE_MARK}; {@code refusal}: the message the mark fails with when
     * the row is not this replica's or an earlier delivery of its line is queued, or null to mark
     * the row if it is this replica's, whatever its line, and nothing otherwise.
     */
    static Pipeline.Binder markBinder(long seq, String replica, String state, String failure, Instant at,
                                      String refusal) {
        return p -> p.number(seq).text(replica).bool(refusal != null).bool("failed".equals(state)).text(state)
                .text(failure).time(at).bool(refusal != null).text(refusal);
    }

    private final PostgresDatabase db;
    private final String replica;
    private final Clock clock;
    private final HeldDeliveries held;
    private final LineSignals signals;

    DoneMarks(PostgresDatabase db, String replica, Clock clock, HeldDeliveries held, LineSignals signals) {
        this.db = db;
        this.replica = replica;
        this.clock = clock;
        this.held = held;
        this.signals = signals;
    }

    /**
     * Marks the delivery done with. Inside a transaction (a delivery's unit, {@link
     * PostgresDatabase#run}) the mark commits with the delivery's changes, sent with the commit
     * after every other write of the transaction ({@link Pipeline#last}), and the delivery must
     * still be this replica's and first in its line: one another replica took over meanwhile (this
     * one was paused past {@link Heartbeats#GONE_AFTER}), or one behind an earlier delivery still
     * queued (a provisional turn, {@link DeliveryTurns#takeProvisionally}), makes the unit roll
     * back with LOCK_LOST, so nothing it did counts twice or out of order.
     *
     * <p>A mark whose transaction wrote nothing else commits without waiting for the database's
     * WAL to reach the disk ({@code synchronous_commit} off, as the file inbox writes its done
     * records without a sync): a crash of the database may undo the last fraction of a second of
     * such marks, and those deliveries are processed again, which changes nothing. So a delivery
     * that changes nothing costs one flush of the WAL, its acknowledgement's. A transaction that
     * wrote anything else (effect claims among them: their effects are sent once it commits)
     * waits for the flush.
     */
    void finish(Queued q, String state, String failure) {
        Instant at = clock.instant();
        String[] waitedBy = {null}; // the line's order key, when a later delivery of it waits elsewhere
        if (!db.open()) {
            db.write(new Pipeline().query(DONE_MARK, markBinder(q.seq(), replica, state, failure, at, null),
                    r -> waitedBy[0] = r.next() ? waitedKey(r) : null));
            held.close(q.seq());
            signals.freed(waitedBy[0]);
            return;
        }
        db.deferred().last(DONE_MARK, markBinder(q.seq(), replica, state, failure, at, "delivery " + q.id()
                + " is not replica " + replica + "'s to finish now (another replica took it over, or an earlier "
                + "delivery of its issue is still queued); what this attempt did is rolled back"),
                r -> waitedBy[0] = r.next() ? waitedKey(r) : null);
        db.join(new UnitOfWork.Participant() {
            @Override
            public void committed() {
                held.close(q.seq());
                signals.freed(waitedBy[0]);
            }
        });
    }

    /**
     * The order key of the done mark's row (the current one) if a later delivery of its line waits
     * for it, else null (also when the row was not this replica's: nothing waits then).
     */
    private static String waitedKey(ResultSet r) throws SQLException {
        return r.getBoolean(1) ? r.getString(2) : null;
    }

    /**
     * Makes the done marks so far durable: one write committed synchronously (this replica's
     * heartbeat), whose flush of the WAL covers every commit before it, those made without
     * waiting ({@link #finish}) too. Then every delivery not open here is durably done with.
     */
    LongPredicate syncDone() {
        Set<Long> waiting = held.openNow();
        db.autoCommit(c -> {
            Heartbeats.beat(c, replica, 0);
            return null;
        });
        return n -> !waiting.contains(n);
    }
}
