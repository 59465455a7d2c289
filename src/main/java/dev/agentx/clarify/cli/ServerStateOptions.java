package dev.agentx.clarify.cli;

import dev.agentx.clarify.store.files.DataDirectory;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * {@code --database-url} and {@code --repo} of the read commands: read one repository of the
 * server's PostgreSQL store instead of {@code .agentx/}. Nothing is written: the monitor pass
 * that follows a command in Local Mode is left to the server.
 */
final class ServerStateOptions {
    private final CliContext ctx;

    @Spec(Spec.Target.MIXEE)
    CommandSpec spec;

    ServerStateOptions(CliContext ctx) {
        this.ctx = ctx;
    }

    @Option(names = "--database-url", paramLabel = "URL",
            description = "Read the server's PostgreSQL store at URL instead of .agentx/ (only reads); the "
                    + "password may come from AGENTX_DATABASE_PASSWORD_FILE. URL forms: docs/storage.md.")
    void setDatabaseUrl(String url) {
        ctx.databaseUrl = url;
    }

    @Option(names = "--repo", paramLabel = "OWNER/NAME",
            description = "With --database-url: the repository to read (needed when the database holds several).")
    void setRepo(String repo) {
        if (!DataDirectory.isRepository(repo)) {
            throw new ParameterException(spec.commandLine(), "--repo " + repo + ": give OWNER/NAME, like acme/shop");
        }
        ctx.repo = repo;
    }
}
