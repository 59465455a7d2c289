package dev.agentx.clarify.store.postgres;

import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Timestamp;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * The acknowledgements' inserts: each delivery a row in {@code deliveries} and one in {@code
 * delivery_queue}, committed, on a connection of their own ({@link DedicatedConnection}).
 * Deliveries that arrive while an insert is under way wait for it and then go in together, in one
 * statement and one commit (one flush of the database's WAL for all of them, as the file inbox
 * shares one fdatasync): under load the commits are what limits acknowledgements. The thread that
 * finds no insert under way does the inserts until no delivery waits; the others wait for their
 * own result, holding no lock.
 */
final class DeliveryInserts {
    /** At most this many deliveries go into one insert. */
    static final int MAX_BATCH = 100;

    /** One delivery waiting to be inserted ({@link #insert}): its number once inserted, or -1 if its id was there. */
    static final class Arrival {
        final String id;
        final String event;
        final byte[] body;
        final String key;
        final Instant at;
        final CompletableFuture<Long> seq = new CompletableFuture<>();

        Arrival(String id, String event, byte[] body, String key, Instant at) {
            this.id = id;
            this.event = event;
            this.body = body;
            this.key = key;
            this.at = at;
        }
    }

    /** Where the inserts go: a connection of their own, so that no acknowledgement waits for the pool's. */
    private final DedicatedConnection connection;
    /** The replica that acknowledges, and holds, what it inserts. */
    private final String replica;
    /** Deliveries waiting for their insert, and whether a thread is inserting. */
    private final Queue<Arrival> arrivals = new ConcurrentLinkedQueue<>();
    private final AtomicBoolean inserting = new AtomicBoolean();

    DeliveryInserts(DedicatedConnection connection, String replica) {
        this.connection = connection;
        this.replica = replica;
    }

    /**
     * Inserts {@code me}, with whatever else arrives meanwhile, and returns its number ({@code
     * seq}), or -1 when its id was there already. The rows are committed when it returns.
     */
    long insert(Arrival me) {
        arrivals.add(me);
        while (true) {
            if (me.seq.isDone()) {
                // a delivery that arrived as the inserting thread stopped is not left waiting
                if (arrivals.isEmpty() || !inserting.compareAndSet(false, true)) {
                    break;
                }
            } else if (!inserting.compareAndSet(false, true)) {
                awaitInsert(me); // another thread is inserting; it takes this one along, or leaves it to us
                continue;
            }
            try {
                insertWaiting();
            } finally {
                inserting.set(false);
            }
        }
        try {
            return me.seq.join();
        } catch (CompletionException e) {
            throw e.getCause() instanceof RuntimeException r ? r : new IllegalStateException(e.getCause());
        }
    }

    /** Waits a little for the insert that takes {@code a} along (a failure is thrown by the caller's join). */
    private static void awaitInsert(Arrival a) {
        try {
            a.seq.get(100, TimeUnit.MILLISECONDS);
        } catch (TimeoutException | ExecutionException e) {
            // not yet, or failed: the caller looks again
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while queueing delivery " + a.id, e);
        }
    }

    /** Inserts the waiting deliveries, a batch at a time, until none waits. */
    private void insertWaiting() {
        while (true) {
            List<Arrival> batch = new ArrayList<>();
            for (Arrival a = arrivals.poll(); a != null; a = batch.size() < MAX_BATCH ? arrivals.poll() : null) {
                batch.add(a);
            }
            if (batch.isEmpty()) {
                return;
            }
            insert(batch);
        }
    }

    /**
     * Inserts the batch in one statement, a row in {@code deliveries} and one in {@code
     * delivery_queue} for each delivery whose id is new, in the order they arrived; each arrival
     * learns its number, or that its id was there. The bodies are parameters of the queue's insert
     * alone, read once as they are stored (a common table of them both inserts read would copy
     * every body once more).
     */
    private void insert(List<Arrival> batch) {
        Map<String, Arrival> distinct = new LinkedHashMap<>();
        batch.forEach(a -> distinct.putIfAbsent(a.id, a)); // a second copy of one id in the batch is a duplicate
        List<Arrival> rows = List.copyOf(distinct.values());
        try {
            // safe to run again on a new connection: a row that went in is a duplicate then
            Map<String, Long> inserted = connection.run(c -> {
                StringBuilder sql = new StringBuilder("WITH received AS (INSERT INTO deliveries (id, event, "
                        + "received_at, replica) VALUES ");
                for (int i = 0; i < rows.size(); i++) {
                    sql.append(i == 0 ? "" : ", ").append("(?, ?, ?, ?)");
                }
                sql.append(" ON CONFLICT (id) DO NOTHING RETURNING id, seq), queued AS (INSERT INTO delivery_queue "
                        + "(seq, order_key, body, replica) SELECT r.seq, v.order_key, v.body, ? FROM (VALUES ");
                for (int i = 0; i < rows.size(); i++) {
                    sql.append(i == 0 ? "" : ", ").append("(?::text, ?::text, ?::bytea)");
                }
                sql.append(") AS v (id, order_key, body) JOIN received r ON r.id = v.id) SELECT id, seq FROM received");
                try (PreparedStatement s = c.prepareStatement(sql.toString())) {
                    int n = 0;
                    for (Arrival a : rows) {
                        s.setString(++n, a.id);
                        s.setString(++n, a.event);
                        s.setTimestamp(++n, Timestamp.from(a.at));
                        s.setString(++n, replica);
                    }
                    s.setString(++n, replica);
                    for (Arrival a : rows) {
                        s.setString(++n, a.id);
                        s.setString(++n, a.key);
                        s.setBytes(++n, a.body);
                    }
                    Map<String, Long> out = new HashMap<>();
                    try (ResultSet r = s.executeQuery()) {
                        while (r.next()) {
                            out.put(r.getString(1), r.getLong(2));
                        }
                    }
                    return out;
                }
            });
            for (Arrival a : batch) {
                Long seq = inserted.remove(a.id);
                a.seq.complete(seq == null ? -1L : seq);
            }
        } catch (RuntimeException e) {
            batch.forEach(a -> a.seq.completeExceptionally(e));
            if (DatabaseFailures.connectionLost(e)) {
                // the database did not answer in time or could not be reached: the deliveries that
                // waited behind this insert would wait as long again, past the 10 s GitHub waits
                // (answered at about 10 s, GitHub's own limit): refused now, as those after them are
                for (Arrival a = arrivals.poll(); a != null; a = arrivals.poll()) {
                    a.seq.completeExceptionally(e);
                }
            }
        }
    }
}
