package dev.agentx.clarify.bench;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.Locale;
import javax.sql.DataSource;

/**
 * What the embedded PostgreSQL's write-ahead log did over a span of a benchmark: the bytes
 * written, the WAL segments (16 MB files) it went into, how many files {@code pg_wal} gained
 * (a segment that no checkpoint recycled yet is made new, zero-filled and fsynced by whichever
 * process writes into it first, holding the WAL's write lock: every commit waits meanwhile,
 * an acknowledgement's too), the full-page images, the writes forced by full WAL buffers, and
 * the checkpoints. Counts, so they do not vary with how busy the machine is. Needs PostgreSQL
 * 14 or later ({@code pg_stat_wal}).
 */
final class WalActivity {
    /** One reading of the counters. */
    private record Reading(long lsnBytes, long files, long fpi, long buffersFull, long writes, long syncs,
                           long checkpointsTimed, long checkpointsRequested) {
    }

    private final DataSource source;
    private final Reading before;

    private WalActivity(DataSource source, Reading before) {
        this.source = source;
        this.before = before;
    }

    /** Reads the counters now; {@link #since} tells what changed. */
    static WalActivity start(DataSource source) throws SQLException {
        return new WalActivity(source, read(source));
    }

    private static Reading read(DataSource source) throws SQLException {
        try (Connection c = source.getConnection();
             PreparedStatement s = c.prepareStatement("SELECT pg_current_wal_lsn() - '0/0', "
                     + "(SELECT count(*) FROM pg_ls_waldir() WHERE name ~ '^[0-9A-F]{24}$'), w.wal_fpi, "
                     + "w.wal_buffers_full, w.wal_write, w.wal_sync, b.checkpoints_timed, b.checkpoints_req "
                     + "FROM pg_stat_wal w, pg_stat_bgwriter b");
             ResultSet r = s.executeQuery()) {
            r.next();
            return new Reading(r.getLong(1), r.getLong(2), r.getLong(3), r.getLong(4), r.getLong(5), r.getLong(6),
                    r.getLong(7), r.getLong(8));
        }
    }

    /** What changed since {@link #start}, as a sentence's worth for the report; {@code deliveries} scales it. */
    String since(int deliveries) throws SQLException {
        Reading now = read(source);
        long bytes = now.lsnBytes() - before.lsnBytes();
        long segment = 16L << 20;
        long entered = now.lsnBytes() / segment - before.lsnBytes() / segment;
        return String.format(Locale.ROOT, "%.1f MB of WAL (%.0f bytes per delivery), into %d new segments (16 MB "
                + "each), %d segment files more in pg_wal than before (files made new, not recycled by a checkpoint: "
                + "each written whole and fsynced while commits wait), %d full-page images, %d writes because the "
                + "WAL buffers were full, %d WAL writes and %d flushes, %d checkpoints started (%d timed, %d requested)",
                bytes / 1e6, bytes / (double) Math.max(1, deliveries), entered, now.files() - before.files(),
                now.fpi() - before.fpi(), now.buffersFull() - before.buffersFull(), now.writes() - before.writes(),
                now.syncs() - before.syncs(),
                now.checkpointsTimed() + now.checkpointsRequested() - before.checkpointsTimed()
                        - before.checkpointsRequested(),
                now.checkpointsTimed() - before.checkpointsTimed(),
                now.checkpointsRequested() - before.checkpointsRequested());
    }
}
