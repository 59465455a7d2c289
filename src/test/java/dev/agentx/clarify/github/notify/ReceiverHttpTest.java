package dev.agentx.clarify.github.notify;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.agentx.clarify.support.TestReceiver;
import java.io.IOException;
import java.net.InetAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The notifications' HTTP client against a real receiver: the address checked after DNS is the one
 * connected to, a non-public one is refused unless allowed (nothing reaches the receiver),
 * redirects are not followed, a receiver that does not answer is cut off.
 */
class ReceiverHttpTest {
    private final TestReceiver receiver = TestReceiver.started();
    private final List<String> lookedUp = new CopyOnWriteArrayList<>();

    @AfterEach
    void stop() {
        receiver.close();
    }

    /** A client whose DNS answers {@code address} for every name, counting the look-ups. */
    private ReceiverHttp client(String address) {
        return new ReceiverHttp(Duration.ofSeconds(2), Duration.ofMillis(500), Duration.ofSeconds(3), host -> {
            lookedUp.add(host);
            return new InetAddress[] {InetAddress.getByName(address)};
        });
    }

    private static final byte[] BODY = "{\"version\":1}".getBytes(StandardCharsets.UTF_8);

    @Test
    void aLoopbackReceiverIsRefusedUnlessAllowedAndNothingReachesIt() throws Exception {
        try (ReceiverHttp http = client("127.0.0.1")) {
            String url = "http://receiver.example:" + receiver.port() + "/hook?x=1";
            ReceiverHttp.Refused refused = assertThrows(ReceiverHttp.Refused.class,
                    () -> http.post(url, false, Map.of(), BODY));
            assertTrue(refused.getMessage().contains("resolves to 127.0.0.1, a loopback address"), refused.getMessage());
            assertEquals(List.of(), receiver.requests);

            ReceiverHttp.Answer a = http.post(url, true, Map.of("X-AgentX-Event", "asked"), BODY);
            assertEquals(204, a.status());
            TestReceiver.Request r = receiver.requests.get(0);
            assertEquals("/hook?x=1", r.path());
            assertEquals("receiver.example:" + receiver.port(), r.header("Host"), "the name, sent to the checked address");
            assertEquals("asked", r.header("X-AgentX-Event"));
            assertEquals("application/json; charset=UTF-8", r.header("Content-Type"));
            assertEquals("{\"version\":1}", r.text());
            assertEquals(List.of("receiver.example", "receiver.example"), lookedUp, "one look-up per attempt");
        }
    }

    @Test
    void aMetadataAddressBehindANameIsRefused() throws Exception {
        try (ReceiverHttp http = client("169.254.169.254")) {
            ReceiverHttp.Refused refused = assertThrows(ReceiverHttp.Refused.class,
                    () -> http.post("http://metadata.example/latest/meta-data/", false, Map.of(), BODY));
            assertTrue(refused.getMessage().contains("169.254.169.254, a link-local address"), refused.getMessage());
        }
        try (ReceiverHttp http = client("::ffff:169.254.169.254")) {
            assertThrows(ReceiverHttp.Refused.class, () -> http.post("http://x.example/", false, Map.of(), BODY));
        }
        try (ReceiverHttp http = ReceiverHttp.standard()) {
            assertThrows(ReceiverHttp.Refused.class, () -> http.post("http://localhost:" + receiver.port() + "/", false,
                    Map.of(), BODY), "localhost resolves to loopback");
            assertThrows(ReceiverHttp.Refused.class, () -> http.post("http://[::1]:" + receiver.port() + "/", false,
                    Map.of(), BODY));
            assertThrows(ReceiverHttp.Refused.class, () -> http.post(receiver.url(), false, Map.of(), BODY));
        }
        assertEquals(List.of(), receiver.requests);
    }

    @Test
    void aRedirectIsAnsweredNotFollowed() throws Exception {
        receiver.answer = n -> new TestReceiver.Answer(302, null, false);
        try (ReceiverHttp http = client("127.0.0.1")) {
            assertEquals(302, http.post(receiver.url(), true, Map.of(), BODY).status());
        }
        assertEquals(1, receiver.requests.size());
    }

    @Test
    void aReceiverThatDoesNotAnswerIsCutOffAndOneThatIsDownRefusesTheConnection() throws Exception {
        receiver.answer = n -> new TestReceiver.Answer(200, null, true);
        try (ReceiverHttp http = client("127.0.0.1")) {
            IOException e = assertThrows(IOException.class, () -> http.post(receiver.url(), true, Map.of(), BODY));
            assertTrue(!(e instanceof ReceiverHttp.Refused), e.toString());
            receiver.release();
            receiver.stop();
            assertThrows(IOException.class, () -> http.post(receiver.url(), true, Map.of(), BODY));
        }
    }

    @Test
    void aFailuresRetryAfterAndTheStartOfItsBodyAreRead() throws Exception {
        receiver.answer = n -> new TestReceiver.Answer(429, "30", false);
        try (ReceiverHttp http = client("127.0.0.1")) {
            ReceiverHttp.Answer a = http.post(receiver.url(), true, Map.of(), BODY);
            assertEquals(429, a.status());
            assertEquals("30", a.retryAfter());
            assertEquals("answer 429", a.body());
        }
    }
}
