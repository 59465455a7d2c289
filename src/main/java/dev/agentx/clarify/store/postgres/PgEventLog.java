package dev.agentx.clarify.store.postgres;

import com.fasterxml.jackson.core.JsonProcessingException;
import dev.agentx.clarify.events.ClarificationEvent;
import dev.agentx.clarify.events.EventLog;
import dev.agentx.clarify.events.EventType;
import dev.agentx.clarify.events.JsonlEventLog;
import dev.agentx.clarify.files.JsonSupport;
import java.nio.charset.StandardCharsets;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Timestamp;
import java.util.ArrayList;
import java.util.List;

/** A repository's event log as rows of {@code events}, each the JSON object of one {@code events.jsonl} line. */
public final class PgEventLog implements EventLog {
    private final PostgresDatabase db;
    private final String repo;

    PgEventLog(PostgresDatabase db, String repo) {
        this.db = db;
        this.repo = repo;
    }

    @Override
    public void publish(List<ClarificationEvent> events) {
        if (events.isEmpty()) {
            return;
        }
        db.inTransaction(c -> {
            try (PreparedStatement s = c.prepareStatement("INSERT INTO events (repo, type, issue, clarification_id, "
                    + "at, event) VALUES (?, ?, ?, ?, ?, ?::jsonb)")) {
                for (ClarificationEvent e : events) {
                    s.setString(1, repo);
                    s.setString(2, e.event().wire());
                    s.setInt(3, e.issueNumber());
                    s.setString(4, e.clarificationId());
                    s.setTimestamp(5, Timestamp.from(e.timestamp()));
                    s.setString(6, new String(JsonlEventLog.json(e), StandardCharsets.UTF_8));
                    s.addBatch();
                }
                s.executeBatch();
            }
            return null;
        });
    }

    @Override
    public Read read(EventType type) {
        return read(" AND type = ?", type.wire());
    }

    @Override
    public Read all() {
        return read("", null);
    }

    private Read read(String filter, String type) {
        return db.inTransaction(c -> {
            List<ClarificationEvent> out = new ArrayList<>();
            int unreadable = 0;
            try (PreparedStatement s = c.prepareStatement("SELECT event::text FROM events WHERE repo = ?" + filter
                    + " ORDER BY id")) {
                s.setString(1, repo);
                if (type != null) {
                    s.setString(2, type);
                }
                s.setFetchSize(1000);
                try (ResultSet r = s.executeQuery()) {
                    while (r.next()) {
                        try {
                            ClarificationEvent e = JsonSupport.shared().readValue(r.getString(1),
                                    ClarificationEvent.class);
                            if (e != null) {
                                out.add(e);
                            } else {
                                unreadable++;
                            }
                        } catch (JsonProcessingException | IllegalArgumentException e) {
                            unreadable++;
                        }
                    }
                }
            }
            return new Read(out, unreadable);
        });
    }
}
