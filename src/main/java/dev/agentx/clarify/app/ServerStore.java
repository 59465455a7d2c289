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
     * The repository to read: {@code repo} as the database spells it (GitHub's names are not case
     * sensitive), or with no {@code repo} the only one it holds. A name it holds nothing of is a
     * USAGE error listing what it holds, never an empty answer that reads as "nothing open".
     */
    private static String chosen(PostgresDatabase db, String repo) {
        List<String> repos = db.repositories();
        if (repo != null) {
            if (repos.contains(repo)) {
                return repo;
            }
            List<String> alike = repos.stream().filter(r -> r.equalsIgnoreCase(repo)).toList();
            if (alike.size() == 1) {
                return alike.get(0);
            }
            throw new ClarifyException(ErrorCode.USAGE, "--repo " + repo + ": " + db.describe() + " holds nothing of "
                    + "that repository" + (repos.isEmpty() ? " (it holds no repository yet)." : "; it holds "
                    + String.join(", ", repos) + "."));
        }
        if (repos.size() != 1) {
            throw new ClarifyException(ErrorCode.USAGE, repos.isEmpty() ? db.describe() + " holds no "
                    + "repository yet." : "--repo OWNER/NAME is needed: " + db.describe() + " holds "
                    + String.join(", ", repos) + ".");
        }
        return repos.get(0);
    }
}
