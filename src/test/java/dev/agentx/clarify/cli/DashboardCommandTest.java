package dev.agentx.clarify.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.agentx.clarify.support.Jvm;
import dev.agentx.clarify.support.OnlyDocumentedState;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/** {@code agentx dashboard} as a real process: what its user reads when the page cannot be had as asked. */
@ExtendWith(OnlyDocumentedState.class)
class DashboardCommandTest {
    @TempDir
    Path dir;

    @Test
    void anOpenerThatFailsIsReportedWithThePagesAddress() throws Exception {
        // xdg-open on a machine with no browser set up exits 3, as this one does
        Path bin = Files.createDirectories(dir.resolve("bin"));
        Path opener = Files.writeString(bin.resolve("xdg-open"), "#!/bin/sh\nexit 3\n");
        Files.setPosixFilePermissions(opener, PosixFilePermissions.fromString("rwxr-xr-x"));
        Path project = Files.createDirectories(dir.resolve("project/.agentx"));
        ProcessBuilder pb = Jvm.builder(List.of("-Djava.awt.headless=true"), Main.class, "--root",
                project.getParent().toString(), "dashboard", "--port", "0", "--open");
        pb.environment().put("PATH", bin + ":" + System.getenv().getOrDefault("PATH", "/usr/bin:/bin"));
        pb.redirectErrorStream(true);
        Process p = pb.start();
        LinkedBlockingQueue<String> lines = new LinkedBlockingQueue<>();
        Thread reader = new Thread(() -> {
            try (BufferedReader r = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
                r.lines().forEach(lines::add);
            } catch (java.io.IOException e) {
                // the process ended
            }
        });
        reader.setDaemon(true);
        reader.start();
        try {
            String url = null;
            StringBuilder seen = new StringBuilder();
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            while (System.nanoTime() < deadline) {
                String line = lines.poll(1, TimeUnit.SECONDS);
                if (line == null) {
                    continue;
                }
                seen.append(line).append('\n');
                if (line.startsWith("Dashboard of ")) {
                    url = line.replaceAll(".* at (http://\\S+) .*", "$1");
                } else if (line.startsWith("note: could not open a browser")) {
                    assertTrue(url != null, "the address first: " + seen);
                    assertTrue(line.equals("note: could not open a browser (xdg-open exited with 3); open " + url
                            + " yourself."), line);
                    return;
                }
            }
            throw new AssertionError("no note within 60 s; output:\n" + seen);
        } finally {
            p.destroy();
            p.waitFor(10, TimeUnit.SECONDS);
            p.destroyForcibly();
        }
    }

    /** A port in use: one usage line, exit 2, and not also the web server's own log of its failed start. */
    @Test
    void aPortInUseIsOneUsageLine() throws Exception {
        Path project = Files.createDirectories(dir.resolve("project/.agentx"));
        try (java.net.ServerSocket taken = new java.net.ServerSocket(0, 50,
                java.net.InetAddress.getByName("127.0.0.1"))) {
            ProcessBuilder pb = Jvm.builder(Main.class, "--root", project.getParent().toString(), "dashboard",
                    "--port", String.valueOf(taken.getLocalPort()));
            pb.redirectErrorStream(true);
            Process p = pb.start();
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            assertTrue(p.waitFor(60, TimeUnit.SECONDS), "ended");
            assertEquals(2, p.exitValue(), out);
            assertEquals("USAGE: Cannot serve the dashboard on 127.0.0.1:" + taken.getLocalPort()
                    + ": Address already in use. Choose another port with --port.\n", out);
        }
    }
}
