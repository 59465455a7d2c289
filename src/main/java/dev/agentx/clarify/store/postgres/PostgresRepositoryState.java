package dev.agentx.clarify.store.postgres;

import dev.agentx.clarify.store.RepositoryState;

/** One repository's ledgers, statuses and events as rows of the PostgreSQL store, keyed by {@code owner/name}. */
public final class PostgresRepositoryState implements RepositoryState {
    private final PostgresDatabase db;
    private final String repo;
    private final PgLedgerStore ledgers;
    private final PgAgentStatusStore statuses;
    private final PgEventLog events;
    private final PgActiveLedgers activeLedgers;

    PostgresRepositoryState(PostgresDatabase db, String repo) {
        this.db = db;
        this.repo = repo;
        this.ledgers = new PgLedgerStore(db, repo);
        this.activeLedgers = new PgActiveLedgers(db, repo, ledgers);
        this.statuses = new PgAgentStatusStore(db, repo, ledgers, activeLedgers);
        this.events = new PgEventLog(db, repo);
    }

    public String repo() {
        return repo;
    }

    @Override
    public PgLedgerStore ledgers() {
        return ledgers;
    }

    @Override
    public PgAgentStatusStore statuses() {
        return statuses;
    }

    @Override
    public PgEventLog events() {
        return events;
    }

    @Override
    public PgActiveLedgers activeLedgers() {
        return activeLedgers;
    }

    /** The ledgers' count and summed versions (every write raises one) and the statuses' last write. */
    @Override
    public String changeSignature() {
        return db.inTransaction(c -> {
            try (java.sql.PreparedStatement s = c.prepareStatement("SELECT (SELECT count(*) || ':' || "
                    + "coalesce(sum(version), 0) FROM ledgers WHERE repo = ?) || ';' || coalesce((SELECT "
                    + "updated_at::text FROM agent_statuses WHERE repo = ?), '-')")) {
                s.setString(1, repo);
                s.setString(2, repo);
                try (java.sql.ResultSet r = s.executeQuery()) {
                    r.next();
                    return r.getString(1);
                }
            }
        });
    }

    @Override
    public String describe() {
        return repo + " in " + db.describe();
    }
}
