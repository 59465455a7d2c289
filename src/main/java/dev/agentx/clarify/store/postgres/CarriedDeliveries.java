package dev.agentx.clarify.store.postgres;

import dev.agentx.clarify.store.Acknowledged;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Timestamp;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The deliveries {@code agentx store copy} carries between stores, as rows of {@code deliveries}
 * and {@code delivery_queue}: read whole from a database ({@link #acknowledged}), added to one
 * ({@link #carry}), and removed again from it when the copy fails ({@link #uncarry}).
 */
final class CarriedDeliveries {
    private CarriedDeliveries() {
    }

    /**
     * What the database's queue holds, every replica's ({@code agentx store copy} from it): the
     * deliveries queued and not done with, in the order received, with their failed attempts, and
     * the ids of those done with (processed or failed) that it keeps, with when each was done with.
     */
    static Acknowledged acknowledged(PostgresDatabase db) {
        return db.inTransaction(c -> {
            List<Acknowledged.Waiting> waiting = new ArrayList<>();
            try (PreparedStatement s = c.prepareStatement("SELECT h.id, h.event, h.received_at, d.order_key, d.body, "
                    + "d.attempts, d.not_before FROM delivery_queue d JOIN deliveries h ON h.seq = d.seq "
                    + "ORDER BY d.seq"); ResultSet r = s.executeQuery()) {
                while (r.next()) {
                    Timestamp notBefore = r.getTimestamp(7);
                    waiting.add(new Acknowledged.Waiting(r.getString(1), r.getString(2), r.getTimestamp(3).toInstant(),
                            r.getString(4), r.getBytes(5), r.getInt(6), notBefore == null ? null
                            : notBefore.toInstant()));
                }
            }
            java.util.TreeMap<String, Instant> done = new java.util.TreeMap<>();
            try (PreparedStatement s = c.prepareStatement("SELECT id, coalesce(done_at, received_at) FROM deliveries "
                    + "WHERE state <> 'queued'"); ResultSet r = s.executeQuery()) {
                while (r.next()) {
                    done.put(r.getString(1), r.getTimestamp(2).toInstant());
                }
            }
            return new Acknowledged(waiting, done);
        });
    }

    /**
     * Adds what another store acknowledged ({@code agentx store copy}), in one transaction: each
     * waiting delivery queued in the order given, held by {@code holder} (the name the server that
     * acknowledged it goes by among replicas, when it has one: it finds them at its start; any
     * other replica takes up what a replica without a heartbeat holds), with its time received,
     * failed attempts and next try; each id done with recorded as processed at its time, so that a
     * redelivery of it is a duplicate. An id the database has already is left as it is. Times are
     * kept to the microsecond, as the database keeps them. Returns the ids it added.
     */
    static Set<String> carry(PostgresDatabase db, Acknowledged from, String holder) {
        return db.inTransaction(c -> {
            Set<String> added = new java.util.HashSet<>();
            try (PreparedStatement s = c.prepareStatement("WITH received AS (INSERT INTO deliveries (id, event, "
                    + "received_at, replica) VALUES (?, ?, ?, ?) ON CONFLICT (id) DO NOTHING RETURNING seq) "
                    + "INSERT INTO delivery_queue (seq, order_key, body, replica, attempts, not_before) "
                    + "SELECT seq, ?, ?, ?, ?, ? FROM received")) {
                for (Acknowledged.Waiting w : from.waiting()) {
                    s.setString(1, w.id());
                    s.setString(2, w.event());
                    s.setTimestamp(3, micros(w.receivedAt()));
                    s.setString(4, holder);
                    s.setString(5, w.key());
                    s.setBytes(6, w.body());
                    s.setString(7, holder);
                    s.setInt(8, w.attempts());
                    s.setTimestamp(9, w.notBefore() == null ? null : micros(w.notBefore()));
                    if (s.executeUpdate() == 1) {
                        added.add(w.id());
                    }
                }
            }
            List<Map.Entry<String, Instant>> done = List.copyOf(from.done().entrySet());
            int batch = 5_000;
            for (int i = 0; i < done.size(); i += batch) {
                List<Map.Entry<String, Instant>> part = done.subList(i, Math.min(done.size(), i + batch));
                try (PreparedStatement s = c.prepareStatement("INSERT INTO deliveries (id, event, received_at, replica, "
                        + "state, done_at) SELECT u.id, '', u.at::timestamptz, ?, 'processed', u.at::timestamptz "
                        + "FROM unnest(?::text[], ?::text[]) AS u (id, at) ON CONFLICT (id) DO NOTHING RETURNING id")) {
                    s.setString(1, holder);
                    s.setArray(2, c.createArrayOf("text", part.stream().map(Map.Entry::getKey).toArray()));
                    // as ISO-8601 text with its zone, which the cast reads whatever the session's time zone
                    s.setArray(3, c.createArrayOf("text", part.stream().map(e -> e.getValue()
                            .truncatedTo(java.time.temporal.ChronoUnit.MICROS).toString()).toArray()));
                    try (ResultSet r = s.executeQuery()) {
                        while (r.next()) {
                            added.add(r.getString(1));
                        }
                    }
                }
            }
            return added;
        });
    }

    /** Removes the deliveries {@link #carry} added ({@code ids}), queued or done with, in one transaction. */
    static void uncarry(PostgresDatabase db, java.util.Collection<String> ids) {
        db.inTransaction(c -> {
            java.sql.Array array = c.createArrayOf("text", ids.toArray());
            try (PreparedStatement s = c.prepareStatement("DELETE FROM delivery_queue WHERE seq IN (SELECT seq FROM "
                    + "deliveries WHERE id = ANY (?))")) {
                s.setArray(1, array);
                s.executeUpdate();
            }
            try (PreparedStatement s = c.prepareStatement("DELETE FROM deliveries WHERE id = ANY (?)")) {
                s.setArray(1, array);
                s.executeUpdate();
            }
            return null;
        });
    }

    /** {@code at} to the microsecond, as a timestamp column keeps it. */
    private static Timestamp micros(Instant at) {
        return Timestamp.from(at.truncatedTo(java.time.temporal.ChronoUnit.MICROS));
    }
}
