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

    /** At most this many events go into one statement (six parameters each, of the 65,535 a statement may have). */
    private static final int MAX_ROWS = 1000;

    /**
     * One statement per thousand events. Inside a transaction they are sent with the transaction's
     * next round trip ({@link PostgresDatabase#deferred}); outside one they are a transaction of
     * their own.
     */
    @Override
    public void publish(List<ClarificationEvent> events) {
        if (events.isEmpty()) {
            return;
        }
        Pipeline inserts = new Pipeline();
        for (int from = 0; from < events.size(); from += MAX_ROWS) {
            List<ClarificationEvent> rows = List.copyOf(events.subList(from, Math.min(events.size(), from + MAX_ROWS)));
            List<String> json = rows.stream().map(e -> new String(JsonlEventLog.json(e), StandardCharsets.UTF_8))
                    .toList();
            StringBuilder sql = new StringBuilder("INSERT INTO events (repo, type, issue, clarification_id, at, "
                    + "event) VALUES ");
            for (int i = 0; i < rows.size(); i++) {
                sql.append(i == 0 ? "" : ", ").append("(?, ?, ?, ?, ?, ?::jsonb)");
            }
            inserts.add(sql.toString(), p -> {
                for (int i = 0; i < rows.size(); i++) {
                    ClarificationEvent e = rows.get(i);
                    p.text(repo).text(e.event().wire()).integer(e.issueNumber()).text(e.clarificationId())
                            .time(e.timestamp()).text(json.get(i));
                }
            });
        }
        db.write(inserts);
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
