package dev.agentx.clarify.store.postgres;

import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.agentx.clarify.files.JsonSupport;
import dev.agentx.clarify.store.DashboardSessions;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Timestamp;
import java.time.Instant;
import java.util.HexFormat;
import java.util.List;
import java.util.Optional;
import java.util.TreeSet;

/**
 * {@link DashboardSessions} as rows of {@code dashboard_sessions}, seen by every replica. A row is
 * keyed by the SHA-256 of the session id, so the table alone signs nobody in (the cookie is also
 * signed with a key the database never sees).
 */
public final class PgDashboardSessions implements DashboardSessions {
    private static final TypeReference<List<String>> LIST = new TypeReference<>() {
    };
    private final PostgresDatabase db;
    private final ObjectMapper json = JsonSupport.mapper();

    PgDashboardSessions(PostgresDatabase db) {
        this.db = db;
    }

    static String key(String id) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256")
                    .digest(id.getBytes(StandardCharsets.UTF_8)));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every JVM has SHA-256", e);
        }
    }

    @Override
    public void put(String id, Session session, Instant now) {
        String repositories;
        try {
            repositories = json.writeValueAsString(new TreeSet<>(session.repositories()));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        db.inTransaction(c -> {
            try (PreparedStatement s = c.prepareStatement("INSERT INTO dashboard_sessions (id_hash, login, "
                    + "repositories, expires) VALUES (?, ?, ?::jsonb, ?) ON CONFLICT (id_hash) DO UPDATE SET "
                    + "login = EXCLUDED.login, repositories = EXCLUDED.repositories, expires = EXCLUDED.expires")) {
                s.setString(1, key(id));
                s.setString(2, session.login());
                s.setString(3, repositories);
                s.setTimestamp(4, Timestamp.from(session.expires()));
                s.executeUpdate();
            }
            try (PreparedStatement s = c.prepareStatement("DELETE FROM dashboard_sessions WHERE expires <= ?")) {
                s.setTimestamp(1, Timestamp.from(now));
                s.executeUpdate();
            }
            return null;
        });
    }

    @Override
    public Optional<Session> get(String id, Instant now) {
        return db.autoCommit(c -> {
            try (PreparedStatement s = c.prepareStatement("SELECT login, repositories::text, expires FROM "
                    + "dashboard_sessions WHERE id_hash = ? AND expires > ?")) {
                s.setString(1, key(id));
                s.setTimestamp(2, Timestamp.from(now));
                try (ResultSet r = s.executeQuery()) {
                    if (!r.next()) {
                        return Optional.empty();
                    }
                    List<String> repositories;
                    try {
                        repositories = json.readValue(r.getString(2), LIST);
                    } catch (IOException e) {
                        throw new UncheckedIOException("a dashboard session's repositories are not a JSON list of "
                                + "names: " + e.getMessage(), e);
                    }
                    return Optional.of(new Session(r.getString(1), new TreeSet<>(repositories),
                            r.getTimestamp(3).toInstant()));
                }
            }
        });
    }

    @Override
    public Optional<String> remove(String id) {
        return db.autoCommit(c -> {
            try (PreparedStatement s = c.prepareStatement("DELETE FROM dashboard_sessions WHERE id_hash = ? "
                    + "RETURNING login")) {
                s.setString(1, key(id));
                try (ResultSet r = s.executeQuery()) {
                    return r.next() ? Optional.of(r.getString(1)) : Optional.<String>empty();
                }
            }
        });
    }
}
