package dev.agentx.clarify.github;

import dev.agentx.clarify.config.UnreadableFile;
import dev.agentx.clarify.github.auth.PemKeys;
import dev.agentx.clarify.store.postgres.DatabaseUrl;
import java.io.IOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.interfaces.RSAPrivateKey;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The server's settings, from the environment of docs/github-app.md.
 *
 * @param webhookSecrets every accepted secret (rotation: old and new side by side)
 * @param maxBodyBytes webhook bodies above this are refused with 413 (GitHub caps payloads at 25 MB)
 * @param managementPort the port of /metrics, /readyz and /healthz for probes and Prometheus
 * @param redeliveryInterval how often the recovery pass asks GitHub for deliveries never received; zero: never
 * @param clientId the App's OAuth client id, for signing in to /dashboard; null: no dashboard
 * @param clientSecret the App's OAuth client secret; null exactly when clientId is
 */
public record GitHubSettings(String appId, RSAPrivateKey privateKey, List<byte[]> webhookSecrets, String apiUrl,
                             Path dataDir, int port, String webhookPath, long maxBodyBytes, int managementPort,
                             Duration redeliveryInterval, String clientId, String clientSecret,
                             DatabaseUrl database) {
    public static final String DEFAULT_API_URL = "https://api.github.com";
    public static final String DEFAULT_PATH = "/api/github/webhooks";
    public static final int DEFAULT_PORT = 3000;
    /** The management port's default: 9464, where OpenTelemetry's Prometheus exporter listens too. */
    public static final int DEFAULT_MANAGEMENT_PORT = 9464;
    public static final long MAX_BODY_BYTES = 25L * 1024 * 1024;

    /** Every environment variable {@link #fromEnv} reads (deploy files are checked against it). */
    public static final List<String> ENV_NAMES = List.of("GITHUB_APP_ID", "GITHUB_APP_PRIVATE_KEY",
            "GITHUB_APP_PRIVATE_KEY_FILE", "GITHUB_WEBHOOK_SECRET", "GITHUB_API_URL", "AGENTX_DATA_DIR", "PORT",
            "AGENTX_WEBHOOK_PATH", "AGENTX_MANAGEMENT_PORT", "AGENTX_REDELIVERY_INTERVAL",
            "GITHUB_CLIENT_ID", "GITHUB_CLIENT_SECRET", DatabaseUrl.ENV, DatabaseUrl.PASSWORD_FILE_ENV);
    /**
     * The variables whose values are the App's secrets: its private key, webhook secret, OAuth
     * client secret and the database URL (which may hold a password). Agents never get them.
     */
    public static final List<String> SECRET_ENV_NAMES = List.of("GITHUB_APP_PRIVATE_KEY", "GITHUB_WEBHOOK_SECRET",
            "GITHUB_CLIENT_SECRET", DatabaseUrl.ENV);
    public static final Duration DEFAULT_REDELIVERY_INTERVAL = Duration.ofMinutes(10);

    /**
     * The server's environment as its answer channels get it: everything but {@link
     * #SECRET_ENV_NAMES}. A command agent runs whatever it is given, often a model reading the
     * question's text, and what it prints last on stderr is posted on the issue when it fails; an
     * http channel's {@code secret_env} names a variable of its own.
     */
    public static Map<String, String> forAgents(Map<String, String> env) {
        Map<String, String> out = new java.util.HashMap<>(env);
        SECRET_ENV_NAMES.forEach(out::remove);
        return Map.copyOf(out);
    }
    /** Paths the server serves itself; the webhook path must be none of them. */
    public static final List<String> RESERVED_PATHS = List.of("/healthz", "/readyz", "/metrics");

    public GitHubSettings {
        webhookSecrets = List.copyOf(webhookSecrets);
    }

    /** The key's PEM text as configured (inline or from the file), or null when neither is set or readable. */
    private static String keyText(Map<String, String> env, Path cwd) throws IOException {
        String keyText = env.get("GITHUB_APP_PRIVATE_KEY");
        String keyFile = trim(env.get("GITHUB_APP_PRIVATE_KEY_FILE"));
        if (keyText != null && !keyText.isBlank()) {
            return keyText;
        }
        return keyFile == null ? null : Files.readString(cwd.resolve(keyFile), StandardCharsets.US_ASCII);
    }

    /**
     * What {@code agentx serve} prints at start-up: every setting except secret values (the number
     * of webhook secrets, the key's form and where it came from).
     */
    public static String summary(GitHubSettings s, Map<String, String> env, Path cwd) {
        String source = env.get("GITHUB_APP_PRIVATE_KEY") != null && !env.get("GITHUB_APP_PRIVATE_KEY").isBlank()
                ? "GITHUB_APP_PRIVATE_KEY" : "GITHUB_APP_PRIVATE_KEY_FILE " + cwd.resolve(trim(env.get(
                "GITHUB_APP_PRIVATE_KEY_FILE")));
        String format;
        try {
            format = PemKeys.format(keyText(env, cwd));
        } catch (IOException | RuntimeException e) {
            format = "RSA";
        }
        return "agentx serve configuration:\n"
                + "  app id        " + s.appId() + "\n"
                + "  private key   " + format + " RSA " + s.privateKey().getModulus().bitLength() + " bits, from "
                + source + "\n"
                + "  webhook       " + s.webhookSecrets().size() + " secret(s) (values not shown), path "
                + s.webhookPath() + "\n"
                + "  GitHub API    " + s.apiUrl() + "\n"
                + "  data dir      " + s.dataDir() + "\n"
                + "  state         " + (s.database() == null ? "files under the data dir (AGENTX_DATABASE_URL not set)"
                : "PostgreSQL " + s.database() + (s.database().hasPassword() ? "" : ", no password")) + "\n"
                + "  port          " + s.port() + "\n"
                + "  management    port " + s.managementPort() + " (/metrics /readyz /healthz)\n"
                + "  recovery      " + (s.redeliveryInterval().isZero() ? "off" : "every "
                + s.redeliveryInterval().toString().substring(2).toLowerCase(java.util.Locale.ROOT)) + "\n"
                + "  dashboard     " + (s.clientId() == null ? "off (set GITHUB_CLIENT_ID and GITHUB_CLIENT_SECRET)"
                : "/dashboard, sign-in with GitHub as client " + s.clientId()) + "\n";
    }

    /** Reads the settings; every problem found is reported at once, one per line. */
    public static GitHubSettings fromEnv(Map<String, String> env, Path cwd) {
        List<String> problems = new ArrayList<>();
        String appId = trim(env.get("GITHUB_APP_ID"));
        if (appId == null) {
            problems.add("GITHUB_APP_ID is not set: the App ID from the GitHub App's settings page (a number).");
        } else if (!appId.matches("[1-9]\\d{0,17}")) {
            problems.add("GITHUB_APP_ID must be the numeric App ID, got '" + appId + "'.");
        }
        problems.addAll(dev.agentx.clarify.logging.LogSetup.problems(env));
        RSAPrivateKey key = null;
        String keyText = env.get("GITHUB_APP_PRIVATE_KEY");
        String keyFile = trim(env.get("GITHUB_APP_PRIVATE_KEY_FILE"));
        try {
            if (keyText != null && !keyText.isBlank() && keyFile != null) {
                problems.add("Both GITHUB_APP_PRIVATE_KEY and GITHUB_APP_PRIVATE_KEY_FILE are set: unset one of them, "
                        + "so that it is clear which key the App signs with.");
            } else if (keyText != null && !keyText.isBlank()) {
                key = PemKeys.parse(keyText, "GITHUB_APP_PRIVATE_KEY");
            } else if (keyFile != null) {
                key = PemKeys.parse(keyText(env, cwd), "GITHUB_APP_PRIVATE_KEY_FILE " + cwd.resolve(keyFile));
            } else {
                problems.add("Neither GITHUB_APP_PRIVATE_KEY (the PEM text) nor GITHUB_APP_PRIVATE_KEY_FILE (the .pem "
                        + "downloaded from the GitHub App's settings) is set.");
            }
        } catch (IllegalArgumentException e) {
            problems.add(e.getMessage() + ".");
        } catch (IOException e) {
            problems.add("GITHUB_APP_PRIVATE_KEY_FILE: " + UnreadableFile.explain(cwd.resolve(keyFile), e) + ".");
        }
        List<byte[]> secrets = new ArrayList<>();
        String secretText = env.get("GITHUB_WEBHOOK_SECRET");
        if (secretText != null) {
            Arrays.stream(secretText.split(",")).map(String::strip).filter(s -> !s.isEmpty())
                    .forEach(s -> secrets.add(s.getBytes(StandardCharsets.UTF_8)));
        }
        if (secrets.isEmpty()) {
            problems.add("GITHUB_WEBHOOK_SECRET is not set: the webhook secret of the GitHub App "
                    + "(several, comma-separated, while rotating).");
        }
        String api = trim(env.get("GITHUB_API_URL"));
        api = api == null ? DEFAULT_API_URL : api.replaceAll("/+$", "");
        try {
            URI u = URI.create(api);
            if (u.getScheme() == null || !u.getScheme().matches("https?") || u.getHost() == null) {
                problems.add("GITHUB_API_URL must be an http(s) URL like " + DEFAULT_API_URL + ", got '" + api + "'.");
            }
        } catch (IllegalArgumentException e) {
            problems.add("GITHUB_API_URL is not a URL: '" + api + "'.");
        }
        Path dataDir = EnvFile.dataDir(env, cwd);
        unwritable(dataDir).ifPresent(why -> problems.add("AGENTX_DATA_DIR " + dataDir + " is not a writable directory ("
                + why + "): create it and give the user running agentx serve write access, or point AGENTX_DATA_DIR "
                + "elsewhere."));
        int port = DEFAULT_PORT;
        String portText = trim(env.get("PORT"));
        if (portText != null) {
            try {
                port = Integer.parseInt(portText);
                if (port < 0 || port > 65535) {
                    problems.add("PORT must be between 0 and 65535, got " + port + ".");
                }
            } catch (NumberFormatException e) {
                problems.add("PORT must be a number, got '" + portText + "'.");
            }
        }
        int managementPort = DEFAULT_MANAGEMENT_PORT;
        String managementText = trim(env.get("AGENTX_MANAGEMENT_PORT"));
        if (managementText != null) {
            try {
                managementPort = Integer.parseInt(managementText);
                if (managementPort < 0 || managementPort > 65535) {
                    problems.add("AGENTX_MANAGEMENT_PORT must be between 0 and 65535, got " + managementPort + ".");
                } else if (managementPort != 0 && managementPort == port) {
                    problems.add("AGENTX_MANAGEMENT_PORT must differ from PORT (" + port + "): /metrics and /readyz "
                            + "have a port of their own.");
                }
            } catch (NumberFormatException e) {
                problems.add("AGENTX_MANAGEMENT_PORT must be a number, got '" + managementText + "'.");
            }
        }
        String path = trim(env.get("AGENTX_WEBHOOK_PATH"));
        path = path == null ? DEFAULT_PATH : path;
        if (!path.matches("/[A-Za-z0-9._~/-]*") || RESERVED_PATHS.contains(path)) {
            problems.add("AGENTX_WEBHOOK_PATH must be a path like " + DEFAULT_PATH + " (not one of " + RESERVED_PATHS
                    + "), got '" + path + "'.");
        }
        Duration redelivery = DEFAULT_REDELIVERY_INTERVAL;
        String redeliveryText = trim(env.get("AGENTX_REDELIVERY_INTERVAL"));
        if (redeliveryText != null) {
            java.util.regex.Matcher m = java.util.regex.Pattern.compile("(\\d{1,6})([smh]?)").matcher(redeliveryText);
            if (!m.matches() || m.group(2).isEmpty() && !m.group(1).equals("0")) {
                problems.add("AGENTX_REDELIVERY_INTERVAL must be 0 (off) or a number with s, m or h, like 30s or "
                        + "10m, got '" + redeliveryText + "'.");
            } else {
                long n = Long.parseLong(m.group(1));
                redelivery = switch (m.group(2)) {
                    case "s" -> Duration.ofSeconds(n);
                    case "h" -> Duration.ofHours(n);
                    default -> Duration.ofMinutes(n);
                };
            }
        }
        String clientId = trim(env.get("GITHUB_CLIENT_ID"));
        String clientSecret = trim(env.get("GITHUB_CLIENT_SECRET"));
        if ((clientId == null) != (clientSecret == null)) {
            problems.add("Set both GITHUB_CLIENT_ID and GITHUB_CLIENT_SECRET (the App's OAuth credentials, for signing in "
                    + "to /dashboard) or neither; only " + (clientId == null ? "GITHUB_CLIENT_SECRET" : "GITHUB_CLIENT_ID")
                    + " is set.");
        }
        DatabaseUrl database = null;
        try {
            database = DatabaseUrl.fromEnv(env);
        } catch (IllegalArgumentException e) {
            // a problem of the password file names its own variable
            problems.add(e.getMessage().startsWith(DatabaseUrl.PASSWORD_FILE_ENV) ? e.getMessage()
                    : DatabaseUrl.ENV + ": " + e.getMessage());
        }
        if (!problems.isEmpty()) {
            throw new IllegalArgumentException("agentx serve cannot start:\n  " + String.join("\n  ", problems)
                    + "\nSee docs/configuration.md for how to set them.");
        }
        return new GitHubSettings(appId, key, secrets, api, dataDir, port, path, MAX_BODY_BYTES, managementPort,
                redelivery, clientId, clientSecret, database);
    }

    /**
     * Why the data dir cannot be written, if it cannot: an existing one is written to (a temporary
     * file); a missing one is not made here (a start refused for another setting leaves nothing
     * behind), only its nearest existing folder is looked at, the server makes it at start.
     */
    private static Optional<String> unwritable(Path dataDir) {
        try {
            if (Files.isDirectory(dataDir)) {
                Files.delete(Files.createTempFile(dataDir, ".write-check-", ".tmp"));
                return Optional.empty();
            }
            if (Files.exists(dataDir)) {
                return Optional.of("it is a file");
            }
            Path parent = dataDir.toAbsolutePath().getParent();
            while (parent != null && !Files.exists(parent)) {
                parent = parent.getParent();
            }
            if (parent == null) {
                return Optional.of("none of its folders exists");
            }
            if (!Files.isDirectory(parent)) {
                return Optional.of(parent + " is a file");
            }
            if (!Files.isWritable(parent)) {
                return Optional.of("it is missing and " + parent + " is not writable");
            }
            return Optional.empty();
        } catch (IOException | SecurityException e) {
            return Optional.of(e.toString());
        }
    }

    private static String trim(String s) {
        return s == null || s.isBlank() ? null : s.strip();
    }

    public long appIdNumber() {
        return Long.parseLong(appId);
    }

    @Override
    public String toString() {
        return "GitHubSettings[appId=" + appId + ", apiUrl=" + apiUrl + ", dataDir=" + dataDir + ", port=" + port
                + ", webhookPath=" + webhookPath + ", secrets=" + webhookSecrets.size() + "]";
    }
}
