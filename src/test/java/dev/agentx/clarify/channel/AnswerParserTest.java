package dev.agentx.clarify.channel;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;

class AnswerParserTest {
    static final List<String> OPTIONS = List.of("PostgreSQL", "SQLite");

    private static Delivery parse(String s, boolean jsonOnly) {
        return AnswerParser.parse(s, jsonOnly, OPTIONS, "architect's agent", "command");
    }

    private static void failed(String output, boolean jsonOnly, String expected) {
        Delivery d = parse(output, jsonOnly);
        Delivery.Failed f = assertInstanceOf(Delivery.Failed.class, d, output);
        assertTrue(f.error().contains(expected), f.error());
    }

    @Test
    void jsonAndPlainTextAnswers() {
        assertEquals(new Delivery.Answered("Use JWT.", null, "command"), parse("\n Use JWT.\n", false));
        assertEquals(new Delivery.Answered("Because JSONB.", 0, "command"),
                parse("{\"answer\": \"Because JSONB.\", \"choice\": 0, \"extra\": 1}", true));
        assertEquals(new Delivery.Answered("SQLite", 1, "command"), parse("{\"choice\": 1}", true));
        assertEquals(new Delivery.Answered("sqlite it is", 1, "command"),
                parse("{\"choice\": \"sqlite\", \"answer\": \"sqlite it is\"}", true));
        assertInstanceOf(Delivery.Deferred.class, parse("{\"deferred\": true, \"note\": \"queued\"}", true));
    }

    @Test
    void cannotAnswerAndEmptyAnswersCountAsNoAnswer() {
        failed("", false, "empty answer");
        failed("   \n", false, "empty answer");
        failed("{\"answer\": \"  \"}", true, "empty answer");
        failed("{}", true, "empty answer");
        failed("{\"cannotAnswer\": true, \"reason\": \"not my area\"}", true, "cannot answer: not my area");
        failed("CANNOT_ANSWER: ask the PM", false, "cannot answer: ask the PM");
        failed("cannot_answer", false, "cannot answer");
    }

    @Test
    void badAnswersAreFailuresThatSayWhy() {
        failed("{\"answer\": \"x\"", false, "malformed JSON");
        failed("plain text", true, "did not answer with a JSON object");
        failed("[1, 2]", true, "did not answer with a JSON object");
        failed("{\"choice\": 2}", true, "indexes 0 to 1");
        failed("{\"choice\": \"MySQL\"}", true, "none of the options");
        failed("{\"choice\": true}", true, "must be a 0-based option index");
        failed("{\"answer\": 42}", true, "must be a string");
        failed("x".repeat(2001), false, "at most 2000");
    }

    @Test
    void aLongReasonIsShortenedWithoutSplittingACharacter() {
        String snippet = AnswerParser.snippet("x".repeat(196) + "\uD83D\uDE00" + "y".repeat(10));
        assertEquals("x".repeat(196) + "\uD83D\uDE00...", snippet);
    }
}
