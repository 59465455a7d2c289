package dev.agentx.clarify.github;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.agentx.clarify.github.support.GitHubRig;
import dev.agentx.clarify.github.webhook.SignatureVerifier;
import dev.agentx.clarify.support.MutableClock;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The server (its own asynchronous worker) is stopped while a client posts signed deliveries, and
 * started again on the same data dir. The client resends what got no answer with the same
 * delivery id, as GitHub's redelivery does. Every accepted delivery is processed exactly once.
 */
class RestartUnderLoadTest {
    private static final int DELIVERIES = 150;

    @TempDir
    Path dir;
    GitHubRig rig;

    @AfterEach
    void tearDown() {
        rig.close();
    }

    private static void await(String what, Duration limit, BooleanSupplier done) {
        long deadline = System.nanoTime() + limit.toNanos();
        while (!done.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("timed out waiting for " + what);
            }
            Thread.onSpinWait();
        }
    }

    @Test
    void everyAcceptedDeliveryIsProcessedExactlyOnceAcrossARestart() throws Exception {
        rig = new GitHubRig(dir.resolve("data"), MutableClock.at("2026-02-26T10:00:00Z")).async();
        AtomicInteger port = new AtomicInteger(rig.start().port());
        Map<String, Integer> accepted = new ConcurrentHashMap<>();
        Set<String> duplicates = ConcurrentHashMap.newKeySet();
        AtomicInteger refusedConnections = new AtomicInteger();
        AtomicReference<Throwable> clientError = new AtomicReference<>();
        HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(1)).build();
        Thread client = new Thread(() -> {
            long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
            try {
                for (int issue = 1; issue <= DELIVERIES; issue++) {
                    String id = "restart-" + issue;
                    byte[] body = rig.bytes(rig.comment("eng", issue, "/clarify @architect Question " + issue + "?"));
                    while (true) {
                        if (System.nanoTime() > deadline) {
                            throw new AssertionError("the client ran out of time at delivery " + issue);
                        }
                        try {
                            HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:"
                                    + port.get() + GitHubSettings.DEFAULT_PATH)).timeout(Duration.ofSeconds(10))
                                    .header("Content-Type", "application/json").header("X-GitHub-Event", "issue_comment")
                                    .header("X-GitHub-Delivery", id)
                                    .header("X-Hub-Signature-256", SignatureVerifier.sign(GitHubRig.SECRET, body))
                                    .POST(HttpRequest.BodyPublishers.ofByteArray(body)).build(),
                                    HttpResponse.BodyHandlers.ofString());
                            if (r.statusCode() == 202) {
                                accepted.merge(id, 1, Integer::sum);
                                break;
                            }
                            if (r.statusCode() == 200) {
                                duplicates.add(id);
                                break;
                            }
                            if (r.statusCode() == 503) {
                                refusedConnections.incrementAndGet(); // shutting down gracefully: send it again
                                continue;
                            }
                            throw new AssertionError("delivery " + id + ": " + r.statusCode() + " " + r.body());
                        } catch (IOException e) {
                            refusedConnections.incrementAndGet(); // the server is down: send it again
                        }
                    }
                }
            } catch (Throwable t) {
                clientError.set(t);
            }
        }, "load-client");
        client.start();
        await("a third of the deliveries", Duration.ofSeconds(30), () -> accepted.size() >= DELIVERIES / 3
                || !client.isAlive());
        rig.mode().close();
        int acceptedBeforeStop = accepted.size();
        int leftInInbox = rig.mode().pendingDeliveries();
        port.set(rig.start().port());
        client.join(Duration.ofSeconds(70).toMillis());
        assertEquals(null, clientError.get());
        await("the inbox and outbox to empty", Duration.ofSeconds(30),
                () -> rig.mode().pendingDeliveries() == 0 && rig.mode().pendingEffects() == 0);

        Map<Integer, Integer> records = new TreeMap<>();
        List<Integer> wrong = new ArrayList<>();
        for (int issue = 1; issue <= DELIVERIES; issue++) {
            int n = rig.hasLedger(issue) ? rig.ledger(issue).clarifications().size() : 0;
            records.put(issue, n);
            int posted = rig.comments(issue).size();
            if (n != 1 || posted != 1) {
                wrong.add(issue);
            }
        }
        assertTrue(acceptedBeforeStop >= DELIVERIES / 3 && acceptedBeforeStop < DELIVERIES,
                "stopped mid-load: " + acceptedBeforeStop);
        assertTrue(accepted.values().stream().allMatch(c -> c == 1), "a delivery id is accepted once");
        assertEquals(DELIVERIES, accepted.size() + duplicates.size());
        assertEquals(List.of(), wrong, "each delivery: one record and one comment; records " + records);
        System.out.printf("restart under load: %d deliveries, %d accepted before the stop (%d still in the inbox),"
                + " %d resent after a refused connection, %d answered 200 as already received%n", DELIVERIES,
                acceptedBeforeStop, leftInInbox, refusedConnections.get(), duplicates.size());
    }
}
