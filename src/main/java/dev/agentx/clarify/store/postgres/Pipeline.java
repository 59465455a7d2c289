package dev.agentx.clarify.store.postgres;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Timestamp;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

/**
 * Statements sent to the database together, in one round trip: the driver sends every statement
 * of a query string that holds several (each with its own parameters) and then waits once for all
 * their results. The server runs them one after the other, each with its own snapshot, as if they
 * had come one at a time; the first that fails ends the round trip, and the transaction with it.
 *
 * <p>On these machines a round trip costs the database and the server more than most statements
 * do (the processes' wake-ups around the socket), so a delivery's transaction sends its writes
 * together, with its next read or with its end ({@link PostgresDatabase#deferred}).
 */
final class Pipeline {
    /** Sets a statement's parameters, in order. */
    @FunctionalInterface
    interface Binder {
        void bind(Params p) throws SQLException;
    }

    /**
     * Reads the rows a statement returned. Not a place for a check that rolls the transaction
     * back: a transaction's last message carries its COMMIT ({@link #sendAndCommit}), which has
     * run by the time the readers do. Such a check fails its statement in the database.
     */
    @FunctionalInterface
    interface Rows {
        void read(ResultSet r) throws SQLException;
    }

    private record Part(String sql, Binder binder, Rows rows) {
    }

    private final List<Part> parts = new ArrayList<>();
    /** Sent after every other part: a statement that must see what they wrote. */
    private Part last;

    /** Adds a statement whose result is not looked at. */
    Pipeline add(String sql, Binder binder) {
        return query(sql, binder, null);
    }

    /** Adds a statement whose rows {@code rows} reads. */
    Pipeline query(String sql, Binder binder, Rows rows) {
        if (sql.indexOf(';') >= 0) {
            throw new IllegalArgumentException("one statement per part: " + sql);
        }
        parts.add(new Part(sql, binder, rows));
        return this;
    }

    /** Sets the statement sent after every other one (at most one: a second replaces it). */
    Pipeline last(String sql, Binder binder, Rows rows) {
        last = new Part(sql, binder, rows);
        return this;
    }

    /** How many statements a send would send. */
    int size() {
        return parts.size() + (last == null ? 0 : 1);
    }

    /** Moves this pipeline's parts after {@code into}'s other parts (a last part stays last). */
    void moveTo(Pipeline into) {
        into.parts.addAll(parts);
        parts.clear();
        if (last != null) {
            into.last = last;
            last = null;
        }
    }

    /**
     * Sends every part in one round trip, in the order added, the {@link #last} one at the end,
     * and hands each reader its result. Empties the pipeline first: a failure leaves nothing to
     * send again (the transaction is over).
     */
    void send(Connection c) throws SQLException {
        send(c, true, false);
    }

    /** As {@link #send}, but the {@link #last} part stays for a later send. */
    void sendAllButLast(Connection c) throws SQLException {
        send(c, false, false);
    }

    /**
     * As {@link #send}, and ends the transaction on {@code c} with a {@code COMMIT} after the
     * last part, in the same round trip: the driver then knows the transaction is over, and its
     * {@code commit()} sends nothing. With nothing to send, nothing is sent: the caller's
     * {@code commit()} ends the transaction.
     */
    void sendAndCommit(Connection c) throws SQLException {
        send(c, true, true);
    }

    private static final Part COMMIT = new Part("COMMIT", p -> { }, null);

    private void send(Connection c, boolean withLast, boolean commit) throws SQLException {
        List<Part> sending = new ArrayList<>(parts);
        if (withLast && last != null) {
            sending.add(last);
            last = null;
        }
        parts.clear();
        if (sending.isEmpty()) {
            return;
        }
        if (commit) {
            sending.add(COMMIT);
        }
        StringBuilder sql = new StringBuilder();
        for (Part p : sending) {
            sql.append(sql.length() == 0 ? "" : ";\n").append(p.sql());
        }
        try (PreparedStatement s = c.prepareStatement(sql.toString())) {
            Params params = new Params(s, c);
            for (Part p : sending) {
                p.binder().bind(params);
            }
            boolean rows = s.execute();
            for (int i = 0; i < sending.size(); i++) {
                Part p = sending.get(i);
                if (rows) {
                    try (ResultSet r = s.getResultSet()) {
                        if (p.rows() != null) {
                            p.rows().read(r);
                        }
                    }
                }
                if (i < sending.size() - 1) {
                    rows = s.getMoreResults();
                }
            }
        }
    }

    /** The parameters of the statements sent together, numbered across all of them. */
    static final class Params {
        private final PreparedStatement s;
        private final Connection c;
        private int next;

        Params(PreparedStatement s, Connection c) {
            this.s = s;
            this.c = c;
        }

        Params text(String v) throws SQLException {
            s.setString(++next, v);
            return this;
        }

        Params integer(int v) throws SQLException {
            s.setInt(++next, v);
            return this;
        }

        Params number(long v) throws SQLException {
            s.setLong(++next, v);
            return this;
        }

        Params bool(boolean v) throws SQLException {
            s.setBoolean(++next, v);
            return this;
        }

        /** A timestamp, or SQL null. */
        Params time(Instant v) throws SQLException {
            s.setTimestamp(++next, v == null ? null : Timestamp.from(v));
            return this;
        }

        Params integers(List<Integer> v) throws SQLException {
            s.setArray(++next, c.createArrayOf("int4", v.toArray()));
            return this;
        }

        Params texts(List<String> v) throws SQLException {
            s.setArray(++next, c.createArrayOf("text", v.toArray()));
            return this;
        }
    }
}
