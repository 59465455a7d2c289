package dev.agentx.clarify.store.postgres;

import dev.agentx.clarify.store.Acknowledged;
import dev.agentx.clarify.store.DeliveryQueue;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Timestamp;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
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
 *
 * <p>Its parts: the acknowledgements' grouped inserts ({@link DeliveryInserts}), what this replica
 * holds in memory ({@link HeldDeliveries}), the turns at a delivery and the take-overs from gone
 * replicas ({@link DeliveryTurns}), the done marks ({@link DoneMarks}), and the signals that a line
 * another replica waits for is free ({@link LineSignals}).
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

    private final PostgresDatabase db;
    private final String replica;
    private final Clock clock;
    /** Leases among the replicas: whose turn it is to vacuum the queue. */
    private final PgReplicas leases;
    private volatile Consumer<Queued> listener = q -> { };
    private final DeliveryInserts inserts;
    private final HeldDeliveries held = new HeldDeliveries();
    private final LineSignals lineSignals;
    private final DeliveryTurns turns;
    private final DoneMarks doneMarks;
    /**
     * Deliveries in {@link #accept} from before their insert until they are open ({@link
     * HeldDeliveries}): their rows may be committed already, and {@link #adoptable} must not hand
     * them to the worker a second time (the worker could finish that copy before accept opens it,
     * which would then keep it for good).
     */
    private final Set<DeliveryInserts.Arrival> accepting = ConcurrentHashMap.newKeySet();
    /** Runs in {@link #accept} after a delivery's insert, before it is open. For tests. */
    private volatile Runnable afterInsert = () -> { };

    PgDeliveryQueue(PostgresDatabase db, String replica, Clock clock) {
        this.db = db;
        this.replica = replica;
        this.clock = clock;
        this.leases = db.replicas(replica, clock);
        this.inserts = new DeliveryInserts(db.dedicated(), replica);
        this.lineSignals = new LineSignals(db.notifications());
        this.turns = new DeliveryTurns(db, replica, held, lineSignals);
        this.doneMarks = new DoneMarks(db, replica, clock, held, lineSignals);
    }

    @Override
    public void onQueued(Consumer<Queued> listener) {
        this.listener = listener;
    }

    /**
     * Queues the delivery: its row committed, with the deliveries that arrive while an insert is
     * under way in one statement and one commit ({@link DeliveryInserts}).
     */
    @Override
    public Accepted accept(String id, String event, byte[] body, String key) {
        if (id == null || id.isEmpty()) {
            throw new IllegalArgumentException("a delivery needs an id");
        }
        DeliveryInserts.Arrival me = new DeliveryInserts.Arrival(id, event, body, key, clock.instant());
        accepting.add(me);
        try {
            return accept(me);
        } finally {
            accepting.remove(me); // after it is open, if it was queued: see accepting
        }
    }

    private Accepted accept(DeliveryInserts.Arrival me) {
        long seq = inserts.insert(me);
        if (seq < 0) {
            // received before; or an insert whose commit was lost with its connection landed after all,
            // which the tick's adoptable() hands to this replica's worker
            return Accepted.DUPLICATE;
        }
        Queued q = new Queued(seq, me.id, me.event, me.at, me.key);
        afterInsert.run();
        held.acknowledged(seq, me.body);
        listener.accept(q);
        return Accepted.QUEUED;
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
        out.forEach(q -> held.open(q.seq()));
        return out;
    }

    /**
     * Deliveries held by replicas that are gone, and any this replica holds that its worker was
     * never handed (an insert that committed although its connection broke before the answer).
     */
    @Override
    public List<Queued> adoptable(Instant now) {
        // open before the query too: one done with while the query ran may still be in its snapshot
        Set<Long> openBefore = held.openNow();
        // not added to open here: only take() makes a taken-over delivery this replica's
        return select(QUEUED + "WHERE (d.replica = ? OR NOT " + Heartbeats.ALIVE + ") ORDER BY d.seq LIMIT "
                + ADOPT_BATCH, replica).stream().filter(q -> !openBefore.contains(q.seq()) && !held.isOpen(q.seq())
                        && !beingAccepted(q.id())).toList();
    }

    /** Whether {@link #accept} of a delivery with this id is under way here (its thread hands it over). */
    private boolean beingAccepted(String id) {
        for (DeliveryInserts.Arrival a : accepting) {
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
        return held.size();
    }

    /** {@link DeliveryTurns#take}. */
    @Override
    public Turn take(Queued q, Instant now) {
        return turns.take(q);
    }

    /** {@link DeliveryTurns#takeProvisionally}. */
    @Override
    public Turn takeProvisionally(Queued q, Instant now) {
        return turns.takeProvisionally(q);
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

    /** {@link DoneMarks#syncDone}. */
    @Override
    public LongPredicate syncDone() {
        return doneMarks.syncDone();
    }

    /** Marks the delivery processed ({@link DoneMarks#finish}). */
    @Override
    public void done(Queued q) {
        doneMarks.finish(q, "processed", null);
    }

    /** Marks the delivery failed ({@link DoneMarks#finish}), keeping its body for whoever looks into it. */
    @Override
    public void fail(Queued q, String why) {
        LOG.error("delivery {} marked failed in {}: {}", q.id(), db.describe(), why);
        doneMarks.finish(q, "failed", why);
    }

    /** {@link LineSignals#onFreed}. */
    @Override
    public void onLineFreed(Consumer<String> freed, Runnable missed) {
        lineSignals.onFreed(freed, missed);
    }

    /** What the database's queue holds, every replica's ({@link CarriedDeliveries#acknowledged}). */
    public static Acknowledged acknowledged(PostgresDatabase db) {
        return CarriedDeliveries.acknowledged(db);
    }

    /** Adds what another store acknowledged ({@link CarriedDeliveries#carry}); returns the ids it added. */
    public static Set<String> carry(PostgresDatabase db, Acknowledged from, String holder) {
        return CarriedDeliveries.carry(db, from, holder);
    }

    /** Removes the deliveries {@link #carry} added ({@link CarriedDeliveries#uncarry}). */
    public static void uncarry(PostgresDatabase db, java.util.Collection<String> ids) {
        CarriedDeliveries.uncarry(db, ids);
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
        if (!leases.lease("vacuum delivery_queue", clock.instant(), TIDY_TURN)) {
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
