package dev.agentx.clarify.cli;

import ch.qos.logback.classic.Level;
import dev.agentx.clarify.github.EnvFile;
import dev.agentx.clarify.github.GitHubMode;
import dev.agentx.clarify.github.GitHubSettings;
import dev.agentx.clarify.github.RepositoryMonitor;
import dev.agentx.clarify.files.RuntimeFolder;
import dev.agentx.clarify.logging.LogSetup;
import dev.agentx.clarify.protocol.ErrorCode;
import dev.agentx.clarify.store.files.DataDirectory;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Callable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import picocli.CommandLine.Command;

/** {@code agentx serve}: GitHub Mode, the GitHub App webhook server (docs/github-app.md). */
@Command(name = "serve", mixinStandardHelpOptions = true,
        description = "Run GitHub Mode: the GitHub App webhook server. Configured by the environment.",
        footer = {"", "Environment:",
                "  GITHUB_APP_ID                 the App ID (required)",
                "  GITHUB_APP_PRIVATE_KEY        the private key as PEM text (PKCS#1 or #8)",
                "  GITHUB_APP_PRIVATE_KEY_FILE   or the path of the downloaded .pem",
                "  GITHUB_WEBHOOK_SECRET         the webhook secret (old,new while rotating)",
                "  GITHUB_API_URL                default https://api.github.com",
                "                                (GitHub Enterprise: https://HOST/api/v3)",
                "  AGENTX_DATA_DIR               default ./agentx-data",
                "  PORT                          default 3000",
                "  AGENTX_WEBHOOK_PATH           default /api/github/webhooks",
                "  AGENTX_MANAGEMENT_PORT        default 9464: /metrics /readyz /healthz",
                "", "Example:",
                "  GITHUB_APP_ID=123456 GITHUB_APP_PRIVATE_KEY_FILE=app.pem \\",
                "      GITHUB_WEBHOOK_SECRET=s3cret agentx serve"})
public final class ServeCommand implements Callable<Integer> {
    /** Looked up on first use: the CLI must not start the logging system unless something is logged. */
    private static Logger log() {
        return LoggerFactory.getLogger(ServeCommand.class);
    }
    private final CliContext ctx;

    ServeCommand(CliContext ctx) {
        this.ctx = ctx;
    }

    @Override
    public Integer call() {
        GitHubSettings settings;
        EnvFile.Merged env;
        try {
            // the data dir's agentx.env (written by agentx setup) fills in what the environment lacks
            env = EnvFile.merge(ctx.env, ctx.cwd);
            settings = GitHubSettings.fromEnv(env.env(), ctx.cwd);
        } catch (IllegalArgumentException e) {
            return ctx.error(ErrorCode.USAGE, e.getMessage());
        }
        LogSetup.reconfigure(env.env());
        ctx.err.print(GitHubSettings.summary(settings, env.env(), ctx.cwd));
        if (env.file() != null) {
            ctx.err.println("  env file      " + env.file() + (env.fromFile().isEmpty() ? " (every variable in it is "
                    + "set in the environment, which wins)" : ": " + String.join(", ", env.fromFile())));
        }
        if (env.file() != null) {
            EnvFile.openToOthers(env.file(), "agentx.env").ifPresent(w -> ctx.err.println("agentx serve: WARNING: " + w));
        }
        String keyFile = env.env().get("GITHUB_APP_PRIVATE_KEY_FILE");
        if (keyFile != null && !keyFile.isBlank()) {
            EnvFile.openToOthers(ctx.cwd.resolve(keyFile.strip()), "the private key")
                    .ifPresent(w -> ctx.err.println("agentx serve: WARNING: " + w));
        }
        ctx.err.flush();
        if (!env.env().containsKey("AGENTX_LOG_LEVEL")
                && LoggerFactory.getLogger(Logger.ROOT_LOGGER_NAME) instanceof ch.qos.logback.classic.Logger root) {
            root.setLevel(Level.INFO);
        }
        // The monitor runs for the event's repository on every delivered event; its outcomes are posted.
        RepositoryMonitor monitor = RepositoryMonitor.STANDARD;
        // one server per data dir: held until this process ends, however it ends (the OS releases it);
        // kept reachable to the end of this method, so no collection closes its channel before
        AutoCloseable dataDirLock = DataDirectory.lockForServer(settings.dataDir());
        GitHubMode mode = GitHubMode.create(settings, ctx.clock,
                new GitHubMode.Options(false, monitor, null, null));
        CountDownLatch stopped = new CountDownLatch(1);
        // at exit, before the process leaves the repositories' runtime folders (RuntimeFolder): the
        // workers stop writing state before the last process out clears them
        RuntimeFolder.atExit(() -> {
            log().info("agentx serve: stopping");
            mode.close();
            stopped.countDown();
        });
        mode.rolesWarning().ifPresent(w -> {
            ctx.err.println("agentx serve: WARNING: " + w);
            ctx.err.flush();
        });
        mode.start();
        ctx.err.println("agentx serve: management on http://0.0.0.0:" + mode.managementPort()
                + " (/metrics /readyz /healthz)");
        ctx.err.println("agentx serve: listening on http://0.0.0.0:" + mode.port() + settings.webhookPath()
                + " (liveness: /healthz)");
        ctx.err.flush();
        try {
            stopped.await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        try {
            dataDirLock.close();
        } catch (Exception e) {
            // the process is ending: the OS releases it anyway
        }
        return 0;
    }
}
