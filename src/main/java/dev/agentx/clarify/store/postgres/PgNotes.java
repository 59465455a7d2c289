package dev.agentx.clarify.store.postgres;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.agentx.clarify.files.JsonSupport;
import dev.agentx.clarify.store.Notes;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Clock;
import java.util.Map;
import java.util.Optional;
import java.util.SortedMap;
import java.util.TreeMap;

/** {@link Notes} as rows of {@code shared_notes}. */
public final class PgNotes implements Notes {
    private final PostgresDatabase db;
    private final Clock clock;
    /** An issue's note is keyed by record ids. */
    private final ObjectMapper json = JsonSupport.idKeyed();

    PgNotes(PostgresDatabase db, Clock clock) {
        this.db = db;
        this.clock = clock;
    }

    @Override
    public <T> Optional<T> get(String name, Class<T> type) {
        Map<String, String> mine = db.notesLockedIfAny();
        if (mine != null && mine.containsKey(name)) {
            return parse(name, mine.get(name), type);
        }
        // one statement: outside a transaction its own (no BEGIN and COMMIT around it), inside it joins it
        return parse(name, db.autoCommit(c -> select(c, name)), type);
    }

    /**
     * The lock is a transaction-level advisory lock on the name's hash, so a note not written yet
     * has one too; taking it and reading the note under it are one round trip (with the writes the
     * transaction deferred). Locked again in the same transaction, the note is not read again: the
     * lock keeps it as the transaction last read or wrote it. An issue's ledger held by the
     * transaction has locked the issue's note already ({@link #lockWith}).
     */
    @Override
    public <T> Optional<T> lock(String name, Class<T> type) {
        Map<String, String> mine = db.notesLocked();
        if (!mine.containsKey(name)) {
            Pipeline p = new Pipeline();
            db.limitLockWaits(p);
            lockWith(db, p, name);
            db.exchange(p);
        }
        return parse(name, mine.get(name), type);
    }

    /**
     * Adds to {@code p} the lock of the note {@code name} and its read under the lock, for the
     * transaction this thread has open, unless it holds that lock already: once {@code p} is sent
     * the transaction holds the note as {@link #lock} would.
     */
    static void lockWith(PostgresDatabase db, Pipeline p, String name) {
        Map<String, String> mine = db.notesLocked();
        if (mine.containsKey(name)) {
            return;
        }
        p.query("SELECT pg_advisory_xact_lock(hashtextextended(?, 0))", b -> b.text(name), r -> { })
                .query(SELECT, b -> b.text(name), r -> mine.put(name, r.next() ? r.getString(1) : null));
    }

    private static final String SELECT = "SELECT note FROM shared_notes WHERE name = ?";
    private static final String UPSERT = "INSERT INTO shared_notes (name, note, updated_at) VALUES (?, ?, ?) "
            + "ON CONFLICT (name) DO UPDATE SET note = EXCLUDED.note, updated_at = EXCLUDED.updated_at";

    private static String select(Connection c, String name) throws SQLException {
        try (PreparedStatement s = c.prepareStatement(SELECT)) {
            s.setString(1, name);
            try (ResultSet r = s.executeQuery()) {
                return r.next() ? r.getString(1) : null;
            }
        }
    }

    private <T> Optional<T> parse(String name, String text, Class<T> type) {
        if (text == null) {
            return Optional.empty();
        }
        try {
            return Optional.of(json.readValue(text, type));
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read the note " + name + " of " + db.describe() + " as "
                    + type.getSimpleName() + ": " + e.getMessage(), e);
        }
    }

    /** Inside a transaction the write is sent with its next round trip ({@link PostgresDatabase#deferred}). */
    @Override
    public void put(String name, Object value) {
        String text;
        try {
            text = json.writeValueAsString(value);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        java.time.Instant at = clock.instant();
        db.write(new Pipeline().add(UPSERT, p -> p.text(name).text(text).time(at)));
        Map<String, String> mine = db.notesLockedIfAny();
        if (mine != null && mine.containsKey(name)) {
            mine.put(name, text);
        }
    }

    /**
     * The issue notes of {@code repo} ({@link Notes#issueNote}) by issue number, each as its JSON
     * text: what the server put on GitHub for each issue.
     */
    public SortedMap<Integer, String> issueNotes(String repo) {
        SortedMap<Integer, String> out = new TreeMap<>();
        startingWith(Notes.issueNotesOf(repo)).forEach((name, note) ->
                Notes.issueOf(repo, name).ifPresent(issue -> out.put(issue, note)));
        return out;
    }

    /** The notes whose names start with {@code prefix}, by name, each as its JSON text. */
    public SortedMap<String, String> startingWith(String prefix) {
        String like = prefix.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%";
        return db.autoCommit(c -> {
            SortedMap<String, String> out = new TreeMap<>();
            try (PreparedStatement s = c.prepareStatement(
                    "SELECT name, note FROM shared_notes WHERE name LIKE ?")) {
                s.setString(1, like);
                try (ResultSet r = s.executeQuery()) {
                    while (r.next()) {
                        out.put(r.getString(1), r.getString(2));
                    }
                }
            }
            return out;
        });
    }
}
