package dev.agentx.clarify.reliability;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.agentx.clarify.github.GitHubSettings;
import dev.agentx.clarify.github.support.GitHubRig;
import dev.agentx.clarify.github.webhook.SignatureVerifier;
import dev.agentx.clarify.support.MutableClock;
import dev.agentx.clarify.support.ProcessLog;
import dev.agentx.clarify.support.TestReceiver;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code agentx serve} as a real process is killed (SIGKILL) after a change was committed and
 * before its notification reached the receiver: after the restart the receiver gets it, once. And
 * killed while the notification's POST was on its way: after the restart it is sent again with the
 * same {@code X-AgentX-Delivery}, by which the receiver knows it for the same notification.
 */
class NotificationCrashTest {
    private static final Duration DEADLINE = Duration.ofSeconds(60);

    @TempDir
    Path dir;

    private static GitHubRig rig(Path data, TestReceiver receiver) {
        GitHubRig rig = new GitHubRig(data, MutableClock.at("2026-02-26T10:00:00Z"));
        rig.writeConfig(GitHubRig.CONFIG + """
                [[notify]]
                url = "%s"
                secret = "s3cret"
                allow_private = true
                """.formatted(receiver.url()));
        return rig;
    }

    private static void ask(GitHubRig rig, int port) {
        byte[] body = rig.bytes(rig.comment("eng", 1, "/clarify @architect JWT or sessions?"));
        GitHubRig.Response r = rig.request("POST", port, GitHubSettings.DEFAULT_PATH, body, Map.of(
                "Content-Type", "application/json", "X-GitHub-Event", "issue_comment", "X-GitHub-Delivery", "d-1",
                "X-Hub-Signature-256", SignatureVerifier.sign(GitHubRig.SECRET, body)));
        assertEquals(202, r.status(), r.body());
    }

    @Test
    void aNotificationNotYetReceivedAtTheKillIsSentOnceAfterTheRestart() throws Exception {
        try (TestReceiver receiver = TestReceiver.down(); GitHubRig rig = rig(dir.resolve("data"), receiver)) {
            Path log1 = dir.resolve("serve-1.log");
            Process first = rig.serveProcess(log1);
            try {
                ask(rig, port(log1));
                // the question is committed and its comment posted; the receiver is down: its notification waits
                await("the notification's first attempt to fail", () -> read(log1).contains("failed (attempt 1)"));
                first.toHandle().destroyForcibly(); // SIGKILL
                assertTrue(first.waitFor(DEADLINE.toSeconds(), TimeUnit.SECONDS));
            } finally {
                first.destroyForcibly();
            }
            assertEquals(List.of(), receiver.requests);

            receiver.start();
            Path log2 = dir.resolve("serve-2.log");
            Process second = rig.serveProcess(log2);
            try {
                int port2 = port(log2);
                await("the receiver to get the notification", () -> receiver.requests.size() >= 1);
                await("the outbox to drain", () -> rig.request("GET", port2, "/healthz", null, Map.of()).body()
                        .contains("\"pendingEffects\":0"));
            } finally {
                second.destroy();
                second.waitFor(DEADLINE.toSeconds(), TimeUnit.SECONDS);
                second.destroyForcibly();
            }
            assertEquals(1, receiver.requests.size(), "once: " + receiver.deliveries() + "\n" + read(log2));
            assertEquals("asked", receiver.requests.get(0).header("X-AgentX-Event"));
        }
    }

    @Test
    void aNotificationWhosePostWasCutShortByAKillIsSentAgainWithTheSameDeliveryId() throws Exception {
        try (TestReceiver receiver = TestReceiver.started(); GitHubRig rig = rig(dir.resolve("data"), receiver)) {
            receiver.answer = n -> n == 0 ? new TestReceiver.Answer(200, null, true) : TestReceiver.Answer.ok();
            Path log1 = dir.resolve("serve-1.log");
            Process first = rig.serveProcess(log1);
            try {
                ask(rig, port(log1));
                await("the notification's POST to reach the receiver", () -> receiver.inFlight() == 1);
                first.toHandle().destroyForcibly(); // SIGKILL while the receiver holds the request
                assertTrue(first.waitFor(DEADLINE.toSeconds(), TimeUnit.SECONDS));
            } finally {
                first.destroyForcibly();
                receiver.release();
            }
            Path log2 = dir.resolve("serve-2.log");
            Process second = rig.serveProcess(log2);
            try {
                int port2 = port(log2);
                await("the notification to be sent again", () -> receiver.requests.size() >= 2);
                await("the outbox to drain", () -> rig.request("GET", port2, "/healthz", null, Map.of()).body()
                        .contains("\"pendingEffects\":0"));
            } finally {
                second.destroy();
                second.waitFor(DEADLINE.toSeconds(), TimeUnit.SECONDS);
                second.destroyForcibly();
            }
            assertEquals(2, receiver.requests.size(), read(log2));
            assertEquals(1, receiver.deliveries().stream().distinct().count(), "the same notification: "
                    + receiver.deliveries());
            assertEquals(receiver.requests.get(0).text(), receiver.requests.get(1).text());
        }
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

    private static void await(String what, BooleanSupplier condition) throws InterruptedException {
        ProcessLog.until(what, condition, DEADLINE);
    }

    private static String read(Path file) {
        return ProcessLog.read(file);
    }
}
