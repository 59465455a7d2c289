package dev.agentx.clarify.github.ops;

import static com.github.tomakehurst.wiremock.client.WireMock.postRequestedFor;
import static com.github.tomakehurst.wiremock.client.WireMock.urlPathEqualTo;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.agentx.clarify.app.LocalMode;
import dev.agentx.clarify.cli.Main;
import dev.agentx.clarify.github.GitHubSettings;
import dev.agentx.clarify.github.inbox.ThreadNice;
import dev.agentx.clarify.github.support.GitHubRig;
import dev.agentx.clarify.github.support.Keys;
import dev.agentx.clarify.github.webhook.SignatureVerifier;
import dev.agentx.clarify.protocol.Ledger;
import dev.agentx.clarify.support.Jvm;
import dev.agentx.clarify.support.MutableClock;
import dev.agentx.clarify.support.ProcessLog;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code agentx serve} as a real process: deliveries posted, SIGTERM while they are being worked
 * through, a restart; every accepted delivery is processed exactly once (one ledger record and
 * one question comment per issue).
 */
class GracefulShutdownTest {
    static final int DELIVERIES = 6;
    static final Duration DEADLINE = Duration.ofSeconds(60);

    @TempDir
    Path dir;

    private Process serve(GitHubRig rig, Path stderr, boolean priorityPolicy) throws IOException {
        ProcessBuilder pb = Jvm.builder(Main.class, "serve");
        Map<String, String> env = pb.environment();
        if (priorityPolicy) {
            env.put("JAVA_TOOL_OPTIONS", "-XX:ThreadPriorityPolicy=1"); // as deploy/ and bin/agentx serve do
        } else {
            env.remove("JAVA_TOOL_OPTIONS");
        }
        env.put("GITHUB_APP_ID", String.valueOf(GitHubRig.APP_ID));
        env.put("GITHUB_APP_PRIVATE_KEY", Keys.pkcs8Pem());
        env.put("GITHUB_WEBHOOK_SECRET", GitHubRig.SECRET);
        env.put("GITHUB_API_URL", rig.wiremock.baseUrl());
        env.put("AGENTX_DATA_DIR", rig.data.toString());
        env.put("PORT", "0");
        env.put("AGENTX_MANAGEMENT_PORT", "0");
        env.remove("AGENTX_LOG_FORMAT");
        return pb.redirectErrorStream(true).redirectOutput(stderr.toFile()).start();
    }

    /** This thread's nice (Linux), which the server process started from it inherits. */
    private static int ownNice() {
        return ThreadNice.ofCurrentThread().orElseThrow();
    }

    private static void await(String what, BooleanSupplier condition) throws InterruptedException {
        ProcessLog.until(what, condition, DEADLINE);
    }

    private static int port(Path log) throws InterruptedException {
        Pattern listening = Pattern.compile("listening on http://0\\.0\\.0\\.0:(\\d+)/");
        int[] port = new int[1];
        await("the server to listen (" + log + ")", () -> {
            Matcher m = listening.matcher(read(log));
            if (m.find()) {
                port[0] = Integer.parseInt(m.group(1));
                return true;
            }
            return false;
        });
        return port[0];
    }

    private static String read(Path file) {
        return ProcessLog.read(file);
    }

    private static long count(Path dir) {
        if (!Files.isDirectory(dir)) {
            return 0;
        }
        try (Stream<Path> s = Files.list(dir)) {
            return s.filter(p -> p.getFileName().toString().endsWith(".json")).count();
        } catch (IOException e) {
            return -1;
        }
    }

    @Test
    void sigtermKeepsWhatIsInFlightAndARestartFinishesItExactlyOnce() throws Exception {
        try (GitHubRig rig = new GitHubRig(dir.resolve("data"), MutableClock.at("2026-02-26T10:00:00Z"))) {
            Path log1 = dir.resolve("serve-1.log");
            Process first = serve(rig, log1, true);
            try {
                int port = port(log1);
                for (int issue = 1; issue <= DELIVERIES; issue++) {
                    byte[] body = rig.bytes(rig.comment("eng", issue, "/clarify @architect Question " + issue + "?"));
                    GitHubRig.Response r = rig.request("POST", port, GitHubSettings.DEFAULT_PATH, body, Map.of(
                            "Content-Type", "application/json", "X-GitHub-Event", "issue_comment",
                            "X-GitHub-Delivery", rig.nextDeliveryId(),
                            "X-Hub-Signature-256", SignatureVerifier.sign(GitHubRig.SECRET, body)));
                    assertEquals(202, r.status(), r.body());
                }
                first.destroy(); // SIGTERM
                assertTrue(first.waitFor(DEADLINE.toSeconds(), TimeUnit.SECONDS), "stops on SIGTERM:\n" + read(log1));
            } finally {
                first.destroyForcibly();
            }
            assertEquals(143, first.exitValue(), read(log1));
            assertTrue(read(log1).contains("final outbox flush"), read(log1));
            assertTrue(read(log1).contains("agentx serve configuration:"), read(log1));
            if (ownNice() < 4) {
                // the JVM may lower a thread's priority without privilege: the lanes really step back
                assertTrue(read(log1).contains("lanes and senders run at nice 4, below the webhook's threads (nice "
                        + ownNice() + ")"), read(log1));
            }

            Path log2 = dir.resolve("serve-2.log");
            Process second = serve(rig, log2, false);
            try {
                int port2 = port(log2);
                await("the inbox and outbox to drain after the restart", () -> {
                    GitHubRig.Response health = rig.request("GET", port2, "/healthz", null, Map.of());
                    return health.body().contains("\"pendingDeliveries\":0,\"pendingEffects\":0");
                });
                second.destroy();
                assertTrue(second.waitFor(DEADLINE.toSeconds(), TimeUnit.SECONDS), read(log2));
                assertTrue(read(log2).contains("lanes and senders run at the webhook's priority (nice " + ownNice()
                        + "); the JVM flag -XX:ThreadPriorityPolicy=1"), read(log2));
            } finally {
                second.destroyForcibly();
            }

            LocalMode repo = LocalMode.open(GitHubRig.REPO.rootIn(rig.data), Clock.systemUTC());
            for (int issue = 1; issue <= DELIVERIES; issue++) {
                Ledger ledger = repo.ledgers().read(issue).orElseThrow();
                assertEquals(1, ledger.clarifications().size(), "issue " + issue + ": " + ledger);
                int posted = rig.wiremock.findAll(postRequestedFor(urlPathEqualTo(GitHubRig.API_REPO + "/issues/" + issue
                        + "/comments"))).size();
                assertEquals(1, posted, "one question comment on issue " + issue + "\n" + read(log1) + read(log2));
            }
            assertEquals(0, count(rig.data.resolve("inbox/failed")));
            assertEquals(0, count(rig.data.resolve("outbox/failed")));
        }
    }
}
