package dev.agentx.clarify.github.ops;

import static dev.agentx.clarify.support.Scrape.value;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.agentx.clarify.github.GitHubSettings;
import dev.agentx.clarify.github.inbox.Inbox;
import dev.agentx.clarify.github.inbox.Worker;
import dev.agentx.clarify.github.outbox.Outbox;
import dev.agentx.clarify.github.support.GitHubRig;
import dev.agentx.clarify.github.webhook.SignatureVerifier;
import dev.agentx.clarify.github.webhook.WebhookServer;
import dev.agentx.clarify.metrics.Metrics;
import dev.agentx.clarify.metrics.ServerMetrics;
import dev.agentx.clarify.support.MutableClock;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code /readyz} and {@code /metrics} of the real server after a scripted flow. */
class OpsEndpointsTest {
    @TempDir
    Path dir;
    MutableClock clock;
    GitHubRig rig;

    @BeforeEach
    void setUp() {
        clock = MutableClock.at("2026-02-26T10:00:00Z");
        rig = new GitHubRig(dir.resolve("data"), clock);
        rig.start();
    }

    @AfterEach
    void tearDown() {
        rig.close();
    }

    private GitHubRig.Response get(String path) {
        return rig.request("GET", rig.mode().port(), path, null, Map.of());
    }

    @Test
    void readyWhenWritableAndDrained() {
        GitHubRig.Response r = get("/readyz");
        assertEquals(200, r.status(), r.body());
        assertTrue(r.body().contains("\"status\":\"ready\""), r.body());
        assertEquals(405, rig.request("POST", rig.mode().port(), "/readyz", new byte[0], Map.of()).status());
    }

    @Test
    void metricsAfterAScriptedFlow() {
        assertEquals(202, rig.deliver("issue_comment", rig.comment("eng", 1, "/clarify @architect Which DB?")).status());
        String id = rig.nextDeliveryId();
        assertEquals(202, rig.deliver("issue_comment", rig.comment("eng", 2, "/clarify @architect Which queue?"), id)
                .status());
        assertEquals(200, rig.deliver("issue_comment", rig.comment("eng", 2, "/clarify @architect Which queue?"), id)
                .status());
        clock.advance(Duration.ofMinutes(5));
        assertEquals(202, rig.deliver("issue_comment", rig.comment("arch", 1, "/clarify answer Postgres.")).status());
        assertEquals(202, rig.deliver("issue_comment", rig.comment("someone", 1, "/clarify bogus")).status());
        assertEquals(401, rig.send("POST", "{}".getBytes(), Map.of("Content-Type", "application/json",
                "X-GitHub-Event", "ping", "X-GitHub-Delivery", rig.nextDeliveryId(),
                "X-Hub-Signature-256", "sha256=00")).status());

        GitHubRig.Response r = get("/metrics");
        assertEquals(200, r.status());
        String m = r.body();
        assertEquals(4, value(m, ServerMetrics.DELIVERIES + "{event=\"issue_comment\",action=\"created\",outcome=\"queued\"}"));
        assertEquals(1, value(m, ServerMetrics.DELIVERIES + "{event=\"issue_comment\",action=\"created\",outcome=\"duplicate\"}"));
        assertEquals(4, value(m, ServerMetrics.DELIVERIES + "{event=\"issue_comment\",action=\"created\",outcome=\"processed\"}"));
        assertEquals(1, value(m, ServerMetrics.WEBHOOK_REFUSED + "{status=\"401\"}"));
        assertEquals(2, value(m, ServerMetrics.COMMANDS + "{type=\"ask\",outcome=\"accepted\"}"));
        assertEquals(1, value(m, ServerMetrics.COMMANDS + "{type=\"answer\",outcome=\"accepted\"}"));
        assertEquals(0, value(m, ServerMetrics.OUTBOX_DEPTH));
        assertEquals(0, value(m, ServerMetrics.INBOX_DEPTH));
        assertTrue(value(m, ServerMetrics.OUTBOX_EFFECTS + "{type=\"comment\",outcome=\"done\"}") >= 3, m);
        assertTrue(value(m, ServerMetrics.GITHUB_CALLS + "{status=\"2xx\"}") >= 3, m);
        assertEquals(1, value(m, ServerMetrics.CLARIFICATIONS + "{status=\"pending\"}"));
        assertEquals(1, value(m, ServerMetrics.CLARIFICATIONS + "{status=\"answered\"}"));
        assertEquals(0, value(m, ServerMetrics.CLARIFICATIONS + "{status=\"stale\"}"));
        assertEquals(0, value(m, ServerMetrics.CLARIFICATIONS + "{status=\"escalated\"}"));
        assertTrue(value(m, ServerMetrics.LOCK_WAIT + "_count") > 0, m);
        assertEquals(4, value(m, ServerMetrics.MONITOR_PASS + "_count"));
        assertEquals(4, value(m, ServerMetrics.WEBHOOK_QUEUE + "_count"), m); // the queued ones, not the duplicate
        assertTrue(value(m, ServerMetrics.WEBHOOK_QUEUE + "_sum") > 0, m);
        assertTrue(m.contains("# TYPE " + ServerMetrics.DELIVERIES + " counter"), m);
        assertTrue(m.contains("# TYPE " + ServerMetrics.RATE_LIMIT_REMAINING + " gauge"), m);
        for (String line : m.split("\n")) {
            assertTrue(line.startsWith("# ") || line.startsWith("agentx_"), line);
        }
    }

    @Test
    void readinessReasons() throws Exception {
        Path data = Files.createDirectories(dir.resolve("other"));
        Inbox inbox = new Inbox(data.resolve("inbox"), clock);
        Outbox outbox = new Outbox(data.resolve("outbox"), null, clock, ServerMetrics.create());
        Worker stopped = new Worker(inbox, null, outbox, clock, false, ServerMetrics.create());
        Readiness.Result r = new Readiness(data, stopped, clock).check();
        assertFalse(r.ready());
        assertEquals(List.of("the inbox worker is not running"), r.reasons());

        Worker running = new Worker(inbox, null, outbox, clock, true, ServerMetrics.create());
        Readiness readiness = new Readiness(data, running, clock);
        assertTrue(readiness.check().ready(), readiness.check().toString());
        inbox.accept("00000000-0000-0000-0000-000000000001", "ping", "{}".getBytes());
        assertTrue(readiness.check().ready());
        clock.advance(Readiness.STUCK_AFTER.plusSeconds(1));
        r = readiness.check();
        assertFalse(r.ready());
        assertTrue(r.reasons().get(0).startsWith("the oldest due delivery has waited since"), r.toString());

        Path file = Files.writeString(dir.resolve("a-file"), "x");
        Worker idle = new Worker(new Inbox(dir.resolve("inbox2"), clock), null, outbox, clock, true,
                ServerMetrics.create());
        r = new Readiness(file, idle, clock).check();
        assertFalse(r.ready());
        assertTrue(r.reasons().get(0).startsWith("data dir " + file + " is not writable"), r.toString());

        readiness = new Readiness(data, idle, clock);
        readiness.stopping();
        assertEquals(List.of("shutting down"), readiness.check().reasons());
    }

    @Test
    void whileStoppingWebhooksGet503AndReadinessFails() throws Exception {
        Path data = Files.createDirectories(dir.resolve("stopping"));
        Inbox inbox = new Inbox(data.resolve("inbox"), clock);
        Metrics metrics = ServerMetrics.create();
        Outbox outbox = new Outbox(data.resolve("outbox"), null, clock, metrics);
        Worker worker = new Worker(inbox, null, outbox, clock, true, metrics);
        WebhookServer server = new WebhookServer(GitHubSettings.DEFAULT_PATH, 1000, new SignatureVerifier(List.of(
                GitHubRig.SECRET.getBytes())), inbox, outbox, worker, metrics, new Readiness(data, worker, clock));
        server.start("127.0.0.1", 0);
        try {
            server.stopTaking();
            byte[] body = "{}".getBytes();
            GitHubRig.Response r = rig.request("POST", server.port(), GitHubSettings.DEFAULT_PATH, body, Map.of(
                    "Content-Type", "application/json", "X-GitHub-Event", "ping", "X-GitHub-Delivery",
                    rig.nextDeliveryId(), "X-Hub-Signature-256", SignatureVerifier.sign(GitHubRig.SECRET, body)));
            assertEquals(503, r.status(), r.body());
            assertTrue(inbox.queued().isEmpty());
            GitHubRig.Response ready = rig.request("GET", server.port(), "/readyz", null, Map.of());
            assertEquals(503, ready.status());
            assertTrue(ready.body().contains("shutting down"), ready.body());
            assertEquals(1, metrics.value(ServerMetrics.WEBHOOK_REFUSED, "status", "503"));
        } finally {
            server.close();
        }
    }
}
