package dev.agentx.clarify.store.postgres;

import dev.agentx.clarify.store.Replicas;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Timestamp;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/** {@link Replicas} as rows of {@code effect_claims}, {@code leases} and {@code installation_holds}. */
public final class PgReplicas implements Replicas {
    private final PostgresDatabase db;
    private final String replica;
    private final Clock clock;

    PgReplicas(PostgresDatabase db, String replica, Clock clock) {
        this.db = db;
        this.replica = replica;
        this.clock = clock;
    }

    @Override
    public String replica() {
        return replica;
    }

    /**
     * One statement. Inside a transaction (a delivery's effects, claimed as it commits) it is sent
     * with the transaction's commit, and the set it returns is filled then, before the commit.
     */
    @Override
    public java.util.Set<String> claimEffects(Map<String, ClaimedEffect> effects, Instant now) {
        java.util.Set<String> claimed = new java.util.HashSet<>();
        if (effects.isEmpty()) {
            return claimed;
        }
        List<String> hashes = new ArrayList<>(effects.keySet());
        List<String> json = hashes.stream().map(h -> effects.get(h).effect()).toList();
        // a row's list of hashes as one text (arrays of arrays must all be as long); hashes are hex
        List<String> after = hashes.stream().map(h -> effects.get(h).after())
                .map(a -> a == null ? null : String.join(",", a)).toList();
        // each a microsecond after the one before: a take-over (by claimed_at) sends them in the order queued
        Pipeline claim = new Pipeline().query("INSERT INTO effect_claims (hash, replica, claimed_at, effect, after) "
                + "SELECT h, ?, ?::timestamptz + (n - 1) * interval '1 microsecond', e, string_to_array(a, ',') "
                + "FROM unnest(?::text[], ?::text[], ?::text[]) WITH ORDINALITY AS t(h, e, a, n) "
                + "ON CONFLICT (hash) DO NOTHING RETURNING hash",
                p -> p.text(replica).time(now).texts(hashes).texts(json).texts(after),
                r -> {
                    while (r.next()) {
                        claimed.add(r.getString(1));
                    }
                });
        db.write(claim);
        return claimed;
    }

    @Override
    public EffectClaim claimEffect(String hash, String effect, Instant now, Instant takeOverBefore) {
        // the common case, an effect no other replica queued, is one statement in one round trip
        if (db.autoCommit(c -> {
            try (PreparedStatement s = c.prepareStatement("INSERT INTO effect_claims (hash, replica, claimed_at, "
                    + "effect) VALUES (?, ?, ?, ?) ON CONFLICT (hash) DO NOTHING")) {
                s.setString(1, hash);
                s.setString(2, replica);
                s.setTimestamp(3, Timestamp.from(now));
                s.setString(4, effect);
                return s.executeUpdate() == 1;
            }
        })) {
            return new EffectClaim(Claim.MINE, false, replica);
        }
        return db.inTransaction(c -> {
            String holder;
            boolean done;
            Instant claimedAt;
            boolean holderAlive;
            try (PreparedStatement s = c.prepareStatement("SELECT d.replica, d.done, d.claimed_at, "
                    + Heartbeats.ALIVE + " FROM effect_claims d WHERE d.hash = ? FOR UPDATE OF d")) {
                s.setString(1, hash);
                try (ResultSet r = s.executeQuery()) {
                    if (!r.next()) {
                        throw new SQLException("the claim of effect " + hash + " vanished (forgotten while queued?)");
                    }
                    holder = r.getString(1);
                    done = r.getBoolean(2);
                    claimedAt = r.getTimestamp(3).toInstant();
                    holderAlive = r.getBoolean(4);
                }
            }
            if (done || holder.equals(replica)) {
                return new EffectClaim(done ? Claim.DONE : Claim.MINE, false, holder);
            }
            // a claim is the holder's while it beats, for up to the take-over time; a holder that is
            // gone (no heartbeat for Heartbeats.GONE_AFTER) leaves it to be taken over at once
            if (holderAlive && !claimedAt.isBefore(takeOverBefore)) {
                return new EffectClaim(Claim.PENDING_ELSEWHERE, false, holder);
            }
            try (PreparedStatement s = c.prepareStatement("UPDATE effect_claims SET replica = ?, claimed_at = ? "
                    + "WHERE hash = ?")) {
                s.setString(1, replica);
                s.setTimestamp(2, Timestamp.from(now));
                s.setString(3, hash);
                s.executeUpdate();
            }
            return new EffectClaim(Claim.MINE, true, holder);
        });
    }

    @Override
    public void effectsDone(Collection<String> hashes) {
        if (hashes.isEmpty()) {
            return;
        }
        db.autoCommit(c -> {
            try (PreparedStatement s = c.prepareStatement("UPDATE effect_claims SET done = true, effect = NULL "
                    + "WHERE replica = ? AND hash = ANY (?)")) {
                s.setString(1, replica);
                s.setArray(2, c.createArrayOf("text", hashes.toArray()));
                s.executeUpdate();
            }
            return null;
        });
    }

    @Override
    public java.util.Set<String> unfinished(Collection<String> hashes) {
        java.util.Set<String> out = new java.util.HashSet<>();
        if (hashes.isEmpty()) {
            return out;
        }
        db.autoCommit(c -> {
            try (PreparedStatement s = c.prepareStatement("SELECT hash FROM effect_claims "
                    + "WHERE hash = ANY (?) AND NOT done AND replica <> ?")) {
                s.setArray(1, c.createArrayOf("text", hashes.toArray()));
                s.setString(2, replica);
                try (ResultSet r = s.executeQuery()) {
                    while (r.next()) {
                        out.add(r.getString(1));
                    }
                }
            }
            return null;
        });
        return out;
    }

    @Override
    public java.util.OptionalLong claimTerm() {
        return db.heartbeats().claimTerm(replica);
    }

    @Override
    public boolean othersRunning() {
        return db.heartbeats().othersRunning();
    }

    @Override
    public List<ClaimedEffect> adoptEffects(Instant now, int limit) {
        return db.inTransaction(c -> {
            // SKIP LOCKED: replicas taking over at the same moment each take other claims
            try (PreparedStatement s = c.prepareStatement("WITH picked AS (SELECT d.hash, d.claimed_at AS was "
                    + "FROM effect_claims d WHERE NOT d.done AND d.effect IS NOT NULL AND d.replica <> ? AND NOT "
                    + Heartbeats.ALIVE + " ORDER BY d.claimed_at LIMIT ? FOR UPDATE OF d SKIP LOCKED) "
                    + "UPDATE effect_claims e SET replica = ?, claimed_at = ? FROM picked WHERE e.hash = picked.hash "
                    + "RETURNING e.effect, e.after, picked.was")) {
                s.setString(1, replica);
                s.setInt(2, limit);
                s.setString(3, replica);
                s.setTimestamp(4, Timestamp.from(now));
                List<Map.Entry<Instant, ClaimedEffect>> taken = new ArrayList<>();
                try (ResultSet r = s.executeQuery()) {
                    while (r.next()) {
                        taken.add(Map.entry(r.getTimestamp(3).toInstant(), claimed(r)));
                    }
                }
                taken.sort(Map.Entry.comparingByKey()); // in the order they were claimed
                return taken.stream().map(Map.Entry::getValue).toList();
            }
        });
    }

    /** The effect and what it waits for, the first two columns of {@code r}'s row. */
    private static ClaimedEffect claimed(ResultSet r) throws SQLException {
        java.sql.Array after = r.getArray(2);
        return new ClaimedEffect(r.getString(1), after == null ? null : List.of((String[]) after.getArray()));
    }

    @Override
    public List<ClaimedEffect> unsentEffectsClaimedHere() {
        return db.autoCommit(c -> {
            try (PreparedStatement s = c.prepareStatement("SELECT effect, after FROM effect_claims "
                    + "WHERE NOT done AND replica = ? AND effect IS NOT NULL ORDER BY claimed_at")) {
                s.setString(1, replica);
                List<ClaimedEffect> out = new ArrayList<>();
                try (ResultSet r = s.executeQuery()) {
                    while (r.next()) {
                        out.add(claimed(r));
                    }
                }
                return out;
            }
        });
    }

    @Override
    public boolean lease(String name, Instant now, Duration ttl) {
        return db.inTransaction(c -> {
            try (PreparedStatement s = c.prepareStatement("INSERT INTO leases (name, holder, expires_at) "
                    + "VALUES (?, ?, ?) ON CONFLICT (name) DO UPDATE SET holder = EXCLUDED.holder, "
                    + "expires_at = EXCLUDED.expires_at WHERE leases.holder = EXCLUDED.holder "
                    + "OR leases.expires_at < ?")) {
                s.setString(1, name);
                s.setString(2, replica);
                s.setTimestamp(3, Timestamp.from(now.plus(ttl)));
                s.setTimestamp(4, Timestamp.from(now));
                return s.executeUpdate() == 1;
            }
        });
    }

    @Override
    public void holdInstallation(long installation, Instant until) {
        db.autoCommit(c -> {
            try (PreparedStatement s = c.prepareStatement("INSERT INTO installation_holds (installation, until) "
                    + "VALUES (?, ?) ON CONFLICT (installation) DO UPDATE SET until = GREATEST(installation_holds.until, "
                    + "EXCLUDED.until)")) {
                s.setLong(1, installation);
                s.setTimestamp(2, Timestamp.from(until));
                s.executeUpdate();
            }
            return null;
        });
    }

    @Override
    public Map<Long, Instant> installationHolds(Instant now) {
        return db.autoCommit(c -> {
            Map<Long, Instant> out = new HashMap<>();
            try (PreparedStatement s = c.prepareStatement("SELECT installation, until FROM installation_holds "
                    + "WHERE until > ?")) {
                s.setTimestamp(1, Timestamp.from(now));
                try (ResultSet r = s.executeQuery()) {
                    while (r.next()) {
                        out.put(r.getLong(1), r.getTimestamp(2).toInstant());
                    }
                }
            }
            return out;
        });
    }

    @Override
    public int forgetClaims(Instant before) {
        return db.inTransaction(c -> {
            int n = 0;
            try (PreparedStatement s = c.prepareStatement("DELETE FROM effect_claims WHERE claimed_at < ?")) {
                s.setTimestamp(1, Timestamp.from(before));
                n += s.executeUpdate();
            }
            return n;
        });
    }
}
