package dev.agentx.clarify.store;

import dev.agentx.clarify.lock.LockManager;
import dev.agentx.clarify.store.postgres.PostgresDatabase;
import dev.agentx.clarify.support.TestPostgres;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;

/** The same contract against a real PostgreSQL server, one database per test. */
@Tag("postgres")
class PostgresRepositoryStateTest extends RepositoryStateContract {
    private PostgresDatabase db;

    @Override
    protected RepositoryState state(LockManager locks) {
        if (db == null) {
            TestPostgres.Database d = TestPostgres.newDatabase();
            db = new PostgresDatabase(d.dataSource(), d.name());
        }
        return db.repository("acme/shop");
    }

    @AfterEach
    void close() {
        if (db != null) {
            db.close();
        }
    }
}
