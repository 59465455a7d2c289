package dev.agentx.clarify.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.agentx.clarify.support.MutableClock;
import dev.agentx.clarify.support.OnlyDocumentedState;
import dev.agentx.clarify.support.TestRoot;
import dev.agentx.clarify.support.TestRoot.Run;
import dev.agentx.clarify.support.Workflows;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/** {@code agentx gate --issue N}: exit 1 while a blocking clarification of the issue is open, 0 otherwise. */
@ExtendWith(OnlyDocumentedState.class)
class GateCliTest {
    @TempDir
    Path dir;
    MutableClock clock;
    TestRoot root;
    final ObjectMapper json = new ObjectMapper();

    @BeforeEach
    void setUp() {
        clock = MutableClock.at("2026-02-26T10:00:00Z");
        root = new TestRoot(dir, clock);
        Workflows.mesh(root);
    }

    private String ask(int issue, String... flags) {
        String[] args = new String[8 + flags.length];
        String[] base = {"clarify", "ask", "--issue", String.valueOf(issue), "--from", "engineer", "--to", "architect"};
        System.arraycopy(base, 0, args, 0, 8);
        System.arraycopy(flags, 0, args, 8, flags.length);
        Run r = root.cli(args);
        assertEquals(0, r.code(), r.out() + r.err());
        return r.out().trim();
    }

    @Test
    void theGateIsClosedWhileABlockingQuestionIsOpenAndOpensWhenItIsResolved() throws Exception {
        Run none = root.cli("gate", "--issue", "42");
        assertEquals(0, none.code(), none.err());
        assertEquals("issue #42: no open blocking clarification\n", none.out());

        String id = ask(42, "--topic", "Auth", "JWT or sessions?");
        ask(42, "--non-blocking", "--topic", "Naming", "userId or user_id?");
        ask(7, "--topic", "Other", "Another issue's question?");
        clock.advance(Duration.ofMinutes(95));
        Run closed = root.cli("gate", "--issue", "42");
        assertEquals(1, closed.code(), closed.err());
        assertEquals("issue #42: blocked by 1 open blocking clarification\n"
                + "  " + id + " engineer -> architect, round 1, pending, 1h35m old: \"Auth\"\n", closed.out());

        Run asJson = root.cli("--json", "gate", "--issue", "42");
        assertEquals(1, asJson.code());
        JsonNode j = json.readTree(asJson.out());
        assertEquals(42, j.path("issue").asInt());
        assertTrue(j.path("blocked").asBoolean());
        assertEquals(1, j.path("open").size(), "the non-blocking question does not hold the merge");
        assertEquals(id, j.at("/open/0/id").asText());
        assertEquals("engineer", j.at("/open/0/from").asText());
        assertEquals("architect", j.at("/open/0/to").asText());
        assertEquals(1, j.at("/open/0/round").asInt());
        assertEquals(95 * 60, j.at("/open/0/ageSeconds").asLong());

        assertEquals(0, root.cli("clarify", "answer", id, "--from", "architect", "JWT.").code());
        assertEquals(1, root.cli("gate", "--issue", "42").code(), "answered is still open until resolved");
        assertEquals(0, root.cli("clarify", "resolve", id, "-m", "JWT").code());
        Run open = root.cli("--json", "gate", "--issue", "42");
        assertEquals(0, open.code(), open.out() + open.err());
        JsonNode k = json.readTree(open.out());
        assertFalse(k.path("blocked").asBoolean());
        assertEquals(0, k.path("open").size());
    }

    @Test
    void theGateWritesNothingAndRefusesWhatIsNoIssue() throws Exception {
        Run bad = root.cli("gate", "--issue", "0");
        assertEquals(3, bad.code(), "not 0 or 1: the gate could not tell");
        assertTrue(bad.err().startsWith("VALIDATION"), bad.err());
        assertEquals(2, root.cli("gate").code(), "--issue is required");
        assertEquals(2, root.cli("gate", "--issue", "abc").code());
        assertFalse(Files.exists(dir.resolve(".agentx/state")), "a gate with no project writes nothing");
    }
}
