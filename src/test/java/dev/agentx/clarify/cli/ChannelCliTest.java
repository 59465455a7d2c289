package dev.agentx.clarify.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.agentx.clarify.support.ChannelRoot;
import dev.agentx.clarify.support.MutableClock;
import dev.agentx.clarify.support.OnlyDocumentedState;
import dev.agentx.clarify.support.TestRoot.Run;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/** The CLI's answer-channel parts: ingest, accept, --choice. */
@ExtendWith(OnlyDocumentedState.class)
class ChannelCliTest {
    @TempDir
    Path dir;
    ChannelRoot root;
    final ObjectMapper json = new ObjectMapper();

    @BeforeEach
    void setUp() {
        root = new ChannelRoot(dir, MutableClock.at("2026-02-26T10:00:00Z"));
    }

    private Run ok(String... args) {
        Run r = root.cli(args);
        assertEquals(0, r.code(), r.out() + r.err());
        return r;
    }

    private void refused(int code, String expected, String... args) {
        Map<String, String> before = root.snapshot();
        Run r = root.cli(args);
        assertEquals(code, r.code(), r.out() + r.err());
        assertTrue(r.err().contains(expected), r.err());
        assertEquals(before, root.snapshot(), "a refused command writes nothing");
    }

    @Test
    void ingestOpensOneClarificationPerOpenQuestionAndSkipsThemTheNextTime() throws Exception {
        Files.writeString(dir.resolve("coder-output.json"), """
                {"status": "failed",
                 "open_questions": [
                   {"id": "q1", "text": "Which database should we use: PostgreSQL or SQLite?"},
                   {"text": "Should the API support pagination?", "createdAt": "2026-02-26T09:00:00Z"}
                 ]}
                """);
        Run first = ok("clarify", "ingest", "--issue", "42", "--from", "engineer", "--to", "architect", "coder-output.json");
        assertTrue(first.out().startsWith("CLR-42-001 opened: open question q1\nCLR-42-002 opened: open question text-"),
                first.out());
        String ledger = root.ledgerJson(42);
        assertTrue(ledger.contains("\"openQuestionId\" : \"q1\""), ledger);
        assertTrue(ledger.contains("\"body\" : \"Should the API support pagination?\""), ledger);

        Run again = ok("--json", "clarify", "ingest", "--issue", "42", "--from", "engineer", "--to", "architect",
                "coder-output.json");
        JsonNode items = json.readTree(again.out()).get("clarifications");
        assertEquals(2, items.size());
        assertTrue(items.get(0).get("skipped").asBoolean());
        assertEquals("CLR-42-001", items.get(0).get("id").asText());
        assertEquals("CLR-42-002", items.get(1).get("id").asText());
        assertEquals(ledger, root.ledgerJson(42), "nothing opened twice");

        // camelCase, a new question in the same output: only that one is opened
        Files.writeString(dir.resolve("next.json"), """
                {"openQuestions": [{"id": "q1", "text": "Which database should we use: PostgreSQL or SQLite?"},
                                   {"id": 7, "text": "Who owns the migration?"}]}""");
        Run third = ok("clarify", "ingest", "--issue", "42", "--from", "engineer", "--to", "architect", "next.json");
        assertEquals("CLR-42-001 skipped: open question q1\nCLR-42-003 opened: open question 7\n", third.out());
    }

    @Test
    void badAgentOutputIsRefusedWithNothingOpened() throws Exception {
        Files.writeString(dir.resolve("broken.json"), "{\"open_questions\": [");
        refused(3, "VALIDATION: broken.json is not valid JSON", "clarify", "ingest", "--issue", "1", "--from", "engineer",
                "--to", "architect", "broken.json");
        Files.writeString(dir.resolve("none.json"), "{\"result\": 1}");
        refused(3, "holds neither \"open_questions\" nor \"openQuestions\"", "clarify", "ingest", "--issue", "1",
                "--from", "engineer", "--to", "architect", "none.json");
        Files.writeString(dir.resolve("notext.json"), "{\"open_questions\": [{\"id\": \"a\", \"text\": \"ok?\"}, {\"id\": \"b\"}]}");
        refused(3, "open_questions[1] needs a non-empty string \"text\"", "clarify", "ingest", "--issue", "1", "--from",
                "engineer", "--to", "architect", "notext.json");
        Files.writeString(dir.resolve("long.json"), "{\"open_questions\": [{\"id\": \"a\", \"text\": \"ok?\"}, "
                + "{\"id\": \"b\", \"text\": \"" + "x".repeat(2001) + "\"}]}");
        refused(3, "long.json, open question 'b': The question is 2001 characters long", "clarify", "ingest", "--issue",
                "1", "--from", "engineer", "--to", "architect", "long.json");
        Files.writeString(dir.resolve("dup.json"), "{\"open_questions\": [{\"id\": \"a\", \"text\": \"1?\"}, {\"id\": \"a\", \"text\": \"2?\"}]}");
        refused(3, "repeats the id 'a'", "clarify", "ingest", "--issue", "1", "--from", "engineer", "--to", "architect",
                "dup.json");
        Files.writeString(dir.resolve("date.json"), "{\"open_questions\": [{\"text\": \"1?\", \"createdAt\": \"yesterday\"}]}");
        refused(3, "not an ISO-8601 time", "clarify", "ingest", "--issue", "1", "--from", "engineer", "--to", "architect",
                "date.json");
        refused(3, "No such file: missing.json", "clarify", "ingest", "--issue", "1", "--from", "engineer", "--to",
                "architect", "missing.json");
        Files.writeString(dir.resolve("ok.json"), "{\"open_questions\": [{\"text\": \"1?\"}]}");
        refused(3, "SCOPE_VIOLATION", "clarify", "ingest", "--issue", "1", "--from", "engineer", "--to", "reviewer",
                "ok.json");
    }

    @Test
    void answerWithChoiceAndAcceptFromTheCli() throws Exception {
        root.config("autonomy = \"approve\"\n[agents.architect]\nchannel = \"auto\"\n");
        Run ask = ok("clarify", "ask", "--issue", "7", "--from", "engineer", "--to", "architect", "--option", "JWT",
                "--option", "Sessions (default)", "Which auth?");
        assertEquals("CLR-7-001\n", ask.out());
        assertTrue(ask.err().contains("proposed an answer through its auto channel"), ask.err());
        String shown = ok("clarify", "show", "CLR-7-001").out();
        assertTrue(shown.contains("[proposed; a person accepts it with: agentx clarify accept CLR-7-001]"), shown);
        assertTrue(shown.contains("  A: Sessions\n  Choice: 2) Sessions (default)\n"), shown);

        assertEquals("CLR-7-001 accepted: architect's answer to round 1 counts\n",
                ok("clarify", "accept", "CLR-7-001", "--by", "alice").out());
        String accepted = ok("clarify", "show", "CLR-7-001").out();
        assertTrue(accepted.contains("[accepted by alice]"), accepted);
        assertTrue(accepted.contains("[proposed]\n") && !accepted.contains("a person accepts it with"),
                "no way to accept what was accepted: " + accepted);
        refused(3, "INVALID_STATE", "clarify", "accept", "CLR-7-001");

        ok("clarify", "followup", "CLR-7-001", "Sure?");
        // the agent proposed again for round 2; a person answers instead, picking option 1 by number
        refused(3, "VALIDATION: CLR-7-001 offers options 1 to 2; choice 3 is not one of them", "clarify", "answer",
                "CLR-7-001", "--choice", "3", "No");
        refused(3, "--choice counts options from 1", "clarify", "answer", "CLR-7-001", "--choice", "0", "No");
        Run answered = ok("--json", "clarify", "answer", "CLR-7-001", "--choice", "1", "JWT after all");
        JsonNode thread = json.readTree(answered.out()).get("clarification").get("thread");
        JsonNode last = thread.get(thread.size() - 1);
        assertEquals(0, last.get("choice").asInt());
        assertEquals("JWT after all", last.get("body").asText());
    }
}
