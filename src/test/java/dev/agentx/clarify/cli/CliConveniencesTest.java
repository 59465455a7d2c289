package dev.agentx.clarify.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.agentx.clarify.support.MutableClock;
import dev.agentx.clarify.support.TestRoot;
import dev.agentx.clarify.support.TestRoot.Run;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** What makes the CLI easy to pick up: completion, suggestions, clear errors for bad values. */
class CliConveniencesTest {
    @TempDir
    Path dir;
    TestRoot root;

    @BeforeEach
    void setUp() throws Exception {
        root = new TestRoot(dir.resolve("project"), MutableClock.at("2026-02-26T10:00:00Z"));
        Files.createDirectories(root.root.resolve(".agentx"));
    }

    @Test
    void completionScriptsAreValidBashAndOfferTheRealCommands() throws Exception {
        for (String shell : new String[] {"bash", "zsh"}) {
            Run r = root.cli("completion", shell);
            assertEquals(0, r.code(), r.err());
            assertTrue(r.out().contains("clarify") && r.out().contains("completion") && r.out().contains("--issue"),
                    "the script knows the command tree");
            Path script = dir.resolve("agentx-" + shell + ".sh");
            Files.writeString(script, r.out(), StandardCharsets.UTF_8);
            Process p = new ProcessBuilder("bash", "-n", script.toString()).redirectErrorStream(true).start();
            String said = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            assertTrue(p.waitFor(30, TimeUnit.SECONDS), "bash -n finished");
            assertEquals(0, p.exitValue(), "bash -n accepts the " + shell + " script: " + said);
        }
        Run fish = root.cli("completion", "fish");
        assertEquals(2, fish.code());
        assertTrue(fish.err().contains("bash or zsh"), fish.err());
    }
}
