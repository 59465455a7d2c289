package dev.agentx.clarify.status;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.core.JsonProcessingException;
import dev.agentx.clarify.files.JsonErrors;
import dev.agentx.clarify.support.DamagedStateFiles;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

class AgentStatusCodecTest {
    private final AgentStatusCodec codec = new AgentStatusCodec();

    /**
     * Every damaged {@code agent-status.json} of {@link DamagedStateFiles} reads as it did: the
     * same statuses written back byte for byte, or the same problem at the same line and column.
     */
    @Test
    void aDamagedFileReadsAsTheCasesSay() {
        List<String> wrong = new ArrayList<>();
        List<DamagedStateFiles.Case> cases = DamagedStateFiles.of("status");
        for (DamagedStateFiles.Case c : cases) {
            String read;
            try {
                read = "OK " + DamagedStateFiles.digest(codec.encode(codec.decode(c.bytes())));
            } catch (JsonProcessingException e) {
                read = "ERR " + JsonErrors.describe(e);
            }
            if (!read.equals(c.read())) {
                wrong.add(c + "\n  expected " + c.read() + "\n  got      " + read);
            }
        }
        assertTrue(cases.size() > 500, "cases: " + cases.size());
        assertEquals(List.of(), wrong);
    }

    /** A value of another JSON type than its field's is refused, naming the field, the agent and what it must be. */
    @Test
    void aValueOfTheWrongTypeIsRefusedNamingTheFieldAndTheAgent() {
        assertProblem("{\"a\":{\"status\":\"idle\",\"clarificationId\":5}}",
                "field 'clarificationId' of 'a' must be a string (line 1, column 42)");
        assertProblem("{\"a\":{\"status\":\"idle\",\"issue\":\"7\"}}", "field 'issue' of 'a' must be an integer (line 1, column 32)");
        assertProblem("{\"a\":{\"status\":\"idle\",\"issue\":1.5}}", "field 'issue' of 'a' must be an integer (line 1, column 34)");
        assertProblem("{\"a\":{\"status\":5}}", "field 'status' of 'a' must be a string (line 1, column 17)");
        assertProblem("{\"a\":{\"status\":null}}", "field 'status' of 'a' must be a string (line 1, column 20)");
        assertProblem("{\"a\":{\"status\":\"idle\",\"lastActivity\":true}}",
                "field 'lastActivity' of 'a' must be a string (line 1, column 42)");
    }

    @Test
    void nullIsNoValueForEveryFieldButTheStatusAndTheLastOfAnAgentNamedTwiceCounts() throws Exception {
        Map<String, AgentStatus> read = codec.decode(("{\"a\":{\"status\":\"idle\"},\"a\":{\"status\":\"working\",\"issue\":null,"
                + "\"lastActivity\":null,\"clarificationId\":null,\"waitingOn\":null,\"respondingTo\":null}}")
                .getBytes(StandardCharsets.UTF_8));
        assertEquals(Map.of("a", new AgentStatus(AgentState.WORKING, null, null, null, null, null)), read);
        Map<String, AgentStatus> statuses = new TreeMap<>();
        statuses.put("b", AgentStatus.blocked(3, Instant.parse("2026-02-26T10:00:00.500Z"), "CLR-3-001", "a"));
        statuses.put("a", AgentStatus.working(null, null));
        assertEquals("""
                {
                  "a" : {
                    "status" : "working",
                    "issue" : null,
                    "lastActivity" : null,
                    "clarificationId" : null,
                    "waitingOn" : null,
                    "respondingTo" : null
                  },
                  "b" : {
                    "status" : "blocked-clarification",
                    "issue" : 3,
                    "lastActivity" : "2026-02-26T10:00:00.500Z",
                    "clarificationId" : "CLR-3-001",
                    "waitingOn" : "a",
                    "respondingTo" : null
                  }
                }
                """, new String(codec.encode(statuses), StandardCharsets.UTF_8));
        assertEquals(statuses, codec.decode(codec.encode(statuses)));
        assertEquals("{ }\n", new String(codec.encode(Map.of()), StandardCharsets.UTF_8));
    }

    private void assertProblem(String json, String expected) {
        JsonProcessingException e = assertThrows(JsonProcessingException.class,
                () -> codec.decode(json.getBytes(StandardCharsets.UTF_8)));
        assertEquals(expected, JsonErrors.describe(e));
    }
}
