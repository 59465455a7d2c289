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
import java.util.Collection;
import java.util.HashSet;
import java.util.Optional;
import java.util.Set;
import java.util.SortedMap;
import java.util.TreeMap;

/** {@link Notes} as rows of {@code shared_notes}. */
public final class PgNotes implements Notes {
    private final PostgresDatabase db;
    private final Clock clock;
    private final ObjectMapper json = JsonSupport.mapper();

    private final String replica;

    PgNotes(PostgresDatabase db, String replica, Clock clock) {
        this.db = db;
        this.replica = replica;
        this.clock = clock;
    }

    @Override
    public <T> Optional<T> get(String name, Class<T> type) {
        String text = db.inTransaction(c -> {
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
    public Set<String> putAndClaim(String name, Object value, java.util.Map<String, String> effects) {
        String text;
        try {
            text = json.writeValueAsString(value);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return db.inTransaction(c -> {
            Timestamp now = Timestamp.from(clock.instant());
            try (PreparedStatement s = c.prepareStatement("INSERT INTO shared_notes (name, note, updated_at) "
                    + "VALUES (?, ?::jsonb, ?) ON CONFLICT (name) DO UPDATE SET note = EXCLUDED.note, "
                    + "updated_at = EXCLUDED.updated_at")) {
                s.setString(1, name);
                s.setString(2, text);
                s.setTimestamp(3, now);
                s.executeUpdate();
            }
            Set<String> claimed = new HashSet<>();
            if (effects.isEmpty()) {
                return claimed;
            }
            try (PreparedStatement s = c.prepareStatement("INSERT INTO effect_claims (hash, replica, claimed_at, "
                    + "effect) SELECT h, ?, ?, e::jsonb FROM unnest(?::text[], ?::text[]) AS t(h, e) "
                    + "ON CONFLICT (hash) DO NOTHING RETURNING hash")) {
                java.util.List<String> hashes = new java.util.ArrayList<>(effects.keySet());
                s.setString(1, replica);
                s.setTimestamp(2, now);
                s.setArray(3, c.createArrayOf("text", hashes.toArray()));
                s.setArray(4, c.createArrayOf("text", hashes.stream().map(effects::get).toArray()));
                try (ResultSet r = s.executeQuery()) {
                    while (r.next()) {
                        claimed.add(r.getString(1));
                    }
                }
            }
            return claimed;
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
