package dev.agentx.clarify.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.agentx.clarify.github.support.Keys;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * After 'mvn package': the jar deploy/Dockerfile copies out of its build stage is what the build
 * makes, and it serves with deploy/agentx.env.example's settings as the image runs it (its
 * entrypoint's command, the image's ENV for what the example leaves to it).
 */
class DeployJarIT {
    @TempDir
    Path dir;

    @Test
    void theJarTheDockerfileCopiesExists() throws Exception {
        String docker = Files.readString(Path.of("deploy", "Dockerfile"));
        Matcher workdir = Pattern.compile("(?m)^WORKDIR (\\S+)$").matcher(docker);
        Matcher copy = Pattern.compile("(?m)^COPY --from=build (\\S+) ").matcher(docker);
        assertTrue(workdir.find() && copy.find(), docker);
        String jar = copy.group(1);
        assertTrue(jar.startsWith(workdir.group(1) + "/"), jar + " is under the build stage's WORKDIR");
        Path built = Path.of(jar.substring(workdir.group(1).length() + 1));
        assertTrue(Files.isRegularFile(built) && Files.size(built) > 1_000_000, built + " exists after the build");
    }

    private static String read(Path file) {
        try {
            return Files.exists(file) ? Files.readString(file, StandardCharsets.UTF_8) : "";
        } catch (IOException e) {
            return "";
        }
    }

    @Test
    void theJarServesWithTheEnvExampleAndMetricsOnTheManagementPort() throws Exception {
        ProcessBuilder pb = new ProcessBuilder("java", "-jar", System.getProperty("agentx.jar", "target/agentx.jar"),
                "serve").directory(dir.toFile());
        Map<String, String> env = pb.environment();
        env.remove("JAVA_TOOL_OPTIONS");
        Matcher line = Pattern.compile("(?m)^([A-Z][A-Z0-9_]*)=(.*)$").matcher(Files.readString(Path.of("deploy",
                "agentx.env.example")));
        while (line.find()) { // as 'docker run --env-file' reads it
            env.put(line.group(1), line.group(2));
        }
        Path key = Files.writeString(dir.resolve("app.pem"), Keys.pkcs1Pem());
        env.put("GITHUB_APP_PRIVATE_KEY_FILE", key.toString()); // where the example's recipes mount it
        env.put("GITHUB_API_URL", "http://127.0.0.1:9"); // not called at start
        env.put("AGENTX_DATA_DIR", dir.resolve("data").toString()); // the image's /data
        env.put("PORT", "0");
        env.put("AGENTX_MANAGEMENT_PORT", "0");
        env.put("AGENTX_LOG_FORMAT", "json"); // as the Kubernetes manifest sets it
        Path log = dir.resolve("serve.log");
        Process serve = pb.redirectErrorStream(true).redirectOutput(log.toFile()).start();
        try {
            Pattern listening = Pattern.compile("listening on http://0\\.0\\.0\\.0:(\\d+)/api/github/webhooks");
            Instant end = Instant.now().plusSeconds(60);
            Matcher m;
            while (!(m = listening.matcher(read(log))).find()) {
                assertTrue(serve.isAlive() && Instant.now().isBefore(end), "the jar serves:\n" + read(log));
                Thread.sleep(50); // polling a real process
            }
            int port = Integer.parseInt(m.group(1));
            Matcher management = Pattern.compile("management on http://0\\.0\\.0\\.0:(\\d+) ").matcher(read(log));
            assertTrue(management.find(), read(log));
            int managementPort = Integer.parseInt(management.group(1));
            HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();
            List<String> answers = new ArrayList<>();
            for (String url : List.of("http://127.0.0.1:" + managementPort + "/metrics",
                    "http://127.0.0.1:" + port + "/metrics", "http://127.0.0.1:" + port + "/healthz")) {
                HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create(url)).build(),
                        HttpResponse.BodyHandlers.ofString());
                answers.add(r.statusCode() + " " + r.body());
            }
            assertTrue(answers.get(0).startsWith("200 "), answers.get(0));
            assertTrue(answers.get(0).contains("\nagentx_lock_wait_seconds_bucket{le=\"+Inf\"} "), answers.get(0));
            assertTrue(answers.get(0).contains("\njvm_memory_used_bytes{area=\"heap\"} "), answers.get(0));
            assertTrue(answers.get(0).contains("\nprocess_cpu_seconds_total "), answers.get(0));
            assertTrue(answers.get(1).startsWith("404 "), answers.get(1));
            assertTrue(answers.get(2).startsWith("200 {\"status\":\"ok\""), answers.get(2));
            serve.destroy(); // SIGTERM, as tini passes it on
            assertTrue(serve.waitFor(60, TimeUnit.SECONDS), read(log));
            assertEquals(143, serve.exitValue(), read(log));
        } finally {
            serve.destroyForcibly();
        }
        assertTrue(Pattern.compile("(?m)^\\{\"ts\":\"[^\"]+\",\"level\":\"INFO\"").matcher(read(log)).find(),
                "AGENTX_LOG_FORMAT=json: one JSON object per line\n" + read(log));
    }
}
