package dev.agentx.clarify.github;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.agentx.clarify.github.handlers.DeliveryHandler;
import dev.agentx.clarify.github.support.GitHubRig;
import dev.agentx.clarify.github.webhook.SignatureVerifier;
import dev.agentx.clarify.support.MutableClock;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Hostile and broken webhook requests: each gets its documented status or reply, the server stays
 * up ({@code GET /healthz} after each), and a refused request writes nothing under the data dir.
 */
class WebhookAbuseTest {
    private static final long LIMIT = 1024 * 1024;

    @TempDir
    Path dir;
    GitHubRig rig;
    int cases;

    @BeforeEach
    void setUp() {
        rig = new GitHubRig(dir.resolve("data"), MutableClock.at("2026-02-26T10:00:00Z")).maxBody(LIMIT);
        rig.start();
    }

    @AfterEach
    void tearDown() {
        try {
            String metrics = rig.metrics();
            assertTrue(metrics.contains("\nagentx_webhook_requests_in_flight 0.0\n"), "every request, refused or not, "
                    + "was counted out again, so the worker is not held back: " + metrics);
        } finally {
            rig.close();
        }
    }

    /** Every file under the data dir with its size: what "nothing written" is checked against. */
    private Map<String, Long> files() {
        try (Stream<Path> s = Files.walk(rig.data)) {
            Map<String, Long> out = new TreeMap<>();
            s.forEach(p -> {
                try {
                    out.put(rig.data.relativize(p).toString(), Files.isDirectory(p) ? -1 : Files.size(p));
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            });
            return out;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private void healthy() {
        GitHubRig.Response h = rig.request("GET", rig.mode().port(), "/healthz", null, Map.of());
        assertEquals(200, h.status(), h.body());
        assertTrue(h.body().contains("\"status\":\"ok\""), h.body());
    }

    private static Map<String, String> headers(String event, String delivery, String signature) {
        Map<String, String> h = new HashMap<>();
        h.put("Content-Type", "application/json");
        if (event != null) {
            h.put("X-GitHub-Event", event);
        }
        if (delivery != null) {
            h.put("X-GitHub-Delivery", delivery);
        }
        if (signature != null) {
            h.put("X-Hub-Signature-256", signature);
        }
        return h;
    }

    /** Sends a refused request: its status, a live server after it, and no file added or changed. */
    private GitHubRig.Response refused(int status, byte[] body, Map<String, String> headers) {
        Map<String, Long> before = files();
        int requests = rig.allRequests();
        GitHubRig.Response r = rig.send("POST", body, headers);
        assertEquals(status, r.status(), r.body());
        healthy();
        assertEquals(before, files(), "nothing written for a refused request");
        assertEquals(requests, rig.allRequests(), "no GitHub call for a refused request");
        cases++;
        return r;
    }

    private GitHubRig.Response refusedSigned(int status, byte[] body) {
        return refused(status, body, headers("issue_comment", rig.nextDeliveryId(),
                SignatureVerifier.sign(GitHubRig.SECRET, body)));
    }

    private byte[] comment(String text) {
        return rig.bytes(rig.comment("eng", 1, text));
    }

    @Test
    void wrongMissingAndTruncatedSignaturesGet401() {
        byte[] body = comment("/clarify @architect Q?");
        String good = SignatureVerifier.sign(GitHubRig.SECRET, body);
        String id = rig.nextDeliveryId();
        refused(401, body, headers("issue_comment", id, SignatureVerifier.sign("not-the-secret", body)));
        refused(401, body, headers("issue_comment", id, null));
        refused(401, body, headers("issue_comment", id, ""));
        refused(401, body, headers("issue_comment", id, good.substring(0, good.length() - 1)));
        refused(401, body, headers("issue_comment", id, good.substring(0, 20)));
        refused(401, body, headers("issue_comment", id, "sha256="));
        refused(401, body, headers("issue_comment", id, good.substring("sha256=".length())));
        refused(401, body, headers("issue_comment", id, good.replace("sha256=", "sha1=")));
        refused(401, body, headers("issue_comment", id, good.toUpperCase(java.util.Locale.ROOT)));
        refused(401, body, headers("issue_comment", id, good + "00"));
        // the signature of the full body over a truncated body
        refused(401, Arrays.copyOf(body, body.length - 10), headers("issue_comment", id, good));
        // the signature of a truncated body over the full one
        refused(401, body, headers("issue_comment", id, SignatureVerifier.sign(GitHubRig.SECRET,
                Arrays.copyOf(body, body.length - 1))));
        // after all that the same delivery, signed, is still new
        assertEquals(202, rig.send("POST", body, headers("issue_comment", id, good)).status());
        assertEquals(1, rig.ledger(1).clarifications().size());
    }

    @Test
    void malformedHeadersAreRefusedWithoutWriting() {
        byte[] body = comment("/clarify @architect Q?");
        String sig = SignatureVerifier.sign(GitHubRig.SECRET, body);
        refused(400, body, headers("issue_comment", "../../etc/passwd", sig));
        refused(400, body, headers("issue_comment", "x".repeat(101), sig));
        refused(400, body, headers("ISSUE_COMMENT", rig.nextDeliveryId(), sig));
        refused(400, body, headers("issue comment", rig.nextDeliveryId(), sig));
        Map<String, String> form = headers("issue_comment", rig.nextDeliveryId(), sig);
        form.put("Content-Type", "text/plain");
        refused(415, body, form);
    }

    @Test
    void everyEventNameGitHubSendsIsAcknowledgedDigitsIncluded() {
        for (String event : new String[] {"projects_v2_item", "projects_v2", "projects_v2_status_update",
                "security_advisory", "check_run"}) {
            byte[] body = ("{\"action\":\"edited\",\"" + event + "\":{\"id\":1},\"sender\":{\"login\":\"octocat\"}}")
                    .getBytes(java.nio.charset.StandardCharsets.UTF_8);
            GitHubRig.Response r = rig.send("POST", body, headers(event, rig.nextDeliveryId(),
                    SignatureVerifier.sign(GitHubRig.SECRET, body)));
            assertEquals(202, r.status(), event + ": " + r.body());
        }
        refused(400, comment("/clarify @architect Q?"), headers("2fa_event", rig.nextDeliveryId(),
                SignatureVerifier.sign(GitHubRig.SECRET, comment("/clarify @architect Q?"))));
        healthy();
    }

    @Test
    void anIssueNumberOutOfRangeIsNeverNarrowedOntoAnotherIssue() {
        for (String number : new String[] {"4294967303", "9223372036854775808", "7.5", "-7", "\"7\""}) {
            com.fasterxml.jackson.databind.node.ObjectNode p = rig.comment("eng", 7, "/clarify @architect Which DB?");
            String body = p.toString().replace("\"number\":7", "\"number\":" + number);
            assertTrue(body.contains("\"number\":" + number), body.substring(0, 200));
            byte[] bytes = body.getBytes(java.nio.charset.StandardCharsets.UTF_8);
            GitHubRig.Response r = rig.send("POST", bytes, headers("issue_comment", rig.nextDeliveryId(),
                    SignatureVerifier.sign(GitHubRig.SECRET, bytes)));
            assertEquals(400, r.status(), number + ": " + r.body());
            assertTrue(r.body().contains("issue.number"), r.body());
        }
        for (int issue : new int[] {7, 1, 1073741824, Integer.MAX_VALUE}) {
            assertFalse(rig.hasLedger(issue), "nothing written for issue " + issue);
            assertEquals(0, rig.comments(issue).size());
        }
        healthy();
    }

    @Test
    void aMalformedChunkedBodyIsTheClientsFault() throws Exception {
        for (String chunks : new String[] {"ZZZ\r\n{}\r\n0\r\n\r\n", "5\r\n{}\r\n0\r\n\r\n",
                "2\r\n{}XX0\r\n\r\n"}) {
            try (java.net.Socket socket = new java.net.Socket("127.0.0.1", rig.mode().port())) {
                socket.setSoTimeout(10_000);
                String request = "POST " + GitHubSettings.DEFAULT_PATH + " HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                        + "Content-Type: application/json\r\nX-GitHub-Event: ping\r\nX-GitHub-Delivery: "
                        + rig.nextDeliveryId() + "\r\nX-Hub-Signature-256: sha256=00\r\nTransfer-Encoding: chunked\r\n"
                        + "Connection: close\r\n\r\n" + chunks;
                socket.getOutputStream().write(request.getBytes(java.nio.charset.StandardCharsets.US_ASCII));
                socket.getOutputStream().flush();
                String status = new String(socket.getInputStream().readNBytes(12), java.nio.charset.StandardCharsets.US_ASCII);
                assertTrue(status.startsWith("HTTP/1.1 4"), "a client error, not " + status + " for " + chunks.replace("\r\n", "|"));
            }
        }
        healthy();
    }

    /**
     * The worker steps back while signed deliveries queue up ({@code AckPriority}); clients that
     * send their bodies slowly, or unsigned requests, are not counted, so they cannot stop it.
     */
    @Test
    void bodiesSentSlowlyDoNotHoldTheWorkerBack() throws Exception {
        java.util.List<java.net.Socket> slow = new java.util.ArrayList<>();
        try {
            for (int i = 0; i < 3; i++) {
                java.net.Socket socket = new java.net.Socket("127.0.0.1", rig.mode().port());
                slow.add(socket);
                String request = "POST " + GitHubSettings.DEFAULT_PATH + " HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                        + "Content-Type: application/json\r\nX-GitHub-Event: issue_comment\r\nX-GitHub-Delivery: "
                        + rig.nextDeliveryId() + "\r\nX-Hub-Signature-256: sha256=00\r\nContent-Length: 1000\r\n\r\n"
                        + "{\"action\":";
                socket.getOutputStream().write(request.getBytes(StandardCharsets.US_ASCII));
                socket.getOutputStream().flush();
            }
            awaitThreadsReadingBodies(3);
            String metrics = rig.metrics();
            assertTrue(metrics.contains("\nagentx_webhook_requests_in_flight 0.0\n"), metrics);
            assertTrue(metrics.contains("\nagentx_worker_lanes_allowed 12.0\n"), "every lane may work: " + metrics);
        } finally {
            for (java.net.Socket socket : slow) {
                socket.close(); // the bodies end early: 400s, counted out
            }
        }
        healthy();
    }

    /** Waits until {@code n} of the server's threads wait for the rest of a request's body. */
    private static void awaitThreadsReadingBodies(int n) {
        long deadline = System.nanoTime() + java.time.Duration.ofSeconds(30).toNanos();
        while (true) {
            long reading = Thread.getAllStackTraces().values().stream()
                    .filter(stack -> Arrays.stream(stack).anyMatch(f -> f.getMethodName().equals("bodyAsBytes")))
                    .count();
            if (reading >= n) {
                return;
            }
            assertTrue(System.nanoTime() < deadline, reading + " of " + n + " requests are reading their bodies");
            java.util.concurrent.locks.LockSupport.parkNanos(1_000_000);
        }
    }

    @Test
    void bodiesOverTheLimitGet413WithAndWithoutContentLength() throws Exception {
        assertEquals(25L * 1024 * 1024, GitHubSettings.MAX_BODY_BYTES, "the documented default: GitHub's own cap");
        byte[] big = new byte[(int) LIMIT + 1];
        Arrays.fill(big, (byte) ' ');
        big[0] = '{';
        big[big.length - 1] = '}';
        String sig = SignatureVerifier.sign(GitHubRig.SECRET, big);
        // The server answers 413 from the Content-Length without reading the body and then closes
        // the connection; a client still writing the body can see the close (a reset) before it
        // reads the answer. That race is HTTP's, not the server's: up to 3 tries to read the 413.
        for (int attempt = 1; ; attempt++) {
            try {
                refused(413, big, headers("issue_comment", rig.nextDeliveryId(), sig));
                break;
            } catch (java.io.UncheckedIOException e) {
                if (attempt == 3) {
                    throw e;
                }
                healthy();
            }
        }

        // chunked: no Content-Length, the limit applies while reading
        Map<String, Long> before = files();
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + rig.mode().port()
                + GitHubSettings.DEFAULT_PATH)).POST(HttpRequest.BodyPublishers.ofInputStream(
                        () -> new ByteArrayInputStream(big)));
        headers("issue_comment", rig.nextDeliveryId(), sig).forEach(b::header);
        HttpResponse<String> r = HttpClient.newHttpClient().send(b.build(), HttpResponse.BodyHandlers.ofString());
        assertEquals(413, r.statusCode(), r.body());
        healthy();
        assertEquals(before, files());

        // exactly at the limit passes the size check
        byte[] edge = Arrays.copyOf(big, (int) LIMIT);
        edge[edge.length - 1] = '}';
        assertEquals(202, rig.send("POST", edge, headers("ping", rig.nextDeliveryId(),
                SignatureVerifier.sign(GitHubRig.SECRET, edge))).status());
        healthy();
    }

    @Test
    void invalidUtf8AndInvalidJsonGet400() {
        byte[] text = "{\"action\":\"created\",\"zen\":\"XX\"}".getBytes(StandardCharsets.US_ASCII);
        byte[] lone = text.clone();
        lone[text.length - 4] = (byte) 0xFF;
        refusedSigned(400, lone);
        byte[] cut = text.clone();
        cut[text.length - 4] = (byte) 0xC3; // a two-byte sequence whose second byte is '"'... then 'X'
        cut[text.length - 3] = (byte) 'X';
        refusedSigned(400, cut);
        byte[] overlong = text.clone();
        overlong[text.length - 4] = (byte) 0xC0;
        overlong[text.length - 3] = (byte) 0xAF;
        refusedSigned(400, overlong);
        for (String junk : new String[] {"", " ", "{", "}", "{not json", "null", "[]", "[{}]", "\"text\"", "42",
                "true", "{\"a\":1,}", "{\"a\":1} {\"b\":2}", "{}garbage", "{\"a\":\"\\u12\"}", "\u0000{}"}) {
            refusedSigned(400, junk.getBytes(StandardCharsets.UTF_8));
        }
    }

    @Test
    void deeplyNestedJsonIsRefusedWithoutBlowingTheStack() {
        int depth = 100_000;
        refusedSigned(400, ("[".repeat(depth) + "]".repeat(depth)).getBytes(StandardCharsets.US_ASCII));
        refusedSigned(400, ("{\"a\":".repeat(depth) + "1" + "}".repeat(depth)).getBytes(StandardCharsets.US_ASCII));
        refusedSigned(400, ("{\"a\":".repeat(depth)).getBytes(StandardCharsets.US_ASCII));
        // a nesting within the parser's limit (1000) inside a real payload is accepted and processed
        ObjectNode p = rig.comment("eng", 1, "/clarify @architect Q?");
        p.put("extra", "x");
        ObjectNode deep = p.putObject("nested");
        for (int i = 0; i < 500; i++) {
            deep = deep.putObject("n");
        }
        assertEquals(202, rig.deliver("issue_comment", p).status());
        assertEquals(1, rig.ledger(1).clarifications().size());
        healthy();
    }

    @Test
    void unknownEventsAndActionsAreAcknowledgedAndIgnored() {
        ObjectNode c = rig.comment("eng", 1, "/clarify @architect Q?");
        for (String event : new String[] {"fork", "star", "workflow_run", "no_such_event", "pull_request"}) {
            assertEquals(202, rig.deliver(event, c).status(), event);
            healthy();
        }
        for (String action : new String[] {"edited", "deleted", "pinned", "", "no-such-action"}) {
            ObjectNode a = rig.comment("eng", 1, "/clarify @architect Q?");
            a.put("action", action);
            assertEquals(202, rig.deliver("issue_comment", a).status(), action);
            ObjectNode i = rig.issueEvent(action.isEmpty() ? "transferred" : action, "eng", 1);
            ((ObjectNode) i.get("issue")).put("body", "/clarify @architect Q?");
            assertEquals(202, rig.deliver("issues", i).status(), action);
            healthy();
        }
        ObjectNode noAction = rig.comment("eng", 1, "/clarify @architect Q?");
        noAction.remove("action");
        assertEquals(202, rig.deliver("issue_comment", noAction).status());
        ObjectNode wrongTypes = rig.json.createObjectNode();
        wrongTypes.put("action", "created").put("installation", "seven").putArray("issue").add(1);
        wrongTypes.putObject("comment").putArray("body").add("/clarify @architect Q?");
        assertEquals(400, rig.deliver("issue_comment", wrongTypes).status(), "an installation that is no object with "
                + "an id is refused: nothing could act on it");
        wrongTypes.remove("installation");
        assertEquals(202, rig.deliver("issue_comment", wrongTypes).status(), "other odd shapes are acknowledged, ignored");
        healthy();
        assertFalse(rig.hasLedger(1), "no unknown event or action ran a command");
        assertEquals(0, rig.comments(1).size());
        assertEquals(0, rig.reactions().size());
        assertEquals(0, rig.mode().pendingDeliveries(), "all of them were processed, none is stuck");
    }

    @Test
    void replayedDeliveriesGet200AndNoSecondEffect() {
        String id = rig.nextDeliveryId();
        ObjectNode c = rig.comment("eng", 1, "/clarify @architect Q?");
        assertEquals(202, rig.deliver("issue_comment", c, id).status());
        int requests = rig.allRequests();
        Map<String, Long> before = files();
        for (int i = 0; i < 20; i++) {
            assertEquals(200, rig.deliver("issue_comment", c, id).status());
        }
        // the same id with another, validly signed body is a replay too
        assertEquals(200, rig.deliver("issue_comment", rig.comment("eng", 1, "/clarify @pm Other?"), id).status());
        // and with a bad signature it is refused before the replay check
        refused(401, comment("/clarify @pm x"), headers("issue_comment", id, "sha256=00"));
        healthy();
        assertEquals(before, files(), "a replay writes nothing");
        assertEquals(requests, rig.allRequests());
        assertEquals(1, rig.ledger(1).clarifications().size());
        assertEquals(1, rig.comments(1).size());
    }

    /**
     * The signature covers the body only: whoever holds one signed body (a proxy's log, a copied
     * request) can send it again under a new X-GitHub-Delivery, at any time. A comment is created
     * once, so its commands are keyed by the comment: the copy is acknowledged and changes nothing.
     */
    @Test
    void aCommentDeliveredAgainUnderANewIdIsCarriedOutOnce() {
        ObjectNode c = rig.comment("eng", 1, "/clarify @architect Q?");
        assertEquals(202, rig.deliver("issue_comment", c, rig.nextDeliveryId()).status());
        int posted = rig.comments(1).size();
        for (int i = 0; i < 3; i++) {
            assertEquals(202, rig.deliver("issue_comment", c, rig.nextDeliveryId()).status());
        }
        healthy();
        assertEquals(1, rig.ledger(1).clarifications().size(), "one clarification for one comment");
        assertEquals(posted, rig.comments(1).size(), "nothing posted again: " + rig.comments(1));

        ObjectNode opened = rig.fixture("issues.opened");
        ((ObjectNode) opened.get("issue")).put("number", 2).put("body", "/clarify @architect From the issue?");
        ((ObjectNode) opened.get("issue").get("user")).put("login", "eng");
        ((ObjectNode) opened.get("sender")).put("login", "eng");
        opened.set("installation", rig.comment("eng", 2, "x").get("installation"));
        assertEquals(202, rig.deliver("issues", opened, rig.nextDeliveryId()).status());
        assertEquals(202, rig.deliver("issues", opened, rig.nextDeliveryId()).status());
        assertEquals(1, rig.ledger(2).clarifications().size(), "an issue is opened once");
    }

    @Test
    void aSeventyThousandCharacterQuestionIsRefusedWithAReplyGitHubAccepts() {
        String question = "Which of these ".repeat(4_667).substring(0, 70_000);
        assertEquals(202, rig.deliver("issue_comment", rig.comment("eng", 1, "/clarify @architect " + question))
                .status());
        assertEquals(1, rig.comments(1).size());
        String reply = rig.comments(1).get(0);
        assertTrue(reply.length() <= 65_536, "GitHub takes at most 65,536 characters; the reply has " + reply.length());
        assertTrue(reply.contains("2000"), "says why: " + reply.substring(0, Math.min(600, reply.length())));
        assertTrue(reply.contains("more characters not shown"), "says what was cut");
        assertTrue(reply.length() < 5_000, "the command is quoted in part, not whole: " + reply.length());
        assertFalse(rig.hasLedger(1) && !rig.ledger(1).clarifications().isEmpty(), "nothing asked");
        healthy();
    }

    @Test
    void thousandsOfLinesInACommentAreHandled() {
        String lines = "text line\n".repeat(5000);
        assertEquals(202, rig.deliver("issue_comment", rig.comment("eng", 1, lines)).status());
        assertFalse(rig.hasLedger(1), "no command, nothing done");
        assertEquals(0, rig.comments(1).size());
        // one command whose question runs over 5000 lines: over the text limit, refused with a reply
        assertEquals(202, rig.deliver("issue_comment", rig.comment("eng", 1, "/clarify @architect Q?\n" + lines))
                .status());
        assertEquals(1, rig.comments(1).size());
        assertTrue(rig.comments(1).get(0).contains("2000"), rig.comments(1).get(0));
        assertFalse(rig.hasLedger(1) && !rig.ledger(1).clarifications().isEmpty());
        healthy();
    }

    @Test
    void thousandsOfCommandsGetOneReplyAndNoneIsCarriedOut() {
        String many = "/clarify @architect Q?\n".repeat(3000);
        assertEquals(202, rig.deliver("issue_comment", rig.comment("eng", 1, many)).status());
        assertFalse(rig.hasLedger(1) && !rig.ledger(1).clarifications().isEmpty(), "none carried out");
        assertEquals(1, rig.comments(1).size(), "one reply, not 3000");
        assertTrue(rig.comments(1).get(0).contains("3000 `/clarify` commands; at most "
                + DeliveryHandler.MAX_COMMANDS), rig.comments(1).get(0));
        assertEquals(1, rig.reactions().size());
        assertTrue(rig.reactions().get(0).contains("confused"), rig.reactions().get(0));
        healthy();

        // exactly at the limit all of them run
        String limit = "/clarify @architect --non-blocking Q?\n".repeat(DeliveryHandler.MAX_COMMANDS);
        assertEquals(202, rig.deliver("issue_comment", rig.comment("eng", 2, limit)).status());
        assertEquals(DeliveryHandler.MAX_COMMANDS, rig.ledger(2).clarifications().size());
        healthy();
    }
}
