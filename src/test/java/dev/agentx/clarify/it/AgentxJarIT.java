package dev.agentx.clarify.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.agentx.clarify.support.OnlyDocumentedState;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/** The packaged jar and the launchers, run as a user runs them (after 'mvn package'). */
@ExtendWith(OnlyDocumentedState.class)
class AgentxJarIT {
    @TempDir
    Path dir;

    record Result(int code, String out, String err) {
    }

    static Result run(Path cwd, List<String> cmd) throws Exception {
        return run(cwd, cmd, java.util.Map.of());
    }

    static Result run(Path cwd, List<String> cmd, java.util.Map<String, String> env) throws Exception {
        ProcessBuilder pb = new ProcessBuilder(cmd).directory(cwd.toFile());
        pb.environment().put("NO_COLOR", "1");
        pb.environment().remove("AGENTX_JAVA_OPTS");
        pb.environment().putAll(env);
        Path out = Files.createTempFile("out", ".txt");
        Path err = Files.createTempFile("err", ".txt");
        Process p = pb.redirectOutput(out.toFile()).redirectError(err.toFile()).start();
        assertTrue(p.waitFor(120, TimeUnit.SECONDS));
        return new Result(p.exitValue(), Files.readString(out, StandardCharsets.UTF_8), Files.readString(err, StandardCharsets.UTF_8));
    }

    static List<String> jar(String... args) {
        List<String> cmd = new ArrayList<>(List.of("java", "-jar", System.getProperty("agentx.jar", "target/agentx.jar")));
        cmd.addAll(List.of(args));
        return cmd;
    }

    @Test
    void javaDashJarRunsTheCli() throws Exception {
        Files.createDirectories(dir.resolve(".agentx"));
        Result ask = run(dir, jar("clarify", "ask", "--issue", "7", "--from", "engineer", "--to", "architect", "Q?"));
        assertEquals(0, ask.code(), ask.err());
        assertEquals("CLR-7-001", ask.out().trim());
        Result list = run(dir, jar("--json", "clarify"));
        assertTrue(list.out().contains("\"id\" : \"CLR-7-001\""), list.out());
        Result bad = run(dir, jar("clarify", "answer", "CLR-7-009", "x"));
        assertEquals(3, bad.code());
        assertTrue(bad.err().startsWith("NOT_FOUND: "), bad.err());
        assertEquals("", bad.out());
        Result usage = run(dir, jar("clarify", "ask"));
        assertEquals(2, usage.code());
        assertFalse(Files.exists(dir.resolve(".agentx/state/.runtime")), "removed by the last process that used it");
    }

    @Test
    void theReadmeDemoRunsEndToEnd() throws Exception {
        Path repo = Path.of("").toAbsolutePath();
        Result demo = run(repo, List.of(repo.resolve("bin/demo").toString(), dir.resolve("demo").toString()));
        assertEquals(0, demo.code(), demo.out() + demo.err());
        assertTrue(demo.out().contains("[RESOLVED] engineer"), demo.out());
        assertTrue(demo.out().contains("[Round 2] engineer -> architect"), demo.out());
        assertTrue(demo.out().contains("exit code: 3"), demo.out());
        assertTrue(demo.err().contains("SCOPE_VIOLATION: Agent 'engineer' cannot clarify with 'reviewer'"), demo.err());
        assertTrue(Files.exists(dir.resolve("demo/.agentx/state/clarifications/issue-42.json")));
        assertFalse(Files.exists(dir.resolve("demo/.agentx/state/.runtime")), "removed by the last process that used it");
    }

    @Test
    void theLauncherRunsTheServerWithServerFlagsAndTheCliWithStartUpFlags() throws Exception {
        Path repo = Path.of("").toAbsolutePath();
        String launcher = repo.resolve("bin/agentx").toString();
        java.util.Map<String, String> printFlags = java.util.Map.of("JAVA_TOOL_OPTIONS", "-XX:+PrintCommandLineFlags");
        Result serve = run(dir, List.of(launcher, "--root", dir.toString(), "serve", "--help"), printFlags);
        assertEquals(0, serve.code(), serve.err());
        assertTrue(serve.out().contains("-XX:MaxRAMPercentage=75"), serve.out());
        assertTrue(serve.out().contains("-XX:ThreadPriorityPolicy=1"), serve.out());
        assertTrue(!serve.out().contains("TieredStopAtLevel"), serve.out());
        // "serve" as a later word is not the command
        Files.createDirectories(dir.resolve(".agentx"));
        Result cli = run(dir, List.of(launcher, "--root", dir.toString(), "clarify", "show", "serve"), printFlags);
        assertEquals(3, cli.code(), cli.err());
        assertTrue(cli.out().contains("-XX:TieredStopAtLevel=1"), cli.out());
        assertTrue(!cli.out().contains("MaxRAMPercentage"), cli.out());
    }

    /**
     * Run as root, the server's JVM may not raise priorities: the priority policy would otherwise put
     * the JIT's compilers and the GC above the webhook's threads. A {@code java} first on the PATH
     * shows the capabilities the launcher hands it.
     */
    @Test
    void theLauncherRunsTheServerWithoutThePowerToRaisePriorities() throws Exception {
        Path repo = Path.of("").toAbsolutePath();
        Path bin = Files.createDirectories(dir.resolve("bin"));
        Path fakeJava = bin.resolve("java");
        Files.writeString(fakeJava, "#!/bin/sh\ngrep '^CapEff:' /proc/self/status\n");
        assertTrue(fakeJava.toFile().setExecutable(true));
        java.util.Map<String, String> path = java.util.Map.of("PATH", bin + ":" + System.getenv("PATH"));
        Result serve = run(dir, List.of(repo.resolve("bin/agentx").toString(), "serve"), path);
        assertEquals(0, serve.code(), serve.err());
        // the launcher drops that one and nothing else; a command other than serve keeps all the caller had
        assertEquals(ownCapabilities() & ~CAP_SYS_NICE,
                Long.parseUnsignedLong(serve.out().replace("CapEff:", "").strip(), 16), serve.out());
        Result other = run(dir, List.of(repo.resolve("bin/agentx").toString(), "init"), path);
        assertEquals(ownCapabilities(), Long.parseUnsignedLong(other.out().replace("CapEff:", "").strip(), 16),
                other.out());
    }

    private static final long CAP_SYS_NICE = 1L << 23;

    private static long ownCapabilities() throws Exception {
        for (String line : Files.readAllLines(Path.of("/proc/self/status"))) {
            if (line.startsWith("CapEff:")) {
                return Long.parseUnsignedLong(line.substring(7).strip(), 16);
            }
        }
        throw new IllegalStateException("no CapEff in /proc/self/status");
    }
}
