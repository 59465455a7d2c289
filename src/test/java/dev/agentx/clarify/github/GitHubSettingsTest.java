package dev.agentx.clarify.github;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.agentx.clarify.config.UnreadableFile;
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
        assertEquals(9464, s.managementPort());
        assertEquals("/api/github/webhooks", s.webhookPath());
        assertEquals(dir.resolve("agentx-data"), s.dataDir());
        assertEquals(2, s.webhookSecrets().size());
        assertTrue(!s.toString().contains("BEGIN"), "no key material in logs");
    }

    @Test
    void theRedeliveryIntervalTakesSecondsMinutesHoursOrZeroForOff() throws Exception {
        Files.writeString(dir.resolve("app.pem"), Keys.pkcs1Pem());
        Map<String, String> base = Map.of("GITHUB_APP_ID", "123", "GITHUB_APP_PRIVATE_KEY_FILE", "app.pem",
                "GITHUB_WEBHOOK_SECRET", "s");
        assertEquals(java.time.Duration.ofMinutes(10), GitHubSettings.fromEnv(base, dir).redeliveryInterval());
        for (Map.Entry<String, java.time.Duration> e : Map.of("30s", java.time.Duration.ofSeconds(30), "10m",
                java.time.Duration.ofMinutes(10), "2h", java.time.Duration.ofHours(2), "0", java.time.Duration.ZERO)
                .entrySet()) {
            Map<String, String> env = new java.util.HashMap<>(base);
            env.put("AGENTX_REDELIVERY_INTERVAL", e.getKey());
            assertEquals(e.getValue(), GitHubSettings.fromEnv(env, dir).redeliveryInterval(), e.getKey());
        }
        for (String bad : new String[] {"10", "ten minutes", "-5m", "5d"}) {
            Map<String, String> env = new java.util.HashMap<>(base);
            env.put("AGENTX_REDELIVERY_INTERVAL", bad);
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> GitHubSettings.fromEnv(env, dir));
            assertTrue(e.getMessage().contains("AGENTX_REDELIVERY_INTERVAL must be 0 (off)"), e.getMessage());
        }
    }

    @Test
    void aKeyFileThatIsMissingOrNotReadableSaysWhichAndWhatToDo() throws Exception {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> GitHubSettings.fromEnv(
                Map.of("GITHUB_APP_ID", "123", "GITHUB_APP_PRIVATE_KEY_FILE", "missing.pem",
                        "GITHUB_WEBHOOK_SECRET", "s"), dir));
        assertTrue(e.getMessage().contains("GITHUB_APP_PRIVATE_KEY_FILE: there is no file " + dir.resolve("missing.pem")),
                e.getMessage());
        // a key mounted into a container from the host, mode 600, owned by the host's user: the image's user
        // may not read it (tests run as root, who may read anything, so the exception is made here)
        String m = UnreadableFile.explain(Path.of("/etc/agentx/app.pem"),
                new java.nio.file.AccessDeniedException("/etc/agentx/app.pem"));
        assertTrue(m.startsWith("/etc/agentx/app.pem is not readable by the user this process runs as ("
                + System.getProperty("user.name") + ", uid "), m);
        assertTrue(m.contains("give that user read access to it"), m);
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
    void theManagementPortIsCheckedLikePortAndMustDifferFromIt() throws Exception {
        Files.writeString(dir.resolve("app.pem"), Keys.pkcs1Pem());
        Map<String, String> base = Map.of("GITHUB_APP_ID", "123", "GITHUB_APP_PRIVATE_KEY_FILE", "app.pem",
                "GITHUB_WEBHOOK_SECRET", "x");
        for (String[] bad : new String[][] {{"metrics", "AGENTX_MANAGEMENT_PORT must be a number, got 'metrics'"},
                {"70000", "AGENTX_MANAGEMENT_PORT must be between 0 and 65535, got 70000"},
                {"-1", "AGENTX_MANAGEMENT_PORT must be between 0 and 65535, got -1"}}) {
            Map<String, String> env = new java.util.HashMap<>(base);
            env.put("AGENTX_MANAGEMENT_PORT", bad[0]);
            String m = assertThrows(IllegalArgumentException.class, () -> GitHubSettings.fromEnv(env, dir)).getMessage();
            assertTrue(m.contains(bad[1]), bad[1] + " in: " + m);
        }
        Map<String, String> same = new java.util.HashMap<>(base);
        same.put("PORT", "3100");
        same.put("AGENTX_MANAGEMENT_PORT", " 3100 ");
        String m = assertThrows(IllegalArgumentException.class, () -> GitHubSettings.fromEnv(same, dir)).getMessage();
        assertTrue(m.contains("AGENTX_MANAGEMENT_PORT must differ from PORT (3100)"), m);
        same.put("PORT", "0");
        same.put("AGENTX_MANAGEMENT_PORT", "0"); // each picks a free port
        GitHubSettings.fromEnv(same, dir);
    }

    @Test
    void serveWithoutSettingsExitsWithUsageAndSaysWhatIsMissing() {
        TestRoot.Run r = new TestRoot(dir, MutableClock.at("2026-02-26T10:00:00Z")).cli(Map.of(), "serve");
        assertEquals(2, r.code());
        assertTrue(r.err().startsWith("USAGE: agentx serve cannot start"), r.err());
        assertTrue(r.err().contains("GITHUB_APP_ID is not set"), r.err());
    }

    @Test
    void startupSummaryShowsSettingsButNoSecretsAndBadInputsSayWhatToFix() throws Exception {
        Files.writeString(dir.resolve("app.pem"), Keys.pkcs1Pem());
        Map<String, String> env = Map.of("GITHUB_APP_ID", "123", "GITHUB_APP_PRIVATE_KEY_FILE", "app.pem",
                "GITHUB_WEBHOOK_SECRET", "s3cret-one,s3cret-two", "AGENTX_DATA_DIR", "data", "PORT", "3100");
        String summary = GitHubSettings.summary(GitHubSettings.fromEnv(env, dir), env, dir);
        for (String s : new String[] {"app id        123", "PKCS#1 RSA 2048 bits, from GITHUB_APP_PRIVATE_KEY_FILE "
                + dir.resolve("app.pem"), "2 secret(s) (values not shown), path /api/github/webhooks",
                "GitHub API    https://api.github.com", "data dir      " + dir.resolve("data"), "port          3100",
                "management    port 9464 (/metrics /readyz /healthz)"}) {
            assertTrue(summary.contains(s), s + " in:\n" + summary);
        }
        assertTrue(!summary.contains("s3cret") && !summary.contains("BEGIN"), summary);
        assertTrue(summary.contains("state         files under the data dir (AGENTX_DATABASE_URL not set)\n"), summary);
        Map<String, String> onDatabase = new java.util.HashMap<>(env);
        onDatabase.put("AGENTX_DATABASE_URL", "postgresql://agentx:pa55word@db.internal:5433/clarify");
        String withDatabase = GitHubSettings.summary(GitHubSettings.fromEnv(onDatabase, dir), onDatabase, dir);
        assertTrue(withDatabase.contains("state         PostgreSQL jdbc:postgresql://db.internal:5433/clarify as agentx\n"),
                withDatabase);
        assertTrue(!withDatabase.contains("pa55word"), withDatabase);
        onDatabase.put("AGENTX_DATABASE_URL", "postgresql://agentx@db.internal/clarify");
        onDatabase.put("AGENTX_DATABASE_PASSWORD_FILE", dir.resolve("no-such-secret").toString());
        String noFile = assertThrows(IllegalArgumentException.class, () -> GitHubSettings.fromEnv(onDatabase, dir))
                .getMessage();
        assertTrue(noFile.contains("AGENTX_DATABASE_PASSWORD_FILE: ") && !noFile.contains("AGENTX_DATABASE_URL: "),
                noFile);
        Map<String, String> inline = Map.of("GITHUB_APP_ID", "123", "GITHUB_APP_PRIVATE_KEY", Keys.pkcs8Pem(),
                "GITHUB_WEBHOOK_SECRET", "x", "AGENTX_DATA_DIR", "data");
        assertTrue(GitHubSettings.summary(GitHubSettings.fromEnv(inline, dir), inline, dir)
                .contains("PKCS#8 RSA 2048 bits, from GITHUB_APP_PRIVATE_KEY\n"));

        Files.writeString(dir.resolve("blocked"), "a file where the data dir should be");
        String m = assertThrows(IllegalArgumentException.class, () -> GitHubSettings.fromEnv(Map.of("GITHUB_APP_ID",
                "12x", "GITHUB_APP_PRIVATE_KEY", "-----BEGIN RSA PRIVATE KEY-----\nnot base64!\n-----END RSA PRIVATE KEY-----",
                "AGENTX_DATA_DIR", "blocked", "AGENTX_WEBHOOK_PATH", "/metrics"), dir)).getMessage();
        for (String s : new String[] {"GITHUB_APP_ID must be the numeric App ID, got '12x'",
                "GITHUB_APP_PRIVATE_KEY is not a PEM private key", "GITHUB_WEBHOOK_SECRET is not set",
                "AGENTX_DATA_DIR " + dir.resolve("blocked") + " is not a writable directory",
                "AGENTX_WEBHOOK_PATH must be a path like"}) {
            assertTrue(m.contains(s), s + " in:\n" + m);
        }
        // a start refused for its settings leaves no data dir behind; a missing one under a writable
        // folder is no problem (the server makes it at start)
        String missing = assertThrows(IllegalArgumentException.class, () -> GitHubSettings.fromEnv(Map.of(
                "GITHUB_APP_ID", "123", "AGENTX_DATA_DIR", "new/data"), dir)).getMessage();
        assertTrue(!missing.contains("AGENTX_DATA_DIR"), missing);
        assertTrue(!Files.exists(dir.resolve("new")), "no data dir made");
        String under = assertThrows(IllegalArgumentException.class, () -> GitHubSettings.fromEnv(Map.of(
                "GITHUB_APP_ID", "123", "AGENTX_DATA_DIR", "blocked/data"), dir)).getMessage();
        assertTrue(under.contains("AGENTX_DATA_DIR " + dir.resolve("blocked/data") + " is not a writable directory ("
                + dir.resolve("blocked") + " is a file)"), under);
    }

    @Test
    void serveWithABadKeyExitsTwoNamingTheFix() throws Exception {
        Files.writeString(dir.resolve("app.pem"), "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n");
        TestRoot.Run r = new TestRoot(dir, MutableClock.at("2026-02-26T10:00:00Z")).cli(Map.of("GITHUB_APP_ID", "1",
                "GITHUB_APP_PRIVATE_KEY_FILE", "app.pem", "GITHUB_WEBHOOK_SECRET", "x"), "serve");
        assertEquals(2, r.code());
        assertTrue(r.err().contains("GITHUB_APP_PRIVATE_KEY_FILE " + dir.resolve("app.pem")), r.err());
        assertTrue(r.err().contains("not an RSA private key") || r.err().contains("not a PEM private key"), r.err());
    }
}
