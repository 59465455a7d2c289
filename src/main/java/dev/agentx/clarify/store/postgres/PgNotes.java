package dev.agentx.clarify.store.postgres;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.agentx.clarify.files.JsonSupport;
import dev.agentx.clarify.store.Notes;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Timestamp;
import java.time.Clock;
import java.util.Optional;
import java.util.SortedMap;
import java.util.TreeMap;

/** {@link Notes} as rows of {@code shared_notes}. */
public final class PgNotes implements Notes {
    private final PostgresDatabase db;
    private final Clock clock;
    private final ObjectMapper json = JsonSupport.mapper();

    PgNotes(PostgresDatabase db, Clock clock) {
        this.db = db;
        this.clock = clock;
    }

    @Override
    public <T> Optional<T> get(String name, Class<T> type) {
        return read(name, type, false);
    }

    /** The lock is a transaction-level advisory lock on the name's hash, so a note not written yet has one too. */
    @Override
    public <T> Optional<T> lock(String name, Class<T> type) {
        if (!db.open()) {
            throw new IllegalStateException("a note is locked inside a unit only");
        }
        return read(name, type, true);
    }

    private <T> Optional<T> read(String name, Class<T> type, boolean lock) {
        String text = db.inTransaction(c -> {
            if (lock) {
                db.limitLockWaits(c);
                try (PreparedStatement s = c.prepareStatement("SELECT pg_advisory_xact_lock(hashtextextended(?, 0))")) {
                    s.setString(1, name);
                    s.executeQuery().close();
                }
            }
            try (PreparedStatement s = c.prepareStatement("SELECT note::text FROM shared_notes WHERE name = ?")) {
                s.setString(1, name);
                try (ResultSet r = s.executeQuery()) {
                    return r.next() ? r.getString(1) : null;
                }
            }
        });
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

    @Override
    public void put(String name, Object value) {
        String text;
        try {
            text = json.writeValueAsString(value);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        db.inTransaction(c -> {
            try (PreparedStatement s = c.prepareStatement("INSERT INTO shared_notes (name, note, updated_at) "
                    + "VALUES (?, ?::jsonb, ?) ON CONFLICT (name) DO UPDATE SET note = EXCLUDED.note, "
                    + "updated_at = EXCLUDED.updated_at")) {
                s.setString(1, name);
                s.setString(2, text);
                s.setTimestamp(3, Timestamp.from(clock.instant()));
                return s.executeUpdate();
            }
        });
    }

    /**
     * The issue notes of {@code repo} ({@link Notes#issueNote}) by issue number, each as its JSON
     * text: what the server put on GitHub for each issue.
     */
    public SortedMap<Integer, String> issueNotes(String repo) {
        String prefix = Notes.issueNotesOf(repo);
        String like = prefix.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%";
        return db.autoCommit(c -> {
            SortedMap<Integer, String> out = new TreeMap<>();
            try (PreparedStatement s = c.prepareStatement(
                    "SELECT name, note::text FROM shared_notes WHERE name LIKE ?")) {
                s.setString(1, like);
                try (ResultSet r = s.executeQuery()) {
                    while (r.next()) {
                        String note = r.getString(2);
                        Notes.issueOf(repo, r.getString(1)).ifPresent(issue -> out.put(issue, note));
                    }
                }
            }
            return out;
        });
    }
}
