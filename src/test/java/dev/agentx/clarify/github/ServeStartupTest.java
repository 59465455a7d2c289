package dev.agentx.clarify.github;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.agentx.clarify.cli.Main;
import dev.agentx.clarify.github.support.Keys;
import dev.agentx.clarify.support.Jvm;
import dev.agentx.clarify.support.MutableClock;
import dev.agentx.clarify.support.ProcessLog;
import dev.agentx.clarify.support.TestRoot;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** What agentx serve says at start about settings that cannot work as the operator meant. */
class ServeStartupTest {
    @TempDir
    Path dir;

    @Test
    void bothPrivateKeyVariablesSetIsAStartUpErrorNotASilentChoice() throws Exception {
        Files.writeString(dir.resolve("app.pem"), Keys.pkcs1Pem());
        TestRoot.Run r = new TestRoot(dir, MutableClock.at("2026-02-26T10:00:00Z")).cli(Map.of("GITHUB_APP_ID", "1",
                "GITHUB_APP_PRIVATE_KEY", Keys.pkcs8Pem(), "GITHUB_APP_PRIVATE_KEY_FILE", "app.pem",
                "GITHUB_WEBHOOK_SECRET", "s"), "serve");
        assertEquals(2, r.code(), r.err());
        assertTrue(r.err().contains("Both GITHUB_APP_PRIVATE_KEY and GITHUB_APP_PRIVATE_KEY_FILE are set"), r.err());
    }

    /** Wrong logging variables and an App id of 0 are among the problems serve refuses to start with. */
    @Test
    void wrongLoggingVariablesAndAppIdZeroAreStartUpErrors() {
        TestRoot.Run r = new TestRoot(dir, MutableClock.at("2026-02-26T10:00:00Z")).cli(Map.of("GITHUB_APP_ID", "0",
                "GITHUB_APP_PRIVATE_KEY", Keys.pkcs8Pem(), "GITHUB_WEBHOOK_SECRET", "s", "AGENTX_LOG_LEVEL", "LOUD",
                "AGENTX_LOG_FORMAT", "yaml"), "serve");
        assertEquals(2, r.code(), r.err());
        assertTrue(r.err().contains("GITHUB_APP_ID must be the numeric App ID, got '0'."), r.err());
        assertTrue(r.err().contains("AGENTX_LOG_LEVEL must be one of TRACE, DEBUG, INFO, WARN, ERROR, OFF, got 'LOUD'."),
                r.err());
        assertTrue(r.err().contains("AGENTX_LOG_FORMAT must be text or json, got 'yaml'."), r.err());
    }

    /** A default_workflow that names no workflow stops the start, as any other mistake in agentx.toml. */
    @Test
    void aDefaultWorkflowThatNamesNoWorkflowStopsTheStart() throws Exception {
        Path data = Files.createDirectories(dir.resolve("agentx-data"));
        Files.writeString(data.resolve("agentx.toml"), "default_workflow = \"nosuch\"\n[roles]\nengineer = [\"a\"]\n");
        TestRoot.Run r = org.junit.jupiter.api.Assertions.assertTimeoutPreemptively(Duration.ofSeconds(60), () ->
                new TestRoot(dir, MutableClock.at("2026-02-26T10:00:00Z")).cli(Map.of("GITHUB_APP_ID", "1",
                        "GITHUB_APP_PRIVATE_KEY", Keys.pkcs8Pem(), "GITHUB_WEBHOOK_SECRET", "s", "PORT", "0",
                        "AGENTX_MANAGEMENT_PORT", "0"), "serve"));
        assertEquals(3, r.code(), r.err());
        assertTrue(r.err().contains("default_workflow 'nosuch' names no workflow; known: bug, epic, feature, story"),
                r.err());

        GitHubMode.requireDefaultWorkflow(data, "bug");
        Files.createDirectories(data.resolve("repos/acme/widgets/.agentx/workflows"));
        Files.writeString(data.resolve("repos/acme/widgets/.agentx/workflows/nosuch.toml"), "");
        GitHubMode.requireDefaultWorkflow(data, "nosuch");
    }

    /** agentx.env and the key file hold the App's secrets: a mode that opens them to others is warned about. */
    @Test
    void anEnvFileOrKeyFileOpenToOtherUsersIsWarnedAbout() throws Exception {
        Path data = Files.createDirectories(dir.resolve("agentx-data"));
        Files.writeString(data.resolve("agentx.toml"), "default_workflow = \"nosuch\"\n[roles]\nengineer = [\"a\"]\n");
        Path key = data.resolve("app.pem");
        Files.writeString(key, Keys.pkcs8Pem());
        Path envFile = data.resolve("agentx.env");
        Files.writeString(envFile, "GITHUB_APP_PRIVATE_KEY_FILE=app.pem\nGITHUB_WEBHOOK_SECRET=s\n");
        Files.setPosixFilePermissions(envFile, java.nio.file.attribute.PosixFilePermissions.fromString("rw-r--r--"));
        Files.setPosixFilePermissions(key, java.nio.file.attribute.PosixFilePermissions.fromString("rw-rw----"));
        TestRoot.Run r = org.junit.jupiter.api.Assertions.assertTimeoutPreemptively(Duration.ofSeconds(60), () ->
                new TestRoot(dir, MutableClock.at("2026-02-26T10:00:00Z")).cli(Map.of("GITHUB_APP_ID", "1",
                        "PORT", "0", "AGENTX_MANAGEMENT_PORT", "0"), "serve"));
        assertTrue(r.err().contains("WARNING: agentx.env " + envFile + " is open to other users (rw-r--r--)"), r.err());
        assertTrue(r.err().contains("WARNING: the private key " + key + " is open to other users (rw-rw----)"), r.err());

        Files.setPosixFilePermissions(envFile, java.nio.file.attribute.PosixFilePermissions.fromString("rw-------"));
        Files.setPosixFilePermissions(key, java.nio.file.attribute.PosixFilePermissions.fromString("r--r-----"));
        TestRoot.Run quiet = org.junit.jupiter.api.Assertions.assertTimeoutPreemptively(Duration.ofSeconds(60), () ->
                new TestRoot(dir, MutableClock.at("2026-02-26T10:00:00Z")).cli(Map.of("GITHUB_APP_ID", "1",
                        "PORT", "0", "AGENTX_MANAGEMENT_PORT", "0"), "serve"));
        assertTrue(!quiet.err().contains("is open to other users"), quiet.err());
    }

    @Test
    void theEnvironmentsKeyWinsOverEitherFormInAgentxEnv() throws Exception {
        Path data = Files.createDirectories(dir.resolve("agentx-data"));
        Files.writeString(data.resolve("agentx.env"), "GITHUB_APP_PRIVATE_KEY_FILE=missing.pem\n");
        EnvFile.Merged m = EnvFile.merge(Map.of("GITHUB_APP_PRIVATE_KEY", "pem text"), dir);
        assertFalse(m.env().containsKey("GITHUB_APP_PRIVATE_KEY_FILE"), "not two keys: the environment's is the one");
    }

    @Test
    void aSecondServerOnTheSameDataDirDoesNotStartAndSaysWhichProcessHoldsIt() throws Exception {
        Path data = Files.createDirectories(dir.resolve("shared"));
        Path log = dir.resolve("first.log");
        Process first = serve(data).redirectErrorStream(true).redirectOutput(log.toFile()).start();
        try {
            ProcessLog.await(first, log, Pattern.compile("listening on"), Duration.ofSeconds(60));
            Path log2 = dir.resolve("second.log");
            Process second = serve(data).redirectErrorStream(true).redirectOutput(log2.toFile()).start();
            assertTrue(second.waitFor(60, TimeUnit.SECONDS), "the second server ends by itself");
            String out = ProcessLog.read(log2);
            assertEquals(2, second.exitValue(), out);
            assertTrue(out.contains("is in use by agentx serve (pid " + first.pid() + ")"), out);
            assertTrue(first.isAlive(), "the first one serves on");
        } finally {
            first.destroy();
            first.waitFor(30, TimeUnit.SECONDS);
            first.destroyForcibly();
        }
        // the first one gone (however it ended), the data dir is free again
        Path log3 = dir.resolve("third.log");
        Process third = serve(data).redirectErrorStream(true).redirectOutput(log3.toFile()).start();
        try {
            ProcessLog.await(third, log3, Pattern.compile("listening on"), Duration.ofSeconds(60));
        } finally {
            third.destroy();
            third.waitFor(30, TimeUnit.SECONDS);
            third.destroyForcibly();
        }
    }

    /** {@code agentx serve} as a process on {@code data}, with a GitHub that is not there and no recovery passes. */
    private static ProcessBuilder serve(Path data) {
        ProcessBuilder pb = Jvm.builder(Main.class, "serve");
        Map<String, String> env = pb.environment();
        env.remove("JAVA_TOOL_OPTIONS");
        env.put("GITHUB_APP_ID", "1");
        env.put("GITHUB_APP_PRIVATE_KEY", Keys.pkcs8Pem());
        env.put("GITHUB_WEBHOOK_SECRET", "s");
        env.put("GITHUB_API_URL", "http://127.0.0.1:9");
        env.put("AGENTX_DATA_DIR", data.toString());
        env.put("PORT", "0");
        env.put("AGENTX_MANAGEMENT_PORT", "0");
        env.put("AGENTX_REDELIVERY_INTERVAL", "0");
        return pb;
    }

    @Test
    void withoutRolesTheServerWarnsThatEveryCommandWillBeRefusedAndHowToFixIt() throws Exception {
        for (String config : new String[] {null, "[maintainers]\nmin_permission = \"write\"\n"}) {
            Path data = Files.createDirectories(dir.resolve(config == null ? "none" : "noroles"));
            if (config != null) {
                Files.writeString(data.resolve("agentx.toml"), config);
            }
            Path log = dir.resolve((config == null ? "none" : "noroles") + ".log");
            Process serve = serve(data).redirectErrorStream(true).redirectOutput(log.toFile()).start();
            try {
                ProcessLog.await(serve, log, Pattern.compile("listening on"), Duration.ofSeconds(60));
                String out = ProcessLog.read(log);
                assertTrue(out.contains("WARNING") && out.contains("every /clarify command will be refused"), out);
                assertTrue(out.contains("[roles]") && out.contains(data.resolve("agentx.toml").toString()), out);
            } finally {
                serve.destroy();
                serve.waitFor(30, TimeUnit.SECONDS);
                serve.destroyForcibly();
            }
        }
    }
}
