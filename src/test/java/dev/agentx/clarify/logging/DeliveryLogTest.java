package dev.agentx.clarify.logging;

import static com.github.tomakehurst.wiremock.client.WireMock.aResponse;
import static com.github.tomakehurst.wiremock.client.WireMock.post;
import static com.github.tomakehurst.wiremock.client.WireMock.urlPathMatching;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.OutputStreamAppender;
import ch.qos.logback.core.encoder.LayoutWrappingEncoder;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.github.tomakehurst.wiremock.verification.LoggedRequest;
import dev.agentx.clarify.github.support.GitHubRig;
import dev.agentx.clarify.github.support.Keys;
import dev.agentx.clarify.support.MutableClock;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.slf4j.LoggerFactory;

/**
 * A delivery's work, logged with the JSON layout of {@code AGENTX_LOG_FORMAT=json} at DEBUG: every line of
 * the worker and the outbox carries the delivery id, repository and issue, and no secret appears.
 */
class DeliveryLogTest {
    @TempDir
    Path dir;
    GitHubRig rig;
    final ByteArrayOutputStream captured = new ByteArrayOutputStream();
    OutputStreamAppender<ILoggingEvent> appender;
    Level before;

    @BeforeEach
    void setUp() {
        LoggerContext context = (LoggerContext) LoggerFactory.getILoggerFactory();
        LogLayout layout = new LogLayout(true);
        layout.setContext(context);
        layout.start();
        LayoutWrappingEncoder<ILoggingEvent> encoder = new LayoutWrappingEncoder<>();
        encoder.setContext(context);
        encoder.setLayout(layout);
        encoder.start();
        appender = new OutputStreamAppender<>();
        appender.setContext(context);
        appender.setEncoder(encoder);
        appender.setOutputStream(captured);
        appender.start();
        Logger root = context.getLogger(Logger.ROOT_LOGGER_NAME);
        before = root.getLevel();
        root.setLevel(Level.DEBUG);
        root.addAppender(appender);
        rig = new GitHubRig(dir.resolve("data"), MutableClock.at("2026-02-26T10:00:00Z"));
        rig.start();
    }

    @AfterEach
    void tearDown() {
        rig.close();
        Logger root = ((LoggerContext) LoggerFactory.getILoggerFactory()).getLogger(Logger.ROOT_LOGGER_NAME);
        root.detachAppender(appender);
        root.setLevel(before);
        appender.stop();
    }

    @Test
    void deliveryLinesCarryTheirFieldsAndNoSecrets() throws Exception {
        // the comment fails once: the outbox logs its retry with the effect's fields
        rig.wiremock.stubFor(post(urlPathMatching(GitHubRig.API_REPO + "/issues/\\d+/comments")).atPriority(1)
                .willReturn(aResponse().withStatus(502)));
        String id = rig.nextDeliveryId();
        assertEquals(202, rig.deliver("issue_comment", rig.comment("eng", 7, "/clarify @architect Which DB?"), id)
                .status());

        ObjectMapper json = new ObjectMapper();
        List<JsonNode> lines = new ArrayList<>();
        for (String line : captured.toString(StandardCharsets.UTF_8).split("\n")) {
            lines.add(json.readTree(line));
        }
        List<JsonNode> work = lines.stream().filter(l -> List.of("Worker", "Outbox", "DeliveryHandler", "CommandRunner",
                "IssueMirror", "Actors").contains(l.path("logger").asText())).toList();
        assertTrue(work.stream().anyMatch(l -> l.path("msg").asText().contains("processed")), lines.toString());
        assertTrue(work.stream().anyMatch(l -> l.path("logger").asText().equals("Outbox")), lines.toString());
        for (JsonNode l : work) {
            assertEquals(id, l.path("delivery").asText(), l.toString());
            assertEquals("Codertocat/Hello-World", l.path("repository").asText(), l.toString());
            assertEquals("7", l.path("issue").asText(), l.toString());
        }

        String all = captured.toString(StandardCharsets.UTF_8);
        List<String> secrets = new ArrayList<>(List.of(GitHubRig.SECRET, GitHubRig.OLD_SECRET, "ghs_test_token"));
        String key = Base64.getEncoder().encodeToString(Keys.PAIR.getPrivate().getEncoded());
        secrets.add(key.substring(100, 160));
        for (LoggedRequest r : rig.wiremock.findAll(com.github.tomakehurst.wiremock.client.WireMock.anyRequestedFor(
                com.github.tomakehurst.wiremock.client.WireMock.anyUrl()))) {
            String auth = r.getHeader("Authorization");
            if (auth != null) {
                secrets.add(auth.substring(auth.indexOf(' ') + 1));
            }
        }
        assertTrue(secrets.size() > 5, "a JWT and the token were sent: " + secrets);
        for (String secret : secrets) {
            assertFalse(all.contains(secret), "a secret was logged: " + secret);
        }
    }
}
