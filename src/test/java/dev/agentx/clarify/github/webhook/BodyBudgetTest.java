package dev.agentx.clarify.github.webhook;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.agentx.clarify.github.GitHubSettings;
import dev.agentx.clarify.github.inbox.Worker;
import dev.agentx.clarify.github.outbox.Outbox;
import dev.agentx.clarify.github.support.GitHubRig;
import dev.agentx.clarify.metrics.ServerMetrics;
import dev.agentx.clarify.store.files.FileDeliveryQueue;
import dev.agentx.clarify.support.MutableClock;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A body is read whole before its signature can be checked, so anyone can make the server hold
 * bodies: a request whose body would take the bodies being read over the budget is answered 503
 * before its body is read, and is taken once the others are done.
 */
class BodyBudgetTest {
    @TempDir
    Path dir;

    @Test
    void aBodyThatWouldGoOverTheBudgetIsRefusedUntilTheOthersAreRead() throws Exception {
        MutableClock clock = MutableClock.at("2026-03-01T10:00:00Z");
        FileDeliveryQueue inbox = new FileDeliveryQueue(dir.resolve("inbox"), clock);
        ServerMetrics metrics = ServerMetrics.create();
        Outbox outbox = new Outbox(dir.resolve("outbox"), null, clock, metrics);
        Worker worker = new Worker(inbox, null, outbox, clock, false, metrics);
        WebhookServer server = new WebhookServer(GitHubSettings.DEFAULT_PATH, 1000, new SignatureVerifier(List.of(
                GitHubRig.SECRET.getBytes())), inbox, outbox, worker, metrics).bodyBudget(1500);
        server.start("127.0.0.1", 0);
        try (Socket slow = new Socket("127.0.0.1", server.port())) {
            slow.setSoTimeout(10_000);
            byte[] first = body(1000);
            OutputStream out = slow.getOutputStream();
            out.write(head("slow-1", first).getBytes(StandardCharsets.US_ASCII));
            out.write(first, 0, 10); // the rest of the body is still to come
            out.flush();
            for (int i = 0; i < 500 && server.bodyBytesInUse() == 0; i++) {
                Thread.sleep(10); // until the server has taken the first body's share and is reading it
            }
            assertEquals(1000, server.bodyBytesInUse());

            byte[] second = body(600);
            assertTrue(send(server.port(), "over-1", second).startsWith("HTTP/1.1 503"), "600 more bytes go over 1,500");
            assertTrue(inbox.queued().isEmpty(), "nothing acknowledged");
            assertTrue(send(server.port(), "fits-1", body(400)).startsWith("HTTP/1.1 202"), "400 more fit");

            out.write(first, 10, first.length - 10);
            out.flush();
            String answer = new String(slow.getInputStream().readNBytes(12), StandardCharsets.US_ASCII);
            assertTrue(answer.startsWith("HTTP/1.1 202"), answer);
        }
        for (int i = 0; i < 500 && server.bodyBytesInUse() > 0; i++) {
            Thread.sleep(10);
        }
        assertEquals(0, server.bodyBytesInUse(), "every share given back");
        try {
            assertTrue(send(server.port(), "over-1", body(600)).startsWith("HTTP/1.1 202"), "taken once there is room");
            assertEquals(3, inbox.queued().size());
        } finally {
            server.close();
        }
    }

    @Test
    void theDefaultBudgetIsAnEighthOfTheHeapAndAtLeastOneLargestBody() {
        long mib = 1024 * 1024;
        assertEquals(48 * mib, WebhookServer.defaultBodyBudget(25 * mib, 384 * mib));
        assertEquals(25 * mib, WebhookServer.defaultBodyBudget(25 * mib, 64 * mib));
    }

    /** A JSON object of exactly {@code size} bytes. */
    private static byte[] body(int size) {
        byte[] b = new byte[size];
        Arrays.fill(b, (byte) ' ');
        b[0] = '{';
        b[size - 1] = '}';
        return b;
    }

    private static String head(String delivery, byte[] body) {
        return "POST " + GitHubSettings.DEFAULT_PATH + " HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                + "Content-Type: application/json\r\nX-GitHub-Event: ping\r\nX-GitHub-Delivery: " + delivery + "\r\n"
                + "X-Hub-Signature-256: " + SignatureVerifier.sign(GitHubRig.SECRET, body) + "\r\n"
                + "Content-Length: " + body.length + "\r\nConnection: close\r\n\r\n";
    }

    /** The status line (and what follows) of one whole request. */
    private static String send(int port, String delivery, byte[] body) throws Exception {
        try (Socket s = new Socket("127.0.0.1", port)) {
            s.setSoTimeout(10_000);
            s.getOutputStream().write(head(delivery, body).getBytes(StandardCharsets.US_ASCII));
            s.getOutputStream().write(body);
            s.getOutputStream().flush();
            InputStream in = s.getInputStream();
            return new String(in.readNBytes(12), StandardCharsets.US_ASCII);
        }
    }
}
