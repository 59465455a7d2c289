package dev.agentx.clarify.github.notify;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.agentx.clarify.channel.Signatures;
import dev.agentx.clarify.config.AgentxConfig;
import dev.agentx.clarify.config.ConfigLoader;
import dev.agentx.clarify.github.RepoRef;
import dev.agentx.clarify.github.outbox.Effect;
import dev.agentx.clarify.protocol.ClarificationRecord;
import dev.agentx.clarify.protocol.EntryType;
import dev.agentx.clarify.protocol.Status;
import dev.agentx.clarify.protocol.ThreadEntry;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;

/** What a change's notifications are: which receivers, keys, delivery ids, and the json and slack bodies. */
class NotifierTest {
    private static final Instant T = Instant.parse("2026-02-26T10:00:00Z");
    private static final RepoRef REPO = new RepoRef("acme", "shop");
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final AgentxConfig CONFIG = ConfigLoader.parse("agentx.toml", """
            [[notify]]
            url = "https://ops.example.com/agentx"
            secret = "s3cret"

            [[notify]]
            url = "https://hooks.slack.com/services/T0/B0/XYZ"
            format = "slack"
            events = ["escalated", "answered"]
            roles = ["pm"]
            """);
    private final Notifier notifier = new Notifier(Notifier.webOf("https://api.github.com"));

    private static ClarificationRecord record(String to) {
        return new ClarificationRecord("CLR-7-001", "engineer", to, "Auth <b>", true, Status.PENDING, 1, 5, T,
                T.plusSeconds(1800), null, List.of(), List.of(new ThreadEntry(1, "engineer", EntryType.QUESTION,
                "JWT or sessions?\n<!channel> & <@U123> <https://evil.example|click> @here", T)
                .withRequest("comment/9876/0")));
    }

    @Test
    void aQuestionGoesToTheReceiversThatWantItSignedWithTheDocumentedBody() throws Exception {
        List<Effect> out = notifier.entry(CONFIG, REPO, 7, 42, record("architect"), 0);
        assertEquals(1, out.size(), "the slack receiver wants neither the event nor the roles");
        Effect.Notification n = (Effect.Notification) out.get(0);
        assertEquals("asked", n.event());
        assertTrue(n.key().matches("notify/[0-9a-f]{12}/acme/shop#7/CLR-7-001/0"), n.key());
        assertTrue(Signatures.verify("s3cret", n.body().getBytes(StandardCharsets.UTF_8), n.signature()));
        JsonNode b = JSON.readTree(n.body());
        assertEquals(1, b.get("version").asInt());
        assertEquals("asked", b.get("event").asText());
        assertEquals(n.delivery(), b.get("delivery").asText());
        assertEquals("acme/shop", b.get("repository").asText());
        assertEquals(7, b.get("issue").asInt());
        assertEquals("https://github.com/acme/shop/issues/7", b.get("issue_url").asText());
        assertEquals("https://github.com/acme/shop/issues/7#issuecomment-9876", b.get("comment_url").asText());
        JsonNode c = b.get("clarification");
        assertEquals("CLR-7-001", c.get("id").asText());
        assertEquals("engineer", c.get("from").asText());
        assertEquals("architect", c.get("to").asText());
        assertEquals("Auth <b>", c.get("topic").asText());
        assertEquals(1, c.get("round").asInt());
        assertEquals(5, c.get("max_rounds").asInt());
        assertTrue(c.get("blocking").asBoolean());
        assertEquals("pending", c.get("status").asText());
        assertEquals("question", b.get("entry").get("type").asText());
        assertEquals("engineer", b.get("entry").get("by").asText());
        assertTrue(b.get("entry").get("text").asText().startsWith("JWT or sessions?\n<!channel>"), "as written");
        assertEquals(T.toString(), b.get("entry").get("at").asText());
    }

    @Test
    void theSameChangeMakesTheSameNotificationWhereverAndWheneverItIsMade() {
        Effect.Notification a = (Effect.Notification) notifier.entry(CONFIG, REPO, 7, 42, record("architect"), 0).get(0);
        Effect.Notification b = (Effect.Notification) new Notifier("https://github.com").entry(CONFIG, REPO, 7, 42,
                record("architect"), 0).get(0);
        assertEquals(a, b);
        assertTrue(a.delivery().matches("[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}"),
                a.delivery());
        assertFalse(a.toString().contains("agentx\""), "no URL path shown: " + a);
    }

    @Test
    void theSlackMessageQuotesTheEntryWithItsControlCharactersEscaped() throws Exception {
        ClarificationRecord r = record("product-manager").with(Status.ESCALATED, new ThreadEntry(1, "agentx",
                EntryType.ESCALATION, "Stuck: <!channel> & <@U123> <https://evil.example|click> @here\nline 2", T));
        List<Effect> out = notifier.entry(CONFIG, REPO, 7, 42, r, 1);
        assertEquals(2, out.size());
        Effect.Notification slack = (Effect.Notification) out.get(1);
        assertNull(slack.signature(), "no secret: unsigned");
        JsonNode b = JSON.readTree(slack.body());
        assertEquals("CLR-7-001 escalated by agentx on acme/shop#7: Auth &lt;b&gt;", b.get("text").asText());
        String head = b.get("blocks").get(0).get("text").get("text").asText();
        assertTrue(head.startsWith("*<https://github.com/acme/shop/issues/7|acme/shop#7>* CLR-7-001 *escalated*"),
                head);
        String quote = b.get("blocks").get(1).get("text").get("text").asText();
        assertEquals("> Stuck: &lt;!channel&gt; &amp; &lt;@U123&gt; &lt;https://evil.example|click&gt; @here\n"
                + "> line 2", quote);
        assertFalse(b.has("link_names"));
        String all = slack.body();
        assertFalse(all.contains("<!channel>") || all.contains("<@U123>") || all.contains("<https://evil"), all);
    }

    @Test
    void aLongEntryIsCutToASlackSectionNeverInsideAnEscape() {
        String q = NotificationBody.quote("&".repeat(2000));
        assertTrue(q.length() <= 2903, "fits a section: " + q.length());
        assertTrue(q.endsWith("&amp;..."), q.substring(q.length() - 20));
    }

    @Test
    void eventsByEntry() {
        ClarificationRecord asked = record("architect");
        assertEquals("asked", Notifier.event(asked, 0).orElseThrow());
        ClarificationRecord proposed = asked.with(Status.PENDING, ThreadEntry.proposal(1, "architect", "x", T, null));
        assertTrue(Notifier.event(proposed, 1).isEmpty(), "a proposal is no answer yet");
        ClarificationRecord answered = asked.with(Status.ANSWERED, ThreadEntry.answer(1, "architect", "x", T, null));
        assertEquals("answered", Notifier.event(answered, 1).orElseThrow());
        assertEquals("resolved", Notifier.event(answered.with(Status.RESOLVED, new ThreadEntry(1, "engineer",
                EntryType.RESOLUTION, "ok", T)), 2).orElseThrow());
        assertEquals("abandoned", Notifier.event(answered.with(Status.ABANDONED, new ThreadEntry(1, "boss",
                EntryType.RESOLUTION, "no", T)), 2).orElseThrow());
        List<Effect> stale = notifier.stale(CONFIG, REPO, 7, 42, asked.reasked(T.plusSeconds(1900)));
        assertEquals(1, stale.size());
        assertEquals("stale", ((Effect.Notification) stale.get(0)).event());
        assertTrue(stale.get(0).key().endsWith("/CLR-7-001/stale/1/" + T.plusSeconds(1800)), stale.get(0).key());
    }

    @Test
    void gitHubsWebAddressFollowsTheApis() {
        assertEquals("https://github.com", Notifier.webOf("https://api.github.com/"));
        assertEquals("https://github.example.com", Notifier.webOf("https://github.example.com/api/v3"));
        assertEquals("http://127.0.0.1:8080", Notifier.webOf("http://127.0.0.1:8080"));
    }
}
