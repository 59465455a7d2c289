package dev.agentx.clarify.github.setup;

import com.fasterxml.jackson.databind.JsonNode;
import dev.agentx.clarify.github.EnvFile;
import dev.agentx.clarify.github.GitHubSettings;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;

/**
 * What GitHub's manifest conversion returns, kept in the data dir for {@code agentx serve}: the
 * private key as {@value #KEY_FILE} and the rest in {@code agentx.env}. Both are created readable
 * and writable by the owner only (0600) from their first byte, then moved into place whole.
 *
 * @param appId the App's id
 * @param slug the App's slug (its bot is {@code <slug>[bot]})
 * @param htmlUrl the App's page on GitHub; {@code /installations/new} there installs it
 */
public record Credentials(String appId, String slug, String name, String htmlUrl, String pem, String webhookSecret,
                          String clientId, String clientSecret) {
    public static final String KEY_FILE = "github-app.pem";

    /** From the conversion's JSON answer; every field the server needs must be there. */
    public static Credentials of(JsonNode app) {
        List<String> missing = new ArrayList<>();
        for (String f : List.of("id", "slug", "html_url", "pem", "webhook_secret")) {
            if (!app.hasNonNull(f) || app.get(f).asText().isBlank()) {
                missing.add(f);
            }
        }
        if (!missing.isEmpty()) {
            throw new IllegalArgumentException("GitHub's answer lacks " + String.join(", ", missing));
        }
        return new Credentials(app.get("id").asText(), app.get("slug").asText(), app.path("name").asText(""),
                app.get("html_url").asText(), app.get("pem").asText(), app.get("webhook_secret").asText(),
                app.path("client_id").asText(""), app.path("client_secret").asText(""));
    }

    public String installUrl() {
        return htmlUrl.replaceAll("/+$", "") + "/installations/new";
    }

    /** The files this writes into {@code dataDir}. */
    public static List<Path> files(Path dataDir) {
        return List.of(dataDir.resolve(KEY_FILE), dataDir.resolve(EnvFile.NAME));
    }

    /** Writes the key and {@code agentx.env}; {@code apiUrl} and {@code webhookPath} go in when not the defaults. */
    public void write(Path dataDir, String apiUrl, String webhookPath) {
        StringBuilder env = new StringBuilder();
        env.append("# Written by 'agentx setup' for the GitHub App ").append(name.isBlank() ? slug : name)
                .append(" (").append(htmlUrl).append(").\n")
                .append("# 'agentx serve' reads it at start; a variable set in the environment wins over it.\n")
                .append("# It holds secrets: keep it readable by the server's user only.\n")
                .append("GITHUB_APP_ID=").append(appId).append('\n')
                .append("GITHUB_APP_PRIVATE_KEY_FILE=").append(KEY_FILE).append('\n')
                .append("GITHUB_WEBHOOK_SECRET=").append(webhookSecret).append('\n');
        if (!clientId.isBlank()) {
            env.append("GITHUB_CLIENT_ID=").append(clientId).append('\n');
        }
        if (!clientSecret.isBlank()) {
            env.append("GITHUB_CLIENT_SECRET=").append(clientSecret).append('\n');
        }
        if (!apiUrl.equals(GitHubSettings.DEFAULT_API_URL)) {
            env.append("GITHUB_API_URL=").append(apiUrl).append('\n');
        }
        if (!webhookPath.equals(GitHubSettings.DEFAULT_PATH)) {
            env.append("AGENTX_WEBHOOK_PATH=").append(webhookPath).append('\n');
        }
        try {
            Files.createDirectories(dataDir);
            writePrivate(dataDir.resolve(KEY_FILE), pem.endsWith("\n") ? pem : pem + "\n");
            writePrivate(dataDir.resolve(EnvFile.NAME), env.toString());
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write the App's credentials into " + dataDir + ": " + e.getMessage(),
                    e);
        }
    }

    private static void writePrivate(Path target, String text) throws IOException {
        boolean posix = FileSystems.getDefault().supportedFileAttributeViews().contains("posix");
        Path tmp = posix
                ? Files.createTempFile(target.getParent(), "." + target.getFileName(), ".tmp",
                        PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")))
                : Files.createTempFile(target.getParent(), "." + target.getFileName(), ".tmp");
        try {
            try (FileChannel ch = FileChannel.open(tmp, StandardOpenOption.WRITE)) {
                ch.write(java.nio.ByteBuffer.wrap(text.getBytes(StandardCharsets.UTF_8)));
                ch.force(true);
            }
            Files.move(tmp, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        } finally {
            Files.deleteIfExists(tmp);
        }
    }
}
