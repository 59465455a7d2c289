package dev.agentx.clarify.github.ops;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.agentx.clarify.cli.Main;
import dev.agentx.clarify.github.support.GitHubRig;
import dev.agentx.clarify.github.support.Keys;
import dev.agentx.clarify.support.Jvm;
import dev.agentx.clarify.support.MutableClock;
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
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code agentx serve} as a process, both ports picked free ({@code PORT=0},
 * {@code AGENTX_MANAGEMENT_PORT=0}): it prints both addresses; {@code /metrics} (histogram buckets,
 * JVM and process series) and {@code /readyz} are on the management port only; {@code /healthz} on
 * both.
 */
class ManagementPortTest {
    static final Duration DEADLINE = Duration.ofSeconds(60);
    static final Pattern WEBHOOK = Pattern.compile("agentx serve: listening on http://0\\.0\\.0\\.0:(\\d+)/api/github/webhooks");
    static final Pattern MANAGEMENT = Pattern.compile("agentx serve: management on http://0\\.0\\.0\\.0:(\\d+) ");

    @TempDir
    Path dir;

    private final HttpClient http = HttpClient.newHttpClient();

    private HttpResponse<String> get(int port, String path) throws Exception {
        return http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path)).build(),
                HttpResponse.BodyHandlers.ofString());
    }

    private static String read(Path file) {
        try {
            return Files.exists(file) ? Files.readString(file, StandardCharsets.UTF_8) : "";
        } catch (IOException e) {
            return "";
        }
    }

    @Test
    void metricsAndReadinessAreOnTheManagementPortAndHealthOnBoth() throws Exception {
        try (GitHubRig rig = new GitHubRig(dir.resolve("data"), MutableClock.at("2026-02-26T10:00:00Z"))) {
            ProcessBuilder pb = Jvm.builder(Main.class, "serve");
            Map<String, String> env = pb.environment();
            env.remove("JAVA_TOOL_OPTIONS");
            env.put("GITHUB_APP_ID", String.valueOf(GitHubRig.APP_ID));
            env.put("GITHUB_APP_PRIVATE_KEY", Keys.pkcs8Pem());
            env.put("GITHUB_WEBHOOK_SECRET", GitHubRig.SECRET);
            env.put("GITHUB_API_URL", rig.wiremock.baseUrl());
            env.put("AGENTX_DATA_DIR", rig.data.toString());
            env.put("PORT", "0");
            env.put("AGENTX_MANAGEMENT_PORT", "0");
            Path log = dir.resolve("serve.log");
            Process serve = pb.redirectErrorStream(true).redirectOutput(log.toFile()).start();
            try {
                Instant end = Instant.now().plus(DEADLINE);
                Matcher webhook = WEBHOOK.matcher("");
                while (!(webhook = WEBHOOK.matcher(read(log))).find()) {
                    assertTrue(serve.isAlive() && Instant.now().isBefore(end), "the server listens:\n" + read(log));
                    Thread.sleep(50); // polling a real process
                }
                int port = Integer.parseInt(webhook.group(1));
                Matcher management = MANAGEMENT.matcher(read(log)); // printed before the webhook's line
                assertTrue(management.find(), "both addresses are printed:\n" + read(log));
                int managementPort = Integer.parseInt(management.group(1));
                assertTrue(port != managementPort && port > 0 && managementPort > 0, read(log));

                HttpResponse<String> metrics = get(managementPort, "/metrics");
                assertEquals(200, metrics.statusCode(), metrics.body());
                assertEquals("text/plain; version=0.0.4; charset=utf-8", metrics.headers().firstValue("Content-Type")
                        .orElse(""));
                String m = metrics.body();
                assertTrue(m.contains("\nagentx_lock_wait_seconds_bucket{le=\"0.001\"} "), m);
                assertTrue(m.contains("\njvm_memory_used_bytes{area=\"heap\"} "), m);
                assertTrue(m.contains("\njvm_threads_current "), m);
                assertTrue(m.contains("\nprocess_cpu_seconds_total "), m);
                assertEquals(404, get(port, "/metrics").statusCode(), "no metrics on the webhook port");
                assertEquals(404, get(port, "/readyz").statusCode(), "no readiness on the webhook port");
                HttpResponse<String> ready = get(managementPort, "/readyz");
                assertEquals(200, ready.statusCode(), ready.body());
                assertTrue(ready.body().contains("\"status\":\"ready\""), ready.body());
                for (int p : new int[] {port, managementPort}) {
                    HttpResponse<String> health = get(p, "/healthz");
                    assertEquals(200, health.statusCode(), health.body());
                    assertTrue(health.body().contains("\"status\":\"ok\""), health.body());
                }
                assertEquals(404, get(managementPort, "/api/github/webhooks").statusCode(),
                        "no webhooks on the management port");
                assertEquals(404, get(managementPort, "/metricsx").statusCode());
                serve.destroy(); // SIGTERM
                assertTrue(serve.waitFor(DEADLINE.toSeconds(), TimeUnit.SECONDS), read(log));
                assertEquals(143, serve.exitValue(), read(log));
            } finally {
                serve.destroyForcibly();
            }
        }
    }
}
