package dev.agentx.clarify.github;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.agentx.clarify.github.support.Keys;
import dev.agentx.clarify.support.MutableClock;
import dev.agentx.clarify.support.TestRoot;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class GitHubSettingsTest {
    @TempDir
    Path dir;

    @Test
    void defaultsAndAKeyFileAsDownloaded() throws Exception {
        Files.writeString(dir.resolve("app.pem"), Keys.pkcs1Pem());
        GitHubSettings s = GitHubSettings.fromEnv(Map.of("GITHUB_APP_ID", "123", "GITHUB_APP_PRIVATE_KEY_FILE",
                "app.pem", "GITHUB_WEBHOOK_SECRET", "new, old,"), dir);
        assertEquals("https://api.github.com", s.apiUrl());
        assertEquals(3000, s.port());
        assertEquals("/api/github/webhooks", s.webhookPath());
        assertEquals(dir.resolve("agentx-data"), s.dataDir());
        assertEquals(2, s.webhookSecrets().size());
        assertTrue(!s.toString().contains("BEGIN"), "no key material in logs");
    }

    @Test
    void everyProblemIsNamedAtOnce() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> GitHubSettings.fromEnv(
                Map.of("GITHUB_APP_ID", "abc", "PORT", "http", "GITHUB_API_URL", "ftp://x", "AGENTX_WEBHOOK_PATH",
                        "hooks"), dir));
        String m = e.getMessage();
        for (String s : new String[] {"GITHUB_APP_ID must be the numeric", "Neither GITHUB_APP_PRIVATE_KEY",
                "GITHUB_WEBHOOK_SECRET is not set", "GITHUB_API_URL must be", "PORT must be a number",
                "AGENTX_WEBHOOK_PATH must be"}) {
            assertTrue(m.contains(s), s + " in: " + m);
        }
    }

    @Test
    void serveWithoutSettingsExitsWithUsageAndSaysWhatIsMissing() {
        TestRoot.Run r = new TestRoot(dir, MutableClock.at("2026-02-26T10:00:00Z")).cli(Map.of(), "serve");
        assertEquals(2, r.code());
        assertTrue(r.err().startsWith("USAGE: agentx serve cannot start"), r.err());
        assertTrue(r.err().contains("GITHUB_APP_ID is not set"), r.err());
    }
}
