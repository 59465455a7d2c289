package dev.agentx.clarify.store.postgres;

import dev.agentx.clarify.store.CommentLinks;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.util.Map;
import java.util.TreeMap;

/** {@link CommentLinks} as rows of {@code comment_links}, one per comment, seen by every replica. */
public final class PgCommentLinks implements CommentLinks {
    private final PostgresDatabase db;

    PgCommentLinks(PostgresDatabase db) {
        this.db = db;
    }

    @Override
    public void record(String repo, int issue, String key, long commentId) {
        db.autoCommit(c -> {
            try (PreparedStatement s = c.prepareStatement("INSERT INTO comment_links (repo, issue, effect_key, "
                    + "comment_id) VALUES (?, ?, ?, ?) ON CONFLICT (repo, issue, effect_key) DO UPDATE SET "
                    + "comment_id = EXCLUDED.comment_id")) {
                s.setString(1, repo);
                s.setInt(2, issue);
                s.setString(3, key);
                s.setLong(4, commentId);
                s.executeUpdate();
            }
            return null;
        });
    }

    @Override
    public Map<String, Long> of(String repo, int issue) {
        return db.autoCommit(c -> {
            Map<String, Long> out = new TreeMap<>();
            try (PreparedStatement s = c.prepareStatement("SELECT effect_key, comment_id FROM comment_links "
                    + "WHERE repo = ? AND issue = ?")) {
                s.setString(1, repo);
                s.setInt(2, issue);
                try (ResultSet r = s.executeQuery()) {
                    while (r.next()) {
                        out.put(r.getString(1), r.getLong(2));
                    }
                }
            }
            return out;
        });
    }
}
