package dev.agentx.clarify.store.postgres;

import dev.agentx.clarify.store.DeliveryQueue.Progress;
import dev.agentx.clarify.store.DeliveryQueue.Queued;
import dev.agentx.clarify.store.DeliveryQueue.Turn;
import dev.agentx.clarify.store.InboundDelivery;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Timestamp;

/**
 * A replica's turns at the deliveries of the shared queue: a delivery is taken only when it is
 * still queued, no earlier delivery of its issue's line is (whoever holds it), and it is held by
 * this replica or by one that is gone ({@link Heartbeats#ALIVE}), whose delivery it then takes
 * over. Otherwise the take says why not: done, held by a live replica, or waiting for an earlier
 * delivery, which is then marked as waited for so that its done mark signals this replica
 * ({@link LineSignals}). A delivery this replica acknowledged in this process is taken the first
 * time without asking ({@link #takeProvisionally}); its done mark checks the turn instead.
 */
final class DeliveryTurns {
    /** An earlier delivery of {@code d}'s line is still queued (whoever holds it). */
    static final String FIRST_IN_LINE = "(d.order_key = '' OR NOT EXISTS (SELECT 1 FROM delivery_queue e "
            + "WHERE e.order_key = d.order_key AND e.order_key <> '' AND e.seq < d.seq))";
    /** The columns of a taken delivery; its body only when the parameter (the first of the statement) is true. */
    static final String DELIVERY_COLUMNS = "CASE WHEN ?::boolean THEN d.body END, d.attempts, d.not_before";

    /** Reads a delivery held here and first in its line: body wanted, seq, replica. */
    static final String TAKE_HELD = "SELECT " + DELIVERY_COLUMNS + " FROM delivery_queue d "
            + "WHERE d.seq = ? AND d.replica = ? AND " + FIRST_IN_LINE;
    /** Takes a delivery first in its line over from a replica that is gone: replica, seq, replica, body wanted. */
    static final String TAKE_OVER = "UPDATE delivery_queue d SET replica = ? WHERE d.seq = ? AND d.replica <> ? AND NOT "
            + Heartbeats.ALIVE + " AND " + FIRST_IN_LINE + " RETURNING " + DELIVERY_COLUMNS;
    /**
     * Marks the earliest delivery queued before {@code seq} in the line {@code order_key} as waited
     * for, and says who holds it: order_key, seq. Its own transaction, committed without waiting for
     * the WAL's flush (a mark a crash loses only makes the waiting replica look again later).
     */
    static final String WAIT_FOR_HEAD = "UPDATE delivery_queue SET waited = true WHERE seq = (SELECT seq "
            + "FROM delivery_queue WHERE order_key = ? AND order_key <> '' AND seq < ? ORDER BY seq LIMIT 1) "
            + "AND (SELECT count(set_config('synchronous_commit', 'off', true))) >= 0 RETURNING replica";

    private final PostgresDatabase db;
    private final String replica;
    private final HeldDeliveries held;
    private final LineSignals signals;

    DeliveryTurns(PostgresDatabase db, String replica, HeldDeliveries held, LineSignals signals) {
        this.db = db;
        this.replica = replica;
        this.held = held;
        this.signals = signals;
    }

    /**
     * Takes the delivery if it is still queued, first in its line, and held here or by a replica
     * that is gone (then it is held here from now on); the same statement reads it. Otherwise
     * says why not. A delivery this replica holds is only read (no write, so no commit to wait
     * for): one query, of the queue alone (the id, event and time received are {@code q}'s, as the
     * queue's rows were read or written).
     *
     * @see #takeProvisionally
     */
    Turn take(Queued q) {
        held.takeFresh(q.seq());
        byte[] body = held.body(q.seq());
        Turn turn = db.autoCommit(c -> {
            for (int look = 1; ; look++) {
                try (PreparedStatement s = c.prepareStatement(TAKE_HELD)) {
                    s.setBoolean(1, body == null);
                    s.setLong(2, q.seq());
                    s.setString(3, replica);
                    Turn mine = mine(s, q, body);
                    if (mine != null) {
                        return mine;
                    }
                }
                try (PreparedStatement s = c.prepareStatement(TAKE_OVER)) {
                    s.setString(1, replica);
                    s.setLong(2, q.seq());
                    s.setString(3, replica);
                    s.setBoolean(4, true);
                    Turn mine = mine(s, q, null);
                    Turn why = mine != null ? mine : whyNot(c, q);
                    // null: the delivery it waited for was done with meanwhile; look once more
                    if (why != null || look == 2) {
                        return why != null ? why : new Turn.Wait("");
                    }
                }
            }
        });
        if (turn instanceof Turn.Mine) {
            held.open(q.seq());
        } else if (turn instanceof Turn.Gone) {
            held.close(q.seq());
        } else if (turn instanceof Turn.Wait) {
            signals.listenOnce();
        }
        return turn;
    }

    /**
     * As {@link #take}, but the common case asks nothing: the first take of a delivery this replica
     * acknowledged in this process, whose body it holds ({@link HeldDeliveries}), is a provisional
     * turn. The queue is asked at the done mark instead, which deletes the delivery's row only if it
     * is still this replica's and first in its line, and otherwise fails the delivery's transaction
     * ({@link DoneMarks#DONE_MARK}); the worker then takes it again, and that take asks. Each
     * delivery costs the database one round trip and one transaction fewer; one whose turn had not
     * come (an earlier delivery of its issue queued on another replica, received moments before it)
     * is processed once in vain.
     */
    Turn takeProvisionally(Queued q) {
        byte[] body = held.body(q.seq());
        if (held.takeFresh(q.seq()) && body != null) {
            return new Turn.Mine(new InboundDelivery(q.id(), q.event(), q.receivedAt(), body), Progress.NONE, true);
        }
        return take(q);
    }

    /** Delivery {@code q} if {@code s} returns its row ({@link #DELIVERY_COLUMNS}), or null; {@code held}: its body, if known. */
    private static Turn mine(PreparedStatement s, Queued q, byte[] held) throws SQLException {
        try (ResultSet r = s.executeQuery()) {
            if (!r.next()) {
                return null;
            }
            Timestamp notBefore = r.getTimestamp(3);
            return new Turn.Mine(new InboundDelivery(q.id(), q.event(), q.receivedAt(),
                    held != null ? held : r.getBytes(1)), new Progress(0, false, r.getInt(2),
                    notBefore == null ? null : notBefore.toInstant()));
        }
    }

    /**
     * Why {@link #take} did not take {@code q}: done, held by a live replica, or behind an earlier
     * delivery, which is then marked as waited for, so that its done mark is signalled; null when
     * no earlier delivery is queued any more (done with since the take looked).
     */
    private Turn whyNot(Connection c, Queued q) throws SQLException {
        try (PreparedStatement s = c.prepareStatement("SELECT h.state, h.replica, d.replica, " + Heartbeats.ALIVE
                + " FROM deliveries h LEFT JOIN delivery_queue d ON d.seq = h.seq WHERE h.seq = ?")) {
            s.setLong(1, q.seq());
            try (ResultSet r = s.executeQuery()) {
                if (!r.next()) {
                    return new Turn.Gone("no longer in the database's queue");
                }
                String holder = r.getString(3);
                if (holder == null) {
                    // by this very replica: an attempt whose COMMIT went through though its answer was lost
                    return new Turn.Gone(r.getString(1) + (replica.equals(r.getString(2)) ? " here already"
                            : " by replica " + r.getString(2)));
                }
                if (!holder.equals(replica) && r.getBoolean(4)) {
                    return new Turn.Gone("held by replica " + holder);
                }
            }
        }
        try (PreparedStatement s = c.prepareStatement(WAIT_FOR_HEAD)) {
            s.setString(1, q.key());
            s.setLong(2, q.seq());
            try (ResultSet r = s.executeQuery()) {
                return r.next() ? new Turn.Wait(r.getString(1)) : null;
            }
        }
    }
}
