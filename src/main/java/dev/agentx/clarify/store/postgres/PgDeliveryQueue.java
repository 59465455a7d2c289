package dev.agentx.clarify.store.postgres;

import dev.agentx.clarify.store.Acknowledged;
import dev.agentx.clarify.store.DeliveryQueue;
import dev.agentx.clarify.store.InboundDelivery;
import dev.agentx.clarify.store.UnitOfWork;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Timestamp;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;
import java.util.function.LongPredicate;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@link DeliveryQueue} as rows shared by every replica on the database: {@code deliveries}, a row
 * per delivery received (kept {@link #KEEP_DONE}), and {@code delivery_queue}, a row per delivery
 * not yet done with, holding its body.
 *
 * <p>The acknowledgement is the commit of both rows; the primary key of {@code deliveries}, the
 * delivery id, makes a copy of the same delivery a duplicate on every replica. The replica that
 * acknowledged a delivery holds it ({@code delivery_queue.replica}) and processes it; a replica
 * with no heartbeat in {@code replica_beats} for {@link #GONE_AFTER} is gone, and what it held is
 * taken over by the first other replica to {@link #take} it. A delivery is taken only when no
 * earlier delivery with the same order key is still queued, whoever holds it: an issue's
 * deliveries are processed one at a time in the order received ({@code seq}, from the database)
 * across replicas. The done mark deletes the queue's row and records the outcome in the received
 * one: the queue stays as small as the backlog, whatever 8 days of deliveries leave behind.
 */
public final class PgDeliveryQueue implements DeliveryQueue {
    private static final Logger LOG = LoggerFactory.getLogger(PgDeliveryQueue.class);
    /** A replica whose heartbeat is older than this is gone: another takes over its deliveries ({@link Heartbeats}). */
    public static final Duration GONE_AFTER = Heartbeats.GONE_AFTER;
    /** How long a replica's turn at vacuuming the queue ({@link #tidy}) lasts unless renewed: two of the worker's ticks. */
    static final Duration TIDY_TURN = Duration.ofSeconds(11);
    /** Rows of deliveries received this long ago and done with are deleted: GitHub redelivers deliveries of the past 3 days. */
    static final Duration KEEP_DONE = Duration.ofDays(8);
    /** At most this many deliveries of gone replicas are taken up per call of {@link #adoptable}. */
    static final int ADOPT_BATCH = 500;
    /** At most this many deliveries go into one insert. */
    static final int MAX_BATCH = 100;

    private final PostgresDatabase db;
    private final String replica;
    private final Clock clock;
    /** Leases among the replicas: whose turn it is to vacuum the queue. */
    private final PgReplicas turns;
    private volatile Consumer<Queued> listener = q -> { };
    /** Told of the lines other replicas freed ({@link #onLineFreed}), once this replica listens. */
    private volatile LineSignals lineSignals;
    private final AtomicBoolean listening = new AtomicBoolean();
    /** Deliveries waiting for their insert ({@link #accept}), and whether a thread is inserting. */
    private final Queue<Arrival> arrivals = new ConcurrentLinkedQueue<>();
    private final AtomicBoolean inserting = new AtomicBoolean();
    /** Where the inserts go: a connection of their own, so that no acknowledgement waits for the pool's. */
    private final DedicatedConnection inserts;
    /** Deliveries handed to this replica's worker and not done with here (their progress notes stay). */
    private final Set<Long> open = ConcurrentHashMap.newKeySet();
    /**
     * Deliveries in {@link #accept} from before their insert until they are {@link #open}: their
     * rows may be committed already, and {@link #adoptable} must not hand them to the worker a
     * second time (the worker could finish that copy before accept adds it to {@code open}, which
     * would then keep it for good).
     */
    private final Set<Arrival> accepting = ConcurrentHashMap.newKeySet();
    /** Runs in {@link #accept} after a delivery's insert, before it is open. For tests. */
    private volatile Runnable afterInsert = () -> { };
    /**
     * The bodies of deliveries this replica acknowledged and has not done with, so that taking one
     * reads only its row's small columns: reading the body back costs the database more than any
     * other statement of a delivery (its TOAST, decompressed). At most {@link #BODIES_HELD} bytes;
     * the rest are read from the row.
     */
    private final Map<Long, byte[]> bodies = new ConcurrentHashMap<>();
    private final java.util.concurrent.atomic.AtomicLong bodyBytes = new java.util.concurrent.atomic.AtomicLong();
    /** At most this many bytes of bodies are kept in memory ({@link #bodies}). */
    static final long BODIES_HELD = 32L << 20;
    /**
     * Deliveries this replica acknowledged in this process, whose bodies it holds and which its
     * worker has not taken yet: {@link #takeProvisionally} of one reads nothing (a provisional
     * turn, checked by its done mark).
     */
    private final Set<Long> fresh = ConcurrentHashMap.newKeySet();

    PgDeliveryQueue(PostgresDatabase db, String replica, Clock clock) {
        this.db = db;
        this.replica = replica;
        this.clock = clock;
        this.turns = db.replicas(replica, clock);
        this.inserts = db.dedicated();
    }

    @Override
    public void onQueued(Consumer<Queued> listener) {
        this.listener = listener;
    }

    /** One delivery waiting to be inserted by {@link #accept}: its number, or null if its id was there. */
    private static final class Arrival {
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

    /**
     * Queues the delivery: its row committed. Deliveries that arrive while an insert is under way
     * wait for it and then go in together, in one statement and one commit (one flush of the
     * database's WAL for all of them, as the file inbox shares one fdatasync): under load the
     * commits are what limits acknowledgements. The thread that finds no insert under way does
     * the inserts until no delivery waits; the others wait for their own result, holding no lock.
     */
    @Override
    public Accepted accept(String id, String event, byte[] body, String key) {
        if (id == null || id.isEmpty()) {
            throw new IllegalArgumentException("a delivery needs an id");
        }
        Arrival me = new Arrival(id, event, body, key, clock.instant());
        accepting.add(me);
        try {
            return accept(me);
        } finally {
            accepting.remove(me); // after it is open, if it was queued: see accepting
        }
    }

    private Accepted accept(Arrival me) {
        String id = me.id;
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
        long seq;
        try {
            seq = me.seq.join();
        } catch (CompletionException e) {
            throw e.getCause() instanceof RuntimeException r ? r : new IllegalStateException(e.getCause());
        }
        if (seq < 0) {
            // received before; or an insert whose commit was lost with its connection landed after all,
            // which the tick's adoptable() hands to this replica's worker
            return Accepted.DUPLICATE;
        }
        Queued q = new Queued(seq, id, me.event, me.at, me.key);
        afterInsert.run();
        open.add(seq);
        if (hold(seq, me.body)) {
            fresh.add(seq);
        }
        listener.accept(q);
        return Accepted.QUEUED;
    }

    /** Keeps the body in memory if there is room ({@link #BODIES_HELD}); whether it is kept. */
    private boolean hold(long seq, byte[] body) {
        if (bodyBytes.addAndGet(body.length) <= BODIES_HELD) {
            bodies.put(seq, body);
            return true;
        }
        bodyBytes.addAndGet(-body.length);
        return false;
    }

    /** Done with the delivery here: its body is no longer kept. */
    private void close(long seq) {
        open.remove(seq);
        fresh.remove(seq);
        byte[] body = bodies.remove(seq);
        if (body != null) {
            bodyBytes.addAndGet(-body.length);
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
            Map<String, Long> inserted = inserts.run(c -> {
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

    @Override
    public boolean received(String id) {
        return db.autoCommit(c -> {
            try (PreparedStatement s = c.prepareStatement("SELECT 1 FROM deliveries WHERE id = ?")) {
                s.setString(1, id);
                try (ResultSet r = s.executeQuery()) {
                    return r.next();
                }
            }
        });
    }

    /** Selects queued deliveries: the queue's rows as {@code d}, what was received of each as {@code h}; a WHERE follows. */
    private static final String QUEUED = "SELECT d.seq, h.id, h.event, h.received_at, d.order_key FROM delivery_queue d "
            + "JOIN deliveries h ON h.seq = d.seq ";

    /** What this replica held when it stopped (the same name on the same data dir). */
    @Override
    public List<Queued> queued() {
        List<Queued> out = select(QUEUED + "WHERE d.replica = ? ORDER BY d.seq", replica);
        out.forEach(q -> open.add(q.seq()));
        return out;
    }

    /**
     * Deliveries held by replicas that are gone, and any this replica holds that its worker was
     * never handed (an insert that committed although its connection broke before the answer).
     */
    @Override
    public List<Queued> adoptable(Instant now) {
        // open before the query too: one done with while the query ran may still be in its snapshot
        Set<Long> openBefore = Set.copyOf(open);
        // not added to open here: only take() makes a taken-over delivery this replica's
        return select(QUEUED + "WHERE (d.replica = ? OR NOT " + Heartbeats.ALIVE + ") ORDER BY d.seq LIMIT " + ADOPT_BATCH,
                replica).stream().filter(q -> !openBefore.contains(q.seq()) && !open.contains(q.seq())
                        && !beingAccepted(q.id())).toList();
    }

    /** Whether {@link #accept} of a delivery with this id is under way here (its thread hands it over). */
    private boolean beingAccepted(String id) {
        for (Arrival a : accepting) {
            if (a.id.equals(id)) {
                return true;
            }
        }
        return false;
    }

    /** Has {@code hook} run in {@link #accept} after a delivery's insert, before it is open. For tests. */
    void afterInsert(Runnable hook) {
        this.afterInsert = hook;
    }

    private List<Queued> select(String sql, String arg) {
        return db.autoCommit(c -> {
            List<Queued> out = new ArrayList<>();
            try (PreparedStatement s = c.prepareStatement(sql)) {
                s.setString(1, arg);
                try (ResultSet r = s.executeQuery()) {
                    while (r.next()) {
                        out.add(new Queued(r.getLong(1), r.getString(2), r.getString(3),
                                r.getTimestamp(4).toInstant(), r.getString(5)));
                    }
                }
            }
            return out;
        });
    }

    /**
     * The deliveries this replica holds and has not done with, counted in memory: liveness
     * ({@code /healthz}) and {@code /metrics} read it, and must answer while the database is away.
     */
    @Override
    public int size() {
        return open.size();
    }

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
    /**
     * The channel on which a replica that finishes a delivery another replica waits for says so
     * (its order key as the payload), so that the waiting one goes on at once.
     */
    static final String LINE_FREED = "agentx_line_freed";

    /**
     * Takes the delivery if it is still queued, first in its line, and held here or by a replica
     * that is gone (then it is held here from now on); the same statement reads it. Otherwise
     * says why not. A delivery this replica holds is only read (no write, so no commit to wait
     * for): one query, of the queue alone (the id, event and time received are {@code q}'s, as the
     * queue's rows were read or written).
     *
     * @see #takeProvisionally
     */
    @Override
    public Turn take(Queued q, Instant now) {
        fresh.remove(q.seq());
        byte[] held = bodies.get(q.seq());
        Turn turn = db.autoCommit(c -> {
            for (int look = 1; ; look++) {
                try (PreparedStatement s = c.prepareStatement(TAKE_HELD)) {
                    s.setBoolean(1, held == null);
                    s.setLong(2, q.seq());
                    s.setString(3, replica);
                    Turn mine = mine(s, q, held);
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
            open.add(q.seq());
        } else if (turn instanceof Turn.Gone) {
            close(q.seq());
        } else if (turn instanceof Turn.Wait) {
            listenOnce();
        }
        return turn;
    }

    /**
     * As {@link #take}, but the common case asks nothing: the first take of a delivery this replica
     * acknowledged in this process, whose body it holds ({@link #fresh}), is a provisional turn. The
     * queue is asked at the done mark instead, which deletes the delivery's row only if it is still
     * this replica's and first in its line, and otherwise fails the delivery's transaction ({@link
     * #DONE_MARK}); the worker then takes it again, and that take asks. Each delivery costs the
     * database one round trip and one transaction fewer; one whose turn had not come (an earlier
     * delivery of its issue queued on another replica, received moments before it) is processed
     * once in vain.
     */
    @Override
    public Turn takeProvisionally(Queued q, Instant now) {
        byte[] held = bodies.get(q.seq());
        if (fresh.remove(q.seq()) && held != null) {
            return new Turn.Mine(new InboundDelivery(q.id(), q.event(), q.receivedAt(), held), Progress.NONE, true);
        }
        return take(q, now);
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

    @Override
    public void saveProgress(Queued q, Progress p) {
        db.autoCommit(c -> {
            try (PreparedStatement s = c.prepareStatement("UPDATE delivery_queue SET attempts = ?, not_before = ? "
                    + "WHERE seq = ? AND replica = ?")) {
                s.setInt(1, p.attempts());
                s.setTimestamp(2, p.notBefore() == null ? null : Timestamp.from(p.notBefore()));
                s.setLong(3, q.seq());
                s.setString(4, replica);
                return s.executeUpdate();
            }
        });
    }

    /**
     * Makes the done marks so far durable: one write committed synchronously (this replica's
     * heartbeat), whose flush of the WAL covers every commit before it, those made without
     * waiting ({@link #finish}) too. Then every delivery not open here is durably done with.
     */
    @Override
    public LongPredicate syncDone() {
        Set<Long> waiting = Set.copyOf(open);
        db.autoCommit(c -> {
            Heartbeats.beat(c, replica, 0);
            return null;
        });
        return n -> !waiting.contains(n);
    }

    @Override
    public void done(Queued q) {
        finish(q, "processed", null);
    }

    @Override
    public void fail(Queued q, String why) {
        LOG.error("delivery {} marked failed in {}: {}", q.id(), db.describe(), why);
        finish(q, "failed", why);
    }

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
            + "AND (NOT ?::boolean OR " + FIRST_IN_LINE + ") "
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

    /**
     * Marks the delivery done with. Inside a transaction (a delivery's unit, {@link
     * PostgresDatabase#run}) the mark commits with the delivery's changes, sent with the commit
     * after every other write of the transaction ({@link Pipeline#last}), and the delivery must
     * still be this replica's and first in its line: one another replica took over meanwhile (this
     * one was paused past {@link #GONE_AFTER}), or one behind an earlier delivery still queued (a
     * provisional turn, {@link #takeProvisionally}), makes the unit roll back with LOCK_LOST, so
     * nothing it did counts twice or out of order.
     *
     * <p>A mark whose transaction wrote nothing else commits without waiting for the database's
     * WAL to reach the disk ({@code synchronous_commit} off, as the file inbox writes its done
     * records without a sync): a crash of the database may undo the last fraction of a second of
     * such marks, and those deliveries are processed again, which changes nothing. So a delivery
     * that changes nothing costs one flush of the WAL, its acknowledgement's. A transaction that
     * wrote anything else (effect claims among them: their effects are sent once it commits)
     * waits for the flush.
     */
    private void finish(Queued q, String state, String failure) {
        Instant at = clock.instant();
        String[] waitedBy = {null}; // the line's order key, when a later delivery of it waits elsewhere
        if (!db.open()) {
            db.write(new Pipeline().query(DONE_MARK, markBinder(q.seq(), replica, state, failure, at, null),
                    r -> waitedBy[0] = r.next() ? waitedKey(r) : null));
            close(q.seq());
            signalFreed(waitedBy[0]);
            return;
        }
        db.deferred().last(DONE_MARK, markBinder(q.seq(), replica, state, failure, at, "delivery " + q.id()
                + " is not replica " + replica + "'s to finish now (another replica took it over, or an earlier "
                + "delivery of its issue is still queued); what this attempt did is rolled back"),
                r -> waitedBy[0] = r.next() ? waitedKey(r) : null);
        db.join(new UnitOfWork.Participant() {
            @Override
            public void committed() {
                close(q.seq());
                signalFreed(waitedBy[0]);
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
     * Tells the replica waiting for this line ({@link #WAIT_FOR_HEAD}) that its turn has come, once
     * the done mark is committed. Should this fail, or the replica miss it, it looks again shortly.
     */
    private void signalFreed(String orderKey) {
        if (orderKey == null) {
            return;
        }
        try {
            db.notifications().signal(LINE_FREED, orderKey);
        } catch (RuntimeException e) {
            LOG.debug("could not signal that line {} is free: {}", orderKey, e.toString());
        }
    }

    /**
     * Listens from this replica's first wait for another's delivery on ({@link #listenOnce}): a
     * server alone on its database never waits, and keeps no connection open for it.
     */
    @Override
    public void onLineFreed(Consumer<String> freed, Runnable missed) {
        lineSignals = new LineSignals(freed, missed);
    }

    /** Whom {@link #onLineFreed} names. */
    private record LineSignals(Consumer<String> freed, Runnable missed) {
    }

    /**
     * Starts listening for {@link #LINE_FREED} if not yet. The wait that starts it was marked before
     * the listening connection is open, and its signal may come first: once it listens (and again
     * each time it listens anew after its connection broke) the worker is told that signals may
     * have been missed, and looks at its waiting lines again at once.
     */
    private void listenOnce() {
        LineSignals signals = lineSignals;
        if (signals != null && listening.compareAndSet(false, true)) {
            db.notifications().listen(LINE_FREED, signals.freed(), signals.missed());
        }
    }

    /**
     * What the database's queue holds, every replica's ({@code agentx store copy} from it): the
     * deliveries queued and not done with, in the order received, with their failed attempts, and
     * the ids of those done with (processed or failed) that it keeps, with when each was done with.
     */
    public static Acknowledged acknowledged(PostgresDatabase db) {
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
    public static Set<String> carry(PostgresDatabase db, Acknowledged from, String holder) {
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
    public static void uncarry(PostgresDatabase db, java.util.Collection<String> ids) {
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

    /** One delivery as {@link #recent} lists it; {@code state} is {@code queued}, {@code processed} or {@code failed}. */
    public record Row(String id, String event, Instant receivedAt, Instant doneAt, String state, String replica) {
    }

    /** The deliveries every replica received, newest first, at most {@code limit}; and how many there are. */
    public Listing recent(int limit) {
        return db.inTransaction(c -> {
            List<Row> rows = new ArrayList<>();
            try (PreparedStatement s = c.prepareStatement("SELECT h.id, h.event, h.received_at, h.done_at, h.state, "
                    + "coalesce(d.replica, h.replica) FROM deliveries h LEFT JOIN delivery_queue d ON d.seq = h.seq "
                    + "ORDER BY h.seq DESC LIMIT ?")) {
                s.setInt(1, limit);
                try (ResultSet r = s.executeQuery()) {
                    while (r.next()) {
                        Timestamp done = r.getTimestamp(4);
                        rows.add(new Row(r.getString(1), r.getString(2), r.getTimestamp(3).toInstant(),
                                done == null ? null : done.toInstant(), r.getString(5), r.getString(6)));
                    }
                }
            }
            try (PreparedStatement s = c.prepareStatement("SELECT count(*) FROM deliveries");
                 ResultSet r = s.executeQuery()) {
                r.next();
                return new Listing(r.getInt(1), rows);
            }
        });
    }

    /** {@link #recent}'s answer. */
    public record Listing(int total, List<Row> rows) {
    }

    /**
     * Vacuums {@code delivery_queue}, on one replica at a time. Each done mark deletes a row, and
     * until a vacuum removes them the deleted rows (and their bodies in the table's TOAST) stay
     * where every read of the queue goes: autovacuum looks at a database about once a minute, which
     * at 200 deliveries a second is some 12,000 rows and 190 MB of bodies; the line check and the
     * listings read past them. Vacuumed at every tick, the queue holds a few seconds' worth; a
     * vacuum of a table that small costs little, but it renews the table's statistics, and with
     * them every pooled connection of every replica plans the queue's statements again (about 2 ms
     * for the done mark): so the replica holding the turn ({@link #TIDY_TURN}, a lease) vacuums for
     * all of them, and the others skip. The emptied pages stay the table's, for the next rows
     * (V3__queues_keep_their_pages.sql): giving them back would take a lock that every
     * acknowledgement's insert waits for. Needs the table's owner, the role that ran the migrations;
     * any other gets PostgreSQL's warning and autovacuum alone.
     */
    @Override
    public void tidy() {
        vacuum();
    }

    /** {@link #tidy}: whether this replica vacuumed (it holds the turn). */
    boolean vacuum() {
        if (!turns.lease("vacuum delivery_queue", clock.instant(), TIDY_TURN)) {
            return false; // another replica vacuums the queue for every replica
        }
        db.autoCommit(c -> {
            try (java.sql.Statement s = c.createStatement()) {
                s.execute("VACUUM (SKIP_LOCKED) delivery_queue");
            }
            return null;
        });
        return true;
    }

    /**
     * Deletes the rows of deliveries received over {@link #KEEP_DONE} ago and done with (any replica
     * may; repeating it is harmless). By the time received, which is indexed and never changes, so
     * that the done mark's update of a row touches no index.
     */
    @Override
    public void prune() {
        int n = db.autoCommit(c -> {
            try (PreparedStatement s = c.prepareStatement("DELETE FROM deliveries WHERE state <> 'queued' "
                    + "AND received_at < ?")) {
                s.setTimestamp(1, Timestamp.from(clock.instant().minus(KEEP_DONE)));
                return s.executeUpdate();
            }
        });
        if (n > 0) {
            LOG.info("deliveries: forgot {} received over {} days ago", n, KEEP_DONE.toDays());
        }
    }
}
