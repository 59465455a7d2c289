package dev.agentx.clarify.app;

import dev.agentx.clarify.config.ConfigLoader;
import dev.agentx.clarify.channel.HumanChannel;
import dev.agentx.clarify.lock.LockManager;
import dev.agentx.clarify.protocol.ClarifyException;
import dev.agentx.clarify.protocol.ErrorCode;
import dev.agentx.clarify.store.postgres.DatabaseUrl;
import dev.agentx.clarify.store.postgres.PostgresDatabase;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;

/**
 * Opens the server's PostgreSQL store from the CLI ({@code --database-url}), so an operator can
 * look at one repository's state with the same read commands as Local Mode.
 */
public final class ServerStore {
    private ServerStore() {
    }

    /** Local Mode over one repository of the database, and the database to close after the command. */
    public record Opened(LocalMode local, PostgresDatabase database) implements AutoCloseable {
        @Override
        public void close() {
            database.close();
        }
    }

    /**
     * Opens the server's database at {@code url} (a command's {@code --database-url}) to read, with
     * a pool of {@code connections}: its schema must be this build's, and is left as it is. A
     * malformed URL is a USAGE error naming the option.
     */
    public static PostgresDatabase openDatabase(String url, Map<String, String> env, int connections) {
        DatabaseUrl parsed;
        try {
            parsed = DatabaseUrl.parse(url, env);
        } catch (IllegalArgumentException e) {
            throw new ClarifyException(ErrorCode.USAGE, "--database-url: " + e.getMessage());
        }
        return PostgresDatabase.open(parsed, connections, Duration.ZERO, PostgresDatabase.Schema.EXPECT_CURRENT);
    }

    /**
     * Opens the database at {@code url} and one repository of it: {@code repo}, or when that is
     * null the only repository the database holds. Workflows and config come from {@code root}
     * (the ready queue's upstream order); no channel is asked: the commands that use this only read.
     */
    public static Opened open(Path root, Clock clock, String url, String repo, Map<String, String> env) {
        PostgresDatabase db = openDatabase(url, env, 2);
        try {
            String chosen = chosen(db, repo);
            LockManager locks = LockManager.standard(clock);
            LocalMode local = new LocalMode(root, clock, locks, db.repository(chosen), new HumanChannel(),
                    ConfigLoader.load(root.resolve(".agentx").resolve("config.toml")), env);
            return new Opened(local, db);
        } catch (RuntimeException e) {
            db.close();
            throw e;
        }
    }

    /**
     * The key of the repository to read: the one named {@code repo} now (in any case, as GitHub's
     * names are; the database keeps each repository's state by GitHub's id and records the name
     * it was last seen with), or with no {@code repo} the only one it holds. A name it holds
     * nothing of is a USAGE error listing what it holds, never an empty answer that reads as
     * "nothing open".
     */
    private static String chosen(PostgresDatabase db, String repo) {
        java.util.Set<String> keys = new java.util.HashSet<>(db.repositories());
        List<dev.agentx.clarify.store.RepositoryRecords.Repository> held = db.records().repositories().stream()
                .filter(r -> keys.contains(r.stateKey()))
                .sorted(java.util.Comparator.comparing(dev.agentx.clarify.store.RepositoryRecords.Repository::fullName))
                .toList();
        List<String> names = held.stream().map(dev.agentx.clarify.store.RepositoryRecords.Repository::fullName)
                .toList();
        if (repo != null) {
            return held.stream().filter(r -> r.fullName().equalsIgnoreCase(repo))
                    .max(java.util.Comparator.comparing(dev.agentx.clarify.store.RepositoryRecords.Repository::since))
                    .map(dev.agentx.clarify.store.RepositoryRecords.Repository::stateKey)
                    .orElseThrow(() -> new ClarifyException(ErrorCode.USAGE, "--repo " + repo + ": " + db.describe()
                            + " holds nothing of that repository" + (names.isEmpty() ? " (it holds no repository yet)."
                            : "; it holds " + String.join(", ", names) + ".")));
        }
        if (held.size() != 1) {
            throw new ClarifyException(ErrorCode.USAGE, held.isEmpty() ? db.describe() + " holds no "
                    + "repository yet." : "--repo OWNER/NAME is needed: " + db.describe() + " holds "
                    + String.join(", ", names) + ".");
        }
        return held.get(0).stateKey();
    }
}
