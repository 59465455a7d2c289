package dev.agentx.clarify.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The Local Mode CLI takes locks too (the lock manager measures their wait), but the metrics are
 * GitHub Mode's: a CLI command, in a JVM of its own, loads no Prometheus class, none of
 * {@code dev.agentx.clarify.metrics} and not the management port's HTTP server.
 */
class CliLoadsNoServerClassesTest {
    @TempDir
    Path dir;

    private List<String> loadedBy(String... args) throws Exception {
        Path log = dir.resolve("classes-" + System.nanoTime() + ".log");
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        List<String> cmd = new ArrayList<>(List.of(java, "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-Xshare:off",
                "-Xlog:class+load=info:file=" + log, "-cp", System.getProperty("java.class.path"), Main.class.getName(),
                "--root", dir.resolve("root").toString()));
        cmd.addAll(List.of(args));
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true)
                .redirectOutput(dir.resolve("out-" + System.nanoTime() + ".txt").toFile());
        pb.environment().remove("JAVA_TOOL_OPTIONS");
        Process p = pb.start();
        assertTrue(p.waitFor(60, TimeUnit.SECONDS), "the CLI ends");
        assertEquals(0, p.exitValue(), String.join(" ", args));
        return Files.readAllLines(log, StandardCharsets.UTF_8);
    }

    @Test
    void aCliCommandThatTakesLocksLoadsNoMetricsClass() throws Exception {
        Files.createDirectories(dir.resolve("root/.agentx"));
        for (String[] args : new String[][] {{"clarify", "ask", "--issue", "1", "--from", "engineer", "--to",
                "architect", "Which DB?"}, {"clarify"}}) {
            List<String> loaded = loadedBy(args);
            assertTrue(loaded.stream().anyMatch(l -> l.contains("dev.agentx.clarify.lock.LockManager ")),
                    "the command took a lock");
            for (String line : loaded) {
                assertTrue(!line.contains("io.prometheus.") && !line.contains("dev.agentx.clarify.metrics.")
                        && !line.contains("com.sun.net.httpserver."), String.join(" ", args) + " loaded " + line);
            }
        }
    }
}
