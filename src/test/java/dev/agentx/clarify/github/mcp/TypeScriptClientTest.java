package dev.agentx.clarify.github.mcp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.agentx.clarify.github.GitHubMode;
import dev.agentx.clarify.github.support.GitHubRig;
import dev.agentx.clarify.support.MutableClock;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code /mcp} driven by the official TypeScript MCP client ({@code @modelcontextprotocol/sdk} from
 * npm, installed under target/ once): it connects with a user's bearer token, lists the tools and
 * asks; the question is posted on the issue. Skipped where Node.js and npm are not installed,
 * unless CI=true.
 */
class TypeScriptClientTest {
    /** The client's version, pinned. */
    static final String SDK = "@modelcontextprotocol/sdk@1.32.2";
    private static final Path MODULES = Path.of("target", "mcp-ts");

    @TempDir
    Path dir;

    @Test
    void theTypeScriptClientListsTheToolsAndAsks() throws Exception {
        boolean present = onPath("node") && onPath("npm");
        if (!present && "true".equals(System.getenv("CI"))) {
            throw new AssertionError("node and npm are required when CI=true");
        }
        Assumptions.assumeTrue(present, "node and npm are not installed: apt-get install nodejs npm");
        installClient();
        Path script = MODULES.resolve("ts-client.mjs");
        Files.copy(Path.of("src", "test", "resources", "mcp", "ts-client.mjs"), script,
                java.nio.file.StandardCopyOption.REPLACE_EXISTING);

        try (GitHubRig rig = new GitHubRig(dir.resolve("data"), MutableClock.at(Instant.now().toString()))) {
            rig.environment(new HashMap<>(System.getenv()));
            McpRig.stub(rig);
            McpRig.user(rig, "gho_eng", "eng");
            GitHubMode mode = rig.start();
            assertEquals(202, rig.deliver("issue_comment", rig.comment("eng", 1, "/clarify @architect First?"))
                    .status());
            String out = run(List.of("node", script.toAbsolutePath().toString(), "http://127.0.0.1:" + mode.port()
                    + "/mcp", "gho_eng", GitHubRig.REPO.fullName(), "45"));
            JsonNode result = new ObjectMapper().readTree(out.lines().reduce((a, b) -> b).orElseThrow());
            assertEquals(9, result.path("tools").size(), out);
            assertTrue(result.path("tools").toString().contains("\"clarify_ask\""), out);
            JsonNode asked = result.path("asked");
            assertFalse(asked.path("isError").asBoolean(), out);
            assertTrue(asked.path("content").get(0).path("text").asText().startsWith("CLR-45-001 asked: engineer -> "
                    + "architect"), out);
            rig.mode().drain();
            String posted = rig.comments(45).get(0);
            assertTrue(posted.contains("**engineer** asks **architect**") && posted.contains("from TypeScript"),
                    posted);
        }
    }

    /** npm install of the pinned client under target/mcp-ts, once. */
    private static void installClient() throws Exception {
        if (Files.isDirectory(MODULES.resolve("node_modules/@modelcontextprotocol/sdk"))) {
            return;
        }
        Files.createDirectories(MODULES);
        Files.writeString(MODULES.resolve("package.json"), "{\"name\":\"agentx-mcp-ts\",\"private\":true,"
                + "\"type\":\"module\"}\n");
        run(List.of("npm", "install", "--no-audit", "--no-fund", "--prefix", MODULES.toAbsolutePath().toString(),
                SDK));
    }

    private static String run(List<String> command) throws IOException, InterruptedException {
        ProcessBuilder pb = new ProcessBuilder(command).directory(MODULES.toFile()).redirectErrorStream(true);
        Process p = pb.start();
        byte[] out = p.getInputStream().readAllBytes();
        assertTrue(p.waitFor(5, TimeUnit.MINUTES), String.join(" ", command) + " did not end");
        String text = new String(out, StandardCharsets.UTF_8);
        assertEquals(0, p.exitValue(), String.join(" ", command) + ":\n" + text);
        return text;
    }

    private static boolean onPath(String program) {
        for (String d : System.getenv().getOrDefault("PATH", "").split(java.io.File.pathSeparator)) {
            if (Files.isExecutable(Path.of(d, program))) {
                return true;
            }
        }
        return false;
    }
}
