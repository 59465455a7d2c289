package dev.agentx.clarify.github.ops;

import static dev.agentx.clarify.support.Scrape.value;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.agentx.clarify.github.GitHubSettings;
import dev.agentx.clarify.github.inbox.Worker;
import dev.agentx.clarify.github.outbox.Outbox;
import dev.agentx.clarify.github.support.GitHubRig;
import dev.agentx.clarify.github.webhook.SignatureVerifier;
import dev.agentx.clarify.github.webhook.WebhookServer;
import dev.agentx.clarify.metrics.ServerMetrics;
import dev.agentx.clarify.protocol.ClarifyException;
import dev.agentx.clarify.protocol.ErrorCode;
import dev.agentx.clarify.store.DeliveryQueue;
import dev.agentx.clarify.store.files.FileDeliveryQueue;
import dev.agentx.clarify.support.MutableClock;
import dev.agentx.clarify.support.TestReceiver;
import dev.agentx.clarify.support.Scrape;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
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

    /** Receivers of the flow's notifications: one takes them, one refuses them for good (410). */
    final TestReceiver takes = TestReceiver.started();
    final TestReceiver refuses = TestReceiver.started();

    @BeforeEach
    void setUp() {
        clock = MutableClock.at("2026-02-26T10:00:00Z");
        rig = new GitHubRig(dir.resolve("data"), clock);
        refuses.answer = n -> TestReceiver.Answer.status(410);
        rig.writeConfig(GitHubRig.CONFIG + """
                [[notify]]
                url = "%s"
                events = ["answered"]
                allow_private = true

                [[notify]]
                url = "%s"
                events = ["answered"]
                allow_private = true
                """.formatted(takes.url(), refuses.url()));
        rig.start();
    }

    @AfterEach
    void tearDown() {
        rig.close();
        takes.close();
        refuses.close();
    }

    @Test
    void readyWhenWritableAndDrained() {
        GitHubRig.Response r = rig.management("/readyz");
        assertEquals(200, r.status(), r.body());
        assertEquals("{\"status\":\"ready\",\"reasons\":[]}", r.body());
        assertEquals(405, rig.request("POST", rig.mode().managementPort(), "/readyz", new byte[0], Map.of()).status());
        assertEquals(405, rig.request("POST", rig.mode().managementPort(), "/metrics", new byte[0], Map.of()).status());
        assertEquals(404, rig.request("GET", rig.mode().port(), "/readyz", null, Map.of()).status());
        assertEquals(404, rig.request("GET", rig.mode().port(), "/metrics", null, Map.of()).status());
        assertEquals(rig.request("GET", rig.mode().port(), "/healthz", null, Map.of()).body(),
                rig.management("/healthz").body(), "the same liveness answer on both ports");
    }

    /** The scrape of the server's /metrics, on the management port. */
    private String metrics() {
        return rig.metrics();
    }

    /**
     * Five deliveries received (one of them a redelivery of an id seen before) and one refused; two
     * questions, an answer and an unknown command; every effect sent.
     */
    private void scriptedFlow() {
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
        // /mcp: a request without a token is refused; one with a user's token is counted (and needs a session)
        Map<String, String> json = Map.of("Content-Type", "application/json", "Accept",
                "application/json, text/event-stream");
        byte[] ping = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}".getBytes();
        assertEquals(401, rig.request("POST", rig.mode().port(), "/mcp", ping, json).status());
        rig.wiremock.stubFor(com.github.tomakehurst.wiremock.client.WireMock.get("/user").willReturn(
                com.github.tomakehurst.wiremock.client.WireMock.okJson("{\"login\":\"eng\",\"id\":7,\"type\":\"User\"}")));
        Map<String, String> authorized = new java.util.HashMap<>(json);
        authorized.put("Authorization", "Bearer gho_eng");
        assertEquals(400, rig.request("POST", rig.mode().port(), "/mcp", ping, authorized).status());
    }

    // the histograms' names as exposed (the contract with dashboards), not the code's constants
    static final String WEBHOOK_ACK = "agentx_webhook_ack_seconds";
    static final String DELIVERY_PROCESSING = "agentx_delivery_processing_seconds";
    static final String GITHUB_CALL = "agentx_github_api_call_seconds";
    static final String OUTBOX_EFFECT_AGE = "agentx_outbox_effect_age_seconds";
    static final String COMMENTS_ROUTE = "/repos/{owner}/{repo}/issues/{issue_number}/comments";

    @Test
    void metricsAfterAScriptedFlow() {
        scriptedFlow();
        String m = metrics();
        String comments = "{action=\"created\",event=\"issue_comment\",outcome=";
        // each delivery received is counted once, at its final outcome
        assertEquals(4, value(m, ServerMetrics.DELIVERIES + comments + "\"processed\"}"));
        assertEquals(1, value(m, ServerMetrics.DELIVERIES + comments + "\"duplicate\"}"));
        assertEquals(5, Scrape.sum(m, ServerMetrics.DELIVERIES), "5 deliveries received, 5 outcomes: " + m);
        assertFalse(m.contains("outcome=\"queued\""), m);
        assertEquals(1, value(m, ServerMetrics.WEBHOOK_REFUSED + "{status=\"401\"}"));
        assertEquals(2, value(m, ServerMetrics.COMMANDS + "{outcome=\"accepted\",type=\"ask\"}"));
        assertEquals(1, value(m, ServerMetrics.COMMANDS + "{outcome=\"accepted\",type=\"answer\"}"));
        assertEquals(0, value(m, ServerMetrics.OUTBOX_DEPTH));
        assertEquals(0, value(m, ServerMetrics.INBOX_DEPTH));
        assertTrue(value(m, ServerMetrics.OUTBOX_EFFECTS + "{outcome=\"done\",type=\"comment\"}") >= 3, m);
        assertEquals(1, value(m, ServerMetrics.CLARIFICATIONS + "{status=\"pending\"}"));
        assertEquals(1, value(m, ServerMetrics.CLARIFICATIONS + "{status=\"answered\"}"));
        assertEquals(0, value(m, ServerMetrics.CLARIFICATIONS + "{status=\"stale\"}"));
        assertEquals(0, value(m, ServerMetrics.CLARIFICATIONS + "{status=\"escalated\"}"));

        // latencies are histograms: buckets, count and sum
        assertEquals(4, value(m, WEBHOOK_ACK + "_count{status=\"202\"}"), m);
        assertEquals(1, value(m, WEBHOOK_ACK + "_count{status=\"200\"}"), m);
        assertEquals(1, value(m, WEBHOOK_ACK + "_count{status=\"401\"}"), m);
        assertEquals(4, value(m, ServerMetrics.WEBHOOK_QUEUE + "_count"), m); // the queued ones, not the duplicate
        assertTrue(value(m, ServerMetrics.WEBHOOK_QUEUE + "_sum") > 0, m);
        assertEquals(4, value(m, DELIVERY_PROCESSING + "_count{event=\"issue_comment\","
                + "outcome=\"processed\"}"), m);
        assertTrue(value(m, GITHUB_CALL + "_count{method=\"POST\",route=\"" + COMMENTS_ROUTE
                + "\",status=\"2xx\"}") >= 3, m);
        assertTrue(value(m, GITHUB_CALL + "_count{method=\"POST\",route=\""
                + "/app/installations/{installation_id}/access_tokens\",status=\"2xx\"}") >= 1, m);
        assertTrue(value(m, OUTBOX_EFFECT_AGE + "_count{type=\"comment\"}") >= 3, m);
        assertTrue(value(m, ServerMetrics.LOCK_WAIT + "_count") > 0, m);
        assertEquals(4, value(m, ServerMetrics.MONITOR_PASS + "_count"));
        assertEquals(1, value(m, ServerMetrics.NOTIFICATION_ATTEMPTS + "{event=\"answered\",outcome=\"sent\"}"), m);
        assertEquals(1, value(m, ServerMetrics.NOTIFICATION_ATTEMPTS + "{event=\"answered\",outcome=\"error\"}"), m);
        assertEquals(1, value(m, ServerMetrics.NOTIFICATIONS_FAILED + "{event=\"answered\"}"), m);
        assertEquals(2, value(m, ServerMetrics.NOTIFICATION_ATTEMPT + "_count{outcome=\"sent\"}")
                + value(m, ServerMetrics.NOTIFICATION_ATTEMPT + "_count{outcome=\"error\"}"), m);
        for (String histogram : List.of(WEBHOOK_ACK, ServerMetrics.WEBHOOK_QUEUE,
                DELIVERY_PROCESSING, GITHUB_CALL, OUTBOX_EFFECT_AGE,
                ServerMetrics.LOCK_WAIT, ServerMetrics.MONITOR_PASS)) {
            assertEquals("histogram", Scrape.types(m).get(histogram), histogram + " in\n" + m);
            assertTrue(m.contains("\n" + histogram + "_bucket{"), histogram + " has buckets: " + m);
        }
        assertEquals("counter", Scrape.types(m).get(ServerMetrics.DELIVERIES), m);
        assertEquals("gauge", Scrape.types(m).get(ServerMetrics.RATE_LIMIT_REMAINING), m);
        for (String line : m.split("\n")) {
            assertTrue(line.startsWith("# ") || line.startsWith("agentx_") || line.startsWith("jvm_")
                    || line.startsWith("process_"), line);
        }
    }

    /**
     * The table of metrics in docs/operations.md, section "## Metrics": each agentx_* metric the
     * server exposes has a row with its type, and each row names a metric the server exposes.
     */
    @Test
    void theMetricsTableOfTheOperationsDocListsExactlyTheMetricsServed() throws Exception {
        scriptedFlow();
        Map<String, String> served = new TreeMap<>();
        Scrape.types(metrics()).forEach((name, type) -> {
            if (name.startsWith("agentx_")) {
                served.put(name, type);
            }
        });
        Map<String, String> documented = metricsTable(Path.of("docs", "operations.md"));
        assertEquals(documented, served, "docs/operations.md '## Metrics' (expected) against /metrics (actual); a "
                + "labelled metric is served once it has a value, so a new one needs a step in scriptedFlow too");
    }

    /** The rows of the table under "## Metrics": `name` -> type. */
    static Map<String, String> metricsTable(Path doc) throws java.io.IOException {
        String text = Files.readString(doc);
        java.util.regex.Matcher section = java.util.regex.Pattern.compile("(?ms)^## Metrics\\s*$(.*?)(?=^## |\\z)")
                .matcher(text);
        assertTrue(section.find(), doc + " has a '## Metrics' section");
        Map<String, String> rows = new TreeMap<>();
        java.util.regex.Matcher row = java.util.regex.Pattern.compile("(?m)^\\|\\s*`([a-z_:][a-z0-9_:]*)`\\s*\\|"
                + "\\s*([a-z]+)\\s*\\|").matcher(section.group(1));
        while (row.find()) {
            assertTrue(rows.put(row.group(1), row.group(2)) == null, "two rows for " + row.group(1));
        }
        assertFalse(rows.isEmpty(), "no rows in the Metrics table of " + doc);
        return rows;
    }

    @Test
    void readinessReasons() throws Exception {
        Path data = Files.createDirectories(dir.resolve("other"));
        FileDeliveryQueue inbox = new FileDeliveryQueue(data.resolve("inbox"), clock);
        Outbox outbox = new Outbox(data.resolve("outbox"), null, clock, ServerMetrics.create());
        Worker stopped = new Worker(inbox, null, outbox, clock, false, ServerMetrics.create());
        Readiness.Result r = new Readiness(data, stopped, clock, () -> true, java.util.Optional::empty).check();
        assertFalse(r.ready());
        assertEquals(List.of("the inbox worker is not running"), r.reasons());

        Worker running = new Worker(inbox, null, outbox, clock, true, ServerMetrics.create());
        java.util.concurrent.atomic.AtomicBoolean listening = new java.util.concurrent.atomic.AtomicBoolean();
        Readiness readiness = new Readiness(data, running, clock, listening::get, java.util.Optional::empty);
        assertEquals(List.of("the webhook port is not listening yet"), readiness.check().reasons());
        listening.set(true);
        assertTrue(readiness.check().ready(), readiness.check().toString());
        inbox.accept("00000000-0000-0000-0000-000000000001", "ping", "{}".getBytes(), "");
        assertTrue(readiness.check().ready());
        clock.advance(Readiness.STUCK_AFTER.plusSeconds(1));
        r = readiness.check();
        assertFalse(r.ready());
        assertTrue(r.reasons().get(0).startsWith("the oldest due delivery has waited since"), r.toString());

        Path file = Files.writeString(dir.resolve("a-file"), "x");
        Worker idle = new Worker(new FileDeliveryQueue(dir.resolve("inbox2"), clock), null, outbox, clock, true,
                ServerMetrics.create());
        r = new Readiness(file, idle, clock, () -> true, java.util.Optional::empty).check();
        assertFalse(r.ready());
        assertTrue(r.reasons().get(0).startsWith("data dir " + file + " is not writable"), r.toString());

        r = new Readiness(data, idle, clock, () -> true, () -> java.util.Optional.of("the database db cannot be reached"))
                .check();
        assertEquals(List.of("the database db cannot be reached"), r.reasons());

        readiness = new Readiness(data, idle, clock, () -> true, java.util.Optional::empty);
        readiness.stopping();
        assertEquals(List.of("shutting down"), readiness.check().reasons());
    }

    @Test
    void whileStoppingWebhooksGet503AndReadinessFails() throws Exception {
        Path data = Files.createDirectories(dir.resolve("stopping"));
        FileDeliveryQueue inbox = new FileDeliveryQueue(data.resolve("inbox"), clock);
        ServerMetrics metrics = ServerMetrics.create();
        Outbox outbox = new Outbox(data.resolve("outbox"), null, clock, metrics);
        Worker worker = new Worker(inbox, null, outbox, clock, true, metrics);
        WebhookServer server = new WebhookServer(GitHubSettings.DEFAULT_PATH, 1000, new SignatureVerifier(List.of(
                GitHubRig.SECRET.getBytes())), inbox, outbox, worker, metrics);
        Readiness readiness = new Readiness(data, worker, clock, server::listening, java.util.Optional::empty);
        ManagementServer management = new ManagementServer(metrics, readiness, server::healthBody);
        server.start("127.0.0.1", 0);
        management.start("127.0.0.1", 0);
        try {
            server.stopTaking();
            readiness.stopping(); // as GitHubMode.close does
            byte[] body = "{}".getBytes();
            GitHubRig.Response r = rig.request("POST", server.port(), GitHubSettings.DEFAULT_PATH, body, Map.of(
                    "Content-Type", "application/json", "X-GitHub-Event", "ping", "X-GitHub-Delivery",
                    rig.nextDeliveryId(), "X-Hub-Signature-256", SignatureVerifier.sign(GitHubRig.SECRET, body)));
            assertEquals(503, r.status(), r.body());
            assertTrue(inbox.queued().isEmpty());
            GitHubRig.Response ready = rig.request("GET", management.port(), "/readyz", null, Map.of());
            assertEquals(503, ready.status());
            assertEquals("{\"status\":\"not ready\",\"reasons\":[\"shutting down\"]}", ready.body());
            assertEquals(1, metrics.counterValue(ServerMetrics.WEBHOOK_REFUSED, "503"));
            assertEquals(1, Scrape.value(metrics.scrape(), ServerMetrics.WEBHOOK_ACK + "_count{status=\"503\"}"));
        } finally {
            server.close();
            management.close();
        }
    }

    /**
     * The database goes between two of the server's looks at it: the delivery that finds it gone
     * while being queued gets the outage's 503 (not a 500), the look it asks for leaves its
     * verdict behind, and the next deliveries are refused by that verdict without trying.
     */
    @Test
    void aDeliveryThatCannotBeQueuedGets503WhenALookFindsTheDatabaseGone() throws Exception {
        Path data = Files.createDirectories(dir.resolve("gone"));
        FileDeliveryQueue files = new FileDeliveryQueue(data.resolve("inbox"), clock);
        AtomicBoolean storeFails = new AtomicBoolean();
        AtomicBoolean reachable = new AtomicBoolean(true);
        AtomicInteger accepts = new AtomicInteger();
        AtomicInteger looks = new AtomicInteger();
        DeliveryQueue inbox = (DeliveryQueue) java.lang.reflect.Proxy.newProxyInstance(getClass().getClassLoader(),
                new Class<?>[] {DeliveryQueue.class}, (proxy, method, args) -> {
                    if (method.getName().equals("accept")) {
                        accepts.incrementAndGet();
                        if (storeFails.get()) {
                            throw new ClarifyException(ErrorCode.INTERNAL,
                                    "PostgreSQL at db: Connection attempt timed out.");
                        }
                    }
                    try {
                        return method.invoke(files, args);
                    } catch (java.lang.reflect.InvocationTargetException e) {
                        throw e.getCause();
                    }
                });
        ServerMetrics metrics = ServerMetrics.create();
        Outbox outbox = new Outbox(data.resolve("outbox"), null, clock, metrics);
        Worker worker = new Worker(inbox, null, outbox, clock, false, metrics); // never started: deliveries stay queued
        WebhookServer server = new WebhookServer(GitHubSettings.DEFAULT_PATH, 1000, new SignatureVerifier(List.of(
                GitHubRig.SECRET.getBytes())), inbox, outbox, worker, metrics);
        java.util.concurrent.atomic.AtomicReference<Optional<String>> verdict =
                new java.util.concurrent.atomic.AtomicReference<>(Optional.empty());
        server.refuseWhile(verdict::get, () -> {
            looks.incrementAndGet();
            verdict.set(reachable.get() ? Optional.empty() : Optional.of("the database db cannot be reached"));
            return verdict.get();
        });
        server.start("127.0.0.1", 0);
        try {
            storeFails.set(true);
            reachable.set(false); // gone since the last look, which found it there
            GitHubRig.Response r = ping(server);
            assertEquals(503, r.status(), r.body());
            assertTrue(r.body().contains("cannot be reached") && r.body().contains("not acknowledged"), r.body());
            assertEquals(1, looks.get());
            assertEquals(503, ping(server).status(), "refused by the verdict that look left");
            assertEquals(1, accepts.get(), "the second delivery was not tried");
            assertEquals(1, looks.get());
            assertTrue(files.queued().isEmpty());
            assertEquals(2, metrics.counterValue(ServerMetrics.WEBHOOK_REFUSED, "503"));

            // the store fails but a look finds the database there: a server error, as before
            reachable.set(true);
            verdict.set(Optional.empty());
            assertEquals(500, ping(server).status());
            assertEquals(2, looks.get());

            storeFails.set(false);
            assertEquals(202, ping(server).status());
            assertEquals(1, files.queued().size());
        } finally {
            server.close();
        }
    }

    private GitHubRig.Response ping(WebhookServer server) {
        byte[] body = "{}".getBytes();
        return rig.request("POST", server.port(), GitHubSettings.DEFAULT_PATH, body, Map.of(
                "Content-Type", "application/json", "X-GitHub-Event", "ping", "X-GitHub-Delivery",
                rig.nextDeliveryId(), "X-Hub-Signature-256", SignatureVerifier.sign(GitHubRig.SECRET, body)));
    }
}
