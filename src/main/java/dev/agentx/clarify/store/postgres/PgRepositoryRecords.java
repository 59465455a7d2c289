package dev.agentx.clarify.store.postgres;

import dev.agentx.clarify.store.RepositoryRecords;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Timestamp;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

/** {@link RepositoryRecords} as rows of {@code repositories} and {@code installations}. */
public final class PgRepositoryRecords implements RepositoryRecords {
    private final PostgresDatabase db;

    PgRepositoryRecords(PostgresDatabase db) {
        this.db = db;
    }

    @Override
    public List<Repository> repositories() {
        return db.autoCommit(c -> {
            List<Repository> out = new ArrayList<>();
            try (PreparedStatement s = c.prepareStatement("SELECT id, owner, name, since, installation, archived, "
                    + "removed FROM repositories"); ResultSet r = s.executeQuery()) {
                while (r.next()) {
                    out.add(new Repository(r.getLong(1), r.getString(2), r.getString(3), instant(r.getTimestamp(4)),
                            r.getLong(5), instant(r.getTimestamp(6)), instant(r.getTimestamp(7))));
                }
            }
            return out;
        });
    }

    @Override
    public void put(Repository repo) {
        db.autoCommit(c -> {
            try (PreparedStatement s = c.prepareStatement("INSERT INTO repositories (id, owner, name, since, "
                    + "installation, archived, removed) VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO UPDATE SET "
                    + "owner = excluded.owner, name = excluded.name, since = excluded.since, installation = "
                    + "excluded.installation, archived = excluded.archived, removed = excluded.removed")) {
                s.setLong(1, repo.id());
                s.setString(2, repo.owner());
                s.setString(3, repo.name());
                s.setTimestamp(4, Timestamp.from(repo.since()));
                s.setLong(5, repo.installation());
                s.setTimestamp(6, timestamp(repo.archived()));
                s.setTimestamp(7, timestamp(repo.removed()));
                s.executeUpdate();
            }
            return null;
        });
    }

    @Override
    public List<Installation> installations() {
        return db.autoCommit(c -> {
            List<Installation> out = new ArrayList<>();
            try (PreparedStatement s = c.prepareStatement("SELECT id, state, since FROM installations");
                 ResultSet r = s.executeQuery()) {
                while (r.next()) {
                    out.add(new Installation(r.getLong(1), r.getString(2), instant(r.getTimestamp(3))));
                }
            }
            return out;
        });
    }

    @Override
    public void put(Installation i) {
        db.autoCommit(c -> {
            try (PreparedStatement s = c.prepareStatement("INSERT INTO installations (id, state, since) VALUES "
                    + "(?, ?, ?) ON CONFLICT (id) DO UPDATE SET state = excluded.state, since = excluded.since")) {
                s.setLong(1, i.id());
                s.setString(2, i.state());
                s.setTimestamp(3, Timestamp.from(i.since()));
                s.executeUpdate();
            }
            return null;
        });
    }

    @Override
    public void forgetInstallation(long id) {
        db.autoCommit(c -> {
            try (PreparedStatement s = c.prepareStatement("DELETE FROM installations WHERE id = ?")) {
                s.setLong(1, id);
                s.executeUpdate();
            }
            return null;
        });
    }

    private static Instant instant(Timestamp t) {
        return t == null ? null : t.toInstant();
    }

    private static Timestamp timestamp(Instant i) {
        return i == null ? null : Timestamp.from(i);
    }
}
