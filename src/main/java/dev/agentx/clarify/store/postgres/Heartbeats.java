package dev.agentx.clarify.store.postgres;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.Map;
import java.util.OptionalLong;
import java.util.TreeMap;
import java.util.function.LongSupplier;

/**
 * The replicas' heartbeats, rows of {@code replica_beats} on the database's clock: each replica
 * beats every second, on a connection of its own; one whose last beat is older than {@link
 * #GONE_AFTER} is gone, and the others take over the deliveries and effect claims it held
 * ({@link #ALIVE}). Each beat also renews the replica's term ({@link ClaimTerms}) and says
 * whether other replicas run.
 */
final class Heartbeats {
    /** A replica whose heartbeat is older than this is gone: another takes over its deliveries and claims. */
    static final Duration GONE_AFTER = Duration.ofSeconds(15);
    /** A row of {@code replica_beats} whose replica has beaten within {@link #GONE_AFTER} (the database's clock). */
    static final String BEAT_FRESH = "seen_at > now() - make_interval(secs => " + GONE_AFTER.toSeconds() + ")";
    /** A gap between two of a replica's beats longer than this starts its steady time again. */
    static final Duration STEADY_GAP = Duration.ofSeconds(5);
    /**
     * Some replica has beaten without a gap for at least {@link #GONE_AFTER} and just now: the
     * database has worked for that long, so a heartbeat that much older was missed by its replica,
     * not by a stalled database (which makes every heartbeat stale at once).
     */
    static final String SOMEONE_STEADY = "EXISTS (SELECT 1 FROM replica_beats j WHERE j.seen_at > now() - "
            + "make_interval(secs => " + STEADY_GAP.toSeconds() + ") AND j.up_since <= now() - make_interval(secs => "
            + GONE_AFTER.toSeconds() + "))";
    /**
     * The replica named {@code d.replica} is not gone: it has beaten within {@link #GONE_AFTER},
     * or its heartbeat is older but no replica has beaten steadily for that long (the database
     * stalled, and the others are waited for until it has worked for {@link #GONE_AFTER} again).
     * A replica without a heartbeat (one that stopped and removed it) is gone at once.
     */
    static final String ALIVE = "EXISTS (SELECT 1 FROM replica_beats b WHERE b.replica = d.replica AND (b."
            + BEAT_FRESH + " OR NOT " + SOMEONE_STEADY + "))";

    private final Connections connections;
    private final Transactions transactions;
    /** What this replica's last heartbeat found: other replicas running ({@link #othersRunning()}). */
    private volatile boolean othersRunning;
    /** Whether this process's last heartbeat was recorded (it runs as a replica) and it has not left since. */
    private volatile boolean beating;
    /** The replicas' terms, as their heartbeats ({@link #beat(String)}) keep them. */
    private final ClaimTerms terms = new ClaimTerms();

    Heartbeats(Connections connections, Transactions transactions) {
        this.connections = connections;
        this.transactions = transactions;
    }

    /**
     * The heartbeat of {@code replica} (its row set to the database's clock), on a connection of
     * its own within about two seconds; whether it was recorded. A replica that cannot beat is
     * gone for the others, and also refuses deliveries itself.
     */
    boolean beat(String replica) {
        try (Connection c = connections.probe()) {
            long sent = terms.now();
            beat(c, replica, 2);
            terms.beaten(replica, sent);
            try (PreparedStatement s = c.prepareStatement("SELECT EXISTS (SELECT 1 FROM replica_beats "
                    + "WHERE replica <> ? AND " + BEAT_FRESH + ")")) {
                s.setQueryTimeout(2);
                s.setString(1, replica);
                try (ResultSet r = s.executeQuery()) {
                    othersRunning = r.next() && r.getBoolean(1);
                }
            }
            beating = true;
            return true;
        } catch (SQLException e) {
            beating = false;
            return false;
        }
    }

    /**
     * Whether this process is a replica that beats and found no other replica running at its last
     * beat: what it changes, no other server can be waiting to hear of (one that starts learns of
     * this one's changes from its first beat on, or at the latest when its waits look again).
     */
    boolean alone() {
        return beating && !othersRunning;
    }

    /**
     * Sets the heartbeat of {@code replica} to the database's clock on {@code c}, committed as
     * {@code c} commits; a beat more than {@link #STEADY_GAP} after the one before (the replica or
     * the database stalled) starts its steady time ({@code up_since}) again.
     */
    static void beat(Connection c, String replica, int timeoutSeconds) throws SQLException {
        try (PreparedStatement s = c.prepareStatement("INSERT INTO replica_beats (replica, seen_at, up_since) "
                + "VALUES (?, now(), now()) ON CONFLICT (replica) DO UPDATE SET up_since = CASE WHEN "
                + "replica_beats.seen_at > now() - make_interval(secs => " + STEADY_GAP.toSeconds()
                + ") THEN replica_beats.up_since ELSE now() END, seen_at = now()")) {
            s.setQueryTimeout(timeoutSeconds);
            s.setString(1, replica);
            s.executeUpdate();
        }
    }

    /** Whether other replicas had beaten within {@link #GONE_AFTER} at this replica's last {@link #beat}. */
    boolean othersRunning() {
        return othersRunning;
    }

    /**
     * The replicas that have beaten within {@link #GONE_AFTER}, with the age of
     * their last beat in whole seconds.
     */
    Map<String, Long> running() {
        return transactions.inTransaction(c -> {
            Map<String, Long> out = new TreeMap<>();
            try (PreparedStatement s = c.prepareStatement("SELECT replica, floor(extract(epoch FROM now() - seen_at)) "
                    + "FROM replica_beats WHERE " + BEAT_FRESH); ResultSet r = s.executeQuery()) {
                while (r.next()) {
                    out.put(r.getString(1), Math.max(0, r.getLong(2)));
                }
            }
            return out;
        });
    }

    /** Removes the heartbeat of {@code replica}, which stops: the others take over what it left at once. */
    void leave(String replica) {
        beating = false;
        transactions.autoCommit(c -> {
            try (PreparedStatement s = c.prepareStatement("DELETE FROM replica_beats WHERE replica = ?")) {
                s.setString(1, replica);
                return s.executeUpdate();
            }
        });
    }

    /** The term of {@code replica}'s claims ({@link ClaimTerms}): empty while its heartbeats have lapsed. */
    OptionalLong claimTerm(String replica) {
        return terms.current(replica);
    }

    /** Measures the terms with {@code ticker} (nanoseconds, never going back) instead of {@link System#nanoTime}. */
    void tickTermsWith(LongSupplier ticker) {
        terms.tickWith(ticker);
    }
}
