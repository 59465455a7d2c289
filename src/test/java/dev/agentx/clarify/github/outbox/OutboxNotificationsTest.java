package dev.agentx.clarify.github.outbox;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.agentx.clarify.channel.Signatures;
import dev.agentx.clarify.cli.Main;
import dev.agentx.clarify.config.AgentxConfig;
import dev.agentx.clarify.config.ConfigLoader;
import dev.agentx.clarify.github.RepoRef;
import dev.agentx.clarify.github.notify.Notifier;
import dev.agentx.clarify.metrics.ServerMetrics;
import dev.agentx.clarify.protocol.ClarificationRecord;
import dev.agentx.clarify.protocol.EntryType;
import dev.agentx.clarify.protocol.Status;
import dev.agentx.clarify.protocol.ThreadEntry;
import dev.agentx.clarify.support.MutableClock;
import dev.agentx.clarify.support.TestReceiver;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Notifications through the outbox to a real HTTP receiver: signed, the same delivery id on every
 * attempt, everything once and in order after a receiver was down, final answers not retried, 24
 * hours of retries measured with the clock, and a receiver that hangs never holding up comments
 * or other receivers.
 */
class OutboxNotificationsTest {
    private static final RepoRef REPO = new RepoRef("acme", "shop");
    private static final Instant T = Instant.parse("2026-05-04T10:00:00Z");
    private static final ObjectMapper JSON = new ObjectMapper();
    private final MutableClock clock = MutableClock.at("2026-05-04T10:00:00Z");
    private final FlakyGitHub github = new FlakyGitHub();
    private final ServerMetrics metrics = ServerMetrics.create();
    private final List<TestReceiver> receivers = new ArrayList<>();
    private final List<Outbox> outboxes = new ArrayList<>();
    @TempDir
    Path dir;

    @AfterEach
    void close() {
        receivers.forEach(TestReceiver::close);
        outboxes.forEach(Outbox::close);
    }

    private TestReceiver receiver(TestReceiver r) {
        receivers.add(r);
        return r;
    }

    private Outbox outbox() {
        Outbox o = new Outbox(dir.resolve("outbox"), github, clock, metrics);
        outboxes.add(o);
        return o;
    }

    private static AgentxConfig config(TestReceiver... to) {
        StringBuilder b = new StringBuilder();
        for (TestReceiver r : to) {
            b.append("[[notify]]\nurl = \"").append(r.url()).append("\"\nsecret = \"s3cret\"\nallow_private = true\n");
        }
        return ConfigLoader.parse("agentx.toml", b.toString());
    }

    /** Record {@code n} of issue 7 with one question, asked at T. */
    private static ClarificationRecord asked(int n) {
        return new ClarificationRecord(String.format("CLR-7-%03d", n), "engineer", "architect", "Topic " + n, true,
                Status.PENDING, 1, 5, T, T.plusSeconds(1800), null, List.of(), List.of(new ThreadEntry(1, "engineer",
                EntryType.QUESTION, "Question " + n, T)));
    }

    private static void queue(Outbox o, AgentxConfig config, int n) {
        new Notifier("https://github.com").entry(config, REPO, 7, 42, asked(n), 0).forEach(o::enqueue);
    }

    @Test
    void aSignedNotificationVerifiesAndIsListedAsSent() throws Exception {
        TestReceiver r = receiver(TestReceiver.started());
        Outbox o = outbox();
        queue(o, config(r), 1);
        o.flush();
        assertEquals(1, r.requests.size());
        TestReceiver.Request got = r.requests.get(0);
        assertTrue(Signatures.verify("s3cret", got.body(), got.header("X-AgentX-Signature-256")),
                "the receiver's check passes");
        assertFalse(Signatures.verify("other", got.body(), got.header("X-AgentX-Signature-256")));
        assertEquals("asked", got.header("X-AgentX-Event"));
        JsonNode body = JSON.readTree(got.body());
        assertEquals(got.header("X-AgentX-Delivery"), body.get("delivery").asText());
        assertEquals("CLR-7-001", body.get("clarification").get("id").asText());
        assertEquals(0, o.size());
        JsonNode listed = cli("--json", "notifications");
        assertEquals(1, listed.get("total").asInt());
        JsonNode n = listed.get("notifications").get(0);
        assertEquals("sent", n.get("state").asText());
        assertEquals(got.header("X-AgentX-Delivery"), n.get("delivery").asText());
        assertEquals("http://127.0.0.1:" + r.port(), n.get("url").asText(), "scheme, host and port only");
        assertEquals(1, metrics.counterValue(ServerMetrics.NOTIFICATION_ATTEMPTS, "asked", "sent"));
    }

    @Test
    void retriesKeepTheirDeliveryIdAndBody() {
        TestReceiver r = receiver(TestReceiver.started());
        r.answer = n -> n < 2 ? TestReceiver.Answer.status(503) : TestReceiver.Answer.ok();
        Outbox o = outbox();
        queue(o, config(r), 1);
        for (int i = 0; i < 3; i++) {
            o.flush();
            clock.advance(Duration.ofHours(2)); // past any backoff of the first attempts
        }
        assertEquals(3, r.requests.size());
        assertEquals(1, r.deliveries().stream().distinct().count(), "one id on every attempt: " + r.deliveries());
        assertEquals(1, r.requests.stream().map(TestReceiver.Request::text).distinct().count(), "one body");
        assertEquals(1, r.requests.stream().map(q -> q.header("X-AgentX-Signature-256")).distinct().count());
        assertEquals(0, o.size());
        assertEquals(2, metrics.counterValue(ServerMetrics.NOTIFICATION_ATTEMPTS, "asked", "error"));
    }

    @Test
    void aReceiverDownForAWhileGetsEverythingOnceAndInOrderWhenItIsBack() {
        TestReceiver down = receiver(TestReceiver.down());
        Outbox o = outbox();
        for (int n = 1; n <= 3; n++) {
            queue(o, config(down), n);
        }
        o.flush();
        clock.advance(Duration.ofMinutes(30));
        o.flush();
        assertEquals(3, o.size(), "all three wait: the first fails, the others wait behind it in its receiver's line");
        assertEquals(2, metrics.counterValue(ServerMetrics.NOTIFICATION_ATTEMPTS, "asked", "error"),
                "only the first was tried");

        down.start();
        clock.advance(Duration.ofHours(2));
        o.flush();
        o.flush();
        assertEquals(0, o.size());
        List<String> ids = new ArrayList<>();
        for (TestReceiver.Request q : down.requests) {
            ids.add(JSON.valueToTree(read(q)).get("clarification").get("id").asText());
        }
        assertEquals(List.of("CLR-7-001", "CLR-7-002", "CLR-7-003"), ids, "each once, in the order queued");
        assertEquals(3, down.deliveries().stream().distinct().count());
    }

    private static JsonNode read(TestReceiver.Request q) {
        try {
            return JSON.readTree(q.body());
        } catch (java.io.IOException e) {
            throw new AssertionError(e);
        }
    }

    @Test
    void aFourHundredIsFinalTheNextNotificationGoesOnAndTheFailureIsListed() throws Exception {
        TestReceiver r = receiver(TestReceiver.started());
        r.answer = n -> n == 0 ? TestReceiver.Answer.status(410) : TestReceiver.Answer.ok();
        Outbox o = outbox();
        queue(o, config(r), 1);
        queue(o, config(r), 2);
        o.flush();
        assertEquals(2, r.requests.size(), "the 410 is not retried; the next goes on");
        assertEquals(0, o.size());
        assertEquals(1, metrics.counterValue(ServerMetrics.NOTIFICATIONS_FAILED, "asked"));
        JsonNode failed = cli("--json", "notifications", "--failed");
        assertEquals(1, failed.get("total").asInt());
        JsonNode f = failed.get("notifications").get(0);
        assertEquals("failed", f.get("state").asText());
        assertEquals("CLR-7-001", f.get("clarification").asText());
        assertTrue(f.get("lastError").asText().contains("answered 410"), f.toString());
        String text = cliText("notifications");
        assertTrue(text.contains(" failed ") && text.contains(" sent "), text);
    }

    @Test
    void aReceiverThatKeepsFailingIsGivenUpOnTwentyFourHoursAfterTheNotificationWasQueued() throws Exception {
        TestReceiver r = receiver(TestReceiver.started());
        r.answer = n -> TestReceiver.Answer.status(500);
        Outbox o = outbox();
        queue(o, config(r), 1);
        Instant queued = clock.instant();
        while (o.size() > 0) {
            o.flush();
            clock.advance(Duration.ofMinutes(10));
            assertTrue(clock.instant().isBefore(queued.plus(Duration.ofHours(25))), "given up in time");
        }
        Instant lastTry = queued.plus(Duration.ofMinutes(10L * (r.requests.size() - 1)));
        assertTrue(r.requests.size() > 20, "retried all day: " + r.requests.size());
        assertFalse(clock.instant().isBefore(queued.plus(Duration.ofHours(24))), "not before 24 hours");
        assertEquals(1, metrics.counterValue(ServerMetrics.NOTIFICATIONS_FAILED, "asked"));
        assertEquals(1, r.deliveries().stream().distinct().count());
        JsonNode f = cli("--json", "notifications", "--failed").get("notifications").get(0);
        assertEquals(r.requests.size(), f.get("attempts").asInt());
        assertTrue(lastTry.isBefore(clock.instant()));
    }

    @Test
    void aTooManyRequestsWaitsWhatTheReceiverAsks() throws Exception {
        TestReceiver r = receiver(TestReceiver.started());
        r.answer = n -> n == 0 ? new TestReceiver.Answer(429, "120", false) : TestReceiver.Answer.ok();
        Outbox o = outbox();
        queue(o, config(r), 1);
        o.flush();
        JsonNode n = cli("--json", "notifications").get("notifications").get(0);
        assertEquals("retrying", n.get("state").asText());
        assertEquals(clock.instant().plusSeconds(120).toString(), n.get("nextAttempt").asText());
        clock.advance(Duration.ofSeconds(119));
        o.flush();
        assertEquals(1, r.requests.size(), "not before");
        clock.advance(Duration.ofSeconds(1));
        o.flush();
        assertEquals(2, r.requests.size());
        assertEquals(0, o.size());
    }

    /**
     * A receiver that takes the request and never answers: while the notifier thread waits for it,
     * comments are posted, other receivers get theirs, and the worker's tick goes on. Counted, not
     * timed: every comment is on GitHub while the hanging request is still in flight. The time the
     * comments took is printed beside the time they take with no receiver at all.
     */
    @Test
    void aReceiverThatHangsDelaysNoCommentAndNoOtherReceiver() throws Exception {
        TestReceiver hanging = receiver(TestReceiver.started());
        hanging.answer = n -> new TestReceiver.Answer(200, null, true);
        TestReceiver fast = receiver(TestReceiver.started());
        Outbox o = outbox();
        ExecutorService senders = Executors.newFixedThreadPool(4);
        ScheduledExecutorService later = Executors.newSingleThreadScheduledExecutor();
        try {
            postComments(o, senders, later, 1000, 50); // warm-up: the figures below compare warm runs
            long baseline = postComments(o, senders, later, 0, 50);

            queue(o, config(hanging), 1);
            o.sendQueued(senders, later);
            await("the hanging receiver to have the request", () -> hanging.inFlight() == 1);

            long withHang = postComments(o, senders, later, 50, 50);
            queue(o, config(fast), 2);
            o.sendQueued(senders, later);
            await("the other receiver to get its notification", () -> fast.requests.size() == 1);
            o.enqueue(new Effect.Comment("tick/1", 42, REPO, 99, "posted by the tick"));
            o.flush(); // the worker's tick: hands the hanging line over, posts the comment, returns
            assertTrue(github.posted.stream().anyMatch(b -> b.endsWith("posted by the tick")));

            assertEquals(1, hanging.inFlight(), "still waiting for the hanging receiver");
            assertEquals(1, hanging.requests.size());
            assertEquals(151, github.posted.size(), "every comment was posted meanwhile");
            System.out.printf("50 comments posted: %d ms with no receiver, %d ms while a receiver hangs%n",
                    baseline / 1_000_000, withHang / 1_000_000);
            hanging.release();
        } finally {
            senders.shutdownNow();
            later.shutdownNow();
        }
    }

    /** Queues {@code n} comments over five issues, hands them to the senders and waits until all are posted. */
    private long postComments(Outbox o, ExecutorService senders, ScheduledExecutorService later, int from, int n)
            throws InterruptedException {
        int before = github.posted.size();
        long start = System.nanoTime();
        for (int i = from; i < from + n; i++) {
            o.enqueue(new Effect.Comment("comment/" + i, 42, REPO, 1 + i % 5, "comment " + i));
            o.sendQueued(senders, later);
        }
        await(n + " comments to be posted", () -> github.posted.size() == before + n);
        return System.nanoTime() - start;
    }

    private static void await(String what, BooleanSupplier done) throws InterruptedException {
        long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        while (!done.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("waited 30 s for " + what);
            }
            Thread.sleep(5); // waiting for other threads' work, not for time to pass
        }
    }

    private JsonNode cli(String... args) throws Exception {
        return JSON.readTree(cliText(args));
    }

    private String cliText(String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int code = Main.run(args, new PrintWriter(out), new PrintWriter(err), Map.of("AGENTX_DATA_DIR",
                dir.toString()), dir, clock, false, c -> null);
        assertEquals(0, code, err.toString());
        assertTrue(Files.isDirectory(dir.resolve("outbox")));
        return out.toString();
    }
}
