package dev.agentx.clarify.github;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.agentx.clarify.github.support.GitHubRig;
import dev.agentx.clarify.github.webhook.SignatureVerifier;
import dev.agentx.clarify.support.MutableClock;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.zip.GZIPInputStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Every webhook example GitHub documents (github.com and GitHub Enterprise Server 3.1 to 3.5, the
 * {@code @octokit/webhooks-examples} corpus), signed and delivered as GitHub would: each one is
 * acknowledged, whatever its event, and the server stays healthy and works them all off.
 */
class WebhookCorpusTest {
    static final Path CORPUS = Path.of(System.getProperty("agentx.fixtures", "src/test/resources/fixtures"),
            "octokit-webhooks-examples");

    @TempDir
    Path dir;

    @Test
    void everyDocumentedExampleIsAcknowledgedAndNoneHurtsTheServer() throws Exception {
        ObjectMapper json = new ObjectMapper();
        List<String> refused = new ArrayList<>();
        int delivered = 0;
        try (GitHubRig rig = new GitHubRig(dir.resolve("data"), MutableClock.at("2026-02-26T10:00:00Z"))) {
            rig.start();
            List<Path> files;
            try (var s = Files.list(CORPUS)) {
                files = s.filter(p -> p.toString().endsWith(".json.gz")).sorted().toList();
            }
            assertEquals(6, files.size(), "github.com and five GHES versions");
            for (Path file : files) {
                JsonNode events;
                try (InputStream in = new GZIPInputStream(Files.newInputStream(file))) {
                    events = json.readTree(in);
                }
                for (JsonNode event : events) {
                    String name = event.get("name").asText();
                    for (JsonNode example : event.get("examples")) {
                        byte[] body = json.writeValueAsBytes(example);
                        Map<String, String> headers = new HashMap<>();
                        headers.put("Content-Type", "application/json");
                        headers.put("X-GitHub-Event", name);
                        headers.put("X-GitHub-Delivery", rig.nextDeliveryId());
                        headers.put("X-Hub-Signature-256", SignatureVerifier.sign(GitHubRig.SECRET, body));
                        GitHubRig.Response r = rig.send("POST", body, headers);
                        delivered++;
                        if (r.status() != 202) {
                            refused.add(file.getFileName() + " " + name + "." + example.path("action").asText("")
                                    + ": " + r.status() + " " + r.body().strip());
                        }
                    }
                }
            }
            assertEquals(List.of(), refused, "every event GitHub sends is acknowledged");
            assertTrue(delivered >= 700, "the whole corpus: " + delivered);
            assertEquals(0, rig.mode().pendingDeliveries(), "every delivery was worked off, none is stuck");
            GitHubRig.Response health = rig.request("GET", rig.mode().port(), "/healthz", null, Map.of());
            assertEquals(200, health.status(), health.body());
        }
    }
}
