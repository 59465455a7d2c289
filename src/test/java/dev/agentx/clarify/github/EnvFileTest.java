package dev.agentx.clarify.github;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The data dir's agentx.env: what it may hold, and that the real environment wins over it. */
class EnvFileTest {
    @TempDir
    Path dir;

    @Test
    void valuesFillInWhatTheEnvironmentLacksAndTheEnvironmentWins() throws Exception {
        Path data = Files.createDirectories(dir.resolve("agentx-data"));
        Files.writeString(data.resolve("agentx.env"), """
                # written by agentx setup

                GITHUB_APP_ID=424242
                GITHUB_APP_PRIVATE_KEY_FILE=github-app.pem
                export GITHUB_WEBHOOK_SECRET="with spaces and # inside"
                AGENTX_LOG_LEVEL='DEBUG'
                PORT = 3001
                """);
        EnvFile.Merged m = EnvFile.merge(Map.of("PORT", "4000", "AGENTX_LOG_LEVEL", "WARN"), dir);
        assertEquals("424242", m.env().get("GITHUB_APP_ID"));
        assertEquals(data.resolve("github-app.pem").toString(), m.env().get("GITHUB_APP_PRIVATE_KEY_FILE"),
                "a relative key path is the data dir's");
        assertEquals("with spaces and # inside", m.env().get("GITHUB_WEBHOOK_SECRET"));
        assertEquals("4000", m.env().get("PORT"), "the environment wins");
        assertEquals("WARN", m.env().get("AGENTX_LOG_LEVEL"));
        assertEquals(List.of("GITHUB_APP_ID", "GITHUB_APP_PRIVATE_KEY_FILE", "GITHUB_WEBHOOK_SECRET"), m.fromFile());
        assertEquals(data.resolve("agentx.env"), m.file());
    }

    @Test
    void theFileIsFoundThroughTheDataDirAndIsOptional() throws Exception {
        Path data = Files.createDirectories(dir.resolve("elsewhere"));
        Files.writeString(data.resolve("agentx.env"), "GITHUB_APP_ID=7\n");
        assertEquals("7", EnvFile.merge(Map.of("AGENTX_DATA_DIR", "elsewhere"), dir).env().get("GITHUB_APP_ID"));
        EnvFile.Merged none = EnvFile.merge(Map.of("X", "1"), dir);
        assertNull(none.file());
        assertEquals(Map.of("X", "1"), none.env());
    }

    @Test
    void aMalformedLineIsAnErrorNamingTheFileAndLine() throws Exception {
        Path data = Files.createDirectories(dir.resolve("agentx-data"));
        for (String bad : new String[] {"GITHUB_APP_ID 7", "1ABC=2", "=x", "AGENTX_DATA_DIR=/data"}) {
            Files.writeString(data.resolve("agentx.env"), "# ok\nGITHUB_APP_ID=7\n" + bad + "\n");
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                    () -> EnvFile.merge(Map.of(), dir));
            assertTrue(e.getMessage().contains("agentx.env, line 3"), e.getMessage());
        }
    }

    /** The message names the line and what it starts with, never the value that may be a secret. */
    @Test
    void aMalformedLineIsNotShownBeyondItsName() throws Exception {
        Path data = Files.createDirectories(dir.resolve("agentx-data"));
        Map<String, String> cases = Map.of(
                "GITHUB_WEBHOOK_SECRET: hunter2-webhook-secret", "got 'GITHUB_WEBHOOK_SECRET' followed by ':'",
                "MIIEogIBAAKCAQEAhGQ8xk3Lx9yZ0pWv+hunter2/abc", "expected NAME=value (the rest",
                "hunter2secret", "expected NAME=value (the rest",
                "TOKEN hunter2", "got 'TOKEN' followed by ' '");
        for (Map.Entry<String, String> c : cases.entrySet()) {
            Files.writeString(data.resolve("agentx.env"), "GITHUB_APP_ID=7\n" + c.getKey() + "\n");
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                    () -> EnvFile.merge(Map.of(), dir));
            assertTrue(e.getMessage().contains("agentx.env, line 2: " + (c.getValue().startsWith("got") ? "expected "
                    + "NAME=value, " : "") + c.getValue()), e.getMessage());
            assertFalse(e.getMessage().contains("hunter2"), e.getMessage());
        }
    }
}
