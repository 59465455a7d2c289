package dev.agentx.clarify.github;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.agentx.clarify.github.support.GitHubRig;
import dev.agentx.clarify.github.webhook.SignatureVerifier;
import dev.agentx.clarify.support.MutableClock;
import dev.agentx.clarify.support.TempDirs;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Stream;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.lifecycle.AfterContainer;
import net.jqwik.api.lifecycle.BeforeContainer;

/**
 * Generated hostile requests to the webhook: odd headers, odd bodies, numbers out of every range,
 * signed and not. None gets a 5xx, the server stays healthy, and a refused request writes nothing.
 */
class HostileInputPropertiesTest {
    private static Path dir;
    private static GitHubRig rig;

    @BeforeContainer
    static void start() throws IOException {
        dir = TempDirs.create("agentx-hostile");
        rig = new GitHubRig(dir.resolve("data"), MutableClock.at("2026-02-26T10:00:00Z"));
        rig.start();
    }

    @AfterContainer
    static void stop() {
        rig.close();
        TempDirs.delete(dir);
    }

    @Provide
    Arbitrary<String> events() {
        return Arbitraries.oneOf(Arbitraries.of("issue_comment", "issues", "ping", "installation", "projects_v2_item"),
                Arbitraries.strings().ofMaxLength(70), Arbitraries.strings().withChars("az_09-. /\u0000").ofMaxLength(80));
    }

    @Provide
    Arbitrary<String> numbers() {
        return Arbitraries.of("1", "0", "-1", "7.5", "1e3", "4294967303", "9223372036854775808", "-9223372036854775809",
                "\"7\"", "null", "true", "[]", "{}", "2147483647", "2147483648", "1" + "0".repeat(400));
    }

    @Provide
    Arbitrary<String> bodies() {
        Arbitrary<String> comment = Combinators.combine(numbers(), numbers(), Arbitraries.strings().ofMaxLength(300))
                .as((issue, installation, text) -> "{\"action\":\"created\",\"installation\":{\"id\":" + installation
                        + "},\"issue\":{\"number\":" + issue + ",\"title\":\"t\",\"labels\":[]},\"comment\":{\"id\":"
                        + issue + ",\"body\":" + quote("/clarify @architect " + text) + ",\"user\":{\"login\":\"eng\","
                        + "\"type\":\"User\"}},\"repository\":{\"name\":\"Hello-World\",\"full_name\":"
                        + "\"Codertocat/Hello-World\",\"owner\":{\"login\":\"Codertocat\"}},\"sender\":{\"login\":\"eng\"}}");
        return Arbitraries.oneOf(comment, Arbitraries.strings().ofMaxLength(200),
                Arbitraries.of("", "{", "[]", "null", "{\"a\":" + "[".repeat(2000) + "}", "\u0000\u00ff", "{}"));
    }

    private static String quote(String s) {
        StringBuilder b = new StringBuilder("\"");
        for (char c : s.toCharArray()) {
            if (c == '"' || c == '\\') {
                b.append('\\').append(c);
            } else if (c < 0x20) {
                b.append(String.format("\\u%04x", (int) c));
            } else {
                b.append(c);
            }
        }
        return b.append('"').toString();
    }

    @Property(tries = 300)
    void noRequestGetsAServerErrorAndARefusedOneWritesNothing(@ForAll("events") String event,
            @ForAll("bodies") String body, @ForAll boolean signed, @ForAll boolean json) {
        byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
        Map<String, String> headers = new HashMap<>();
        headers.put("Content-Type", json ? "application/json" : "text/plain");
        headers.put("X-GitHub-Event", event);
        headers.put("X-GitHub-Delivery", rig.nextDeliveryId());
        headers.put("X-Hub-Signature-256", signed ? SignatureVerifier.sign(GitHubRig.SECRET, bytes) : "sha256=00");
        Map<String, Long> before = files();
        GitHubRig.Response r;
        try {
            r = rig.send("POST", bytes, headers);
        } catch (IllegalArgumentException | UncheckedIOException e) {
            return; // a header the HTTP client itself refuses to send never reached the server
        }
        assertTrue(r.status() < 500, r.status() + " for " + event + " " + body);
        if (r.status() >= 400) {
            assertEquals(before, files(), "a refused request writes nothing: " + r.status() + " " + r.body());
        }
        assertEquals(200, rig.request("GET", rig.mode().port(), "/healthz", null, Map.of()).status());
    }

    /** The inbox's files: what an accepted delivery adds to and a refused one must not. */
    private static Map<String, Long> files() {
        Path inbox = rig.data.resolve("inbox");
        try (Stream<Path> s = Files.walk(inbox)) {
            Map<String, Long> out = new TreeMap<>();
            for (Path p : s.filter(Files::isRegularFile).toList()) {
                out.put(inbox.relativize(p).toString(), Files.size(p));
            }
            return out;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

}
