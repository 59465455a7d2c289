package dev.agentx.clarify.flow;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.agentx.clarify.channel.FileChannelFailures;
import dev.agentx.clarify.protocol.ClarificationRecord;
import dev.agentx.clarify.protocol.EntryType;
import dev.agentx.clarify.protocol.Ledger;
import dev.agentx.clarify.protocol.Roles;
import dev.agentx.clarify.protocol.Status;
import dev.agentx.clarify.protocol.ThreadEntry;
import dev.agentx.clarify.support.AgentxOnPath;
import dev.agentx.clarify.support.ChannelRoot;
import dev.agentx.clarify.support.MutableClock;
import dev.agentx.clarify.support.TestRoot.Run;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Agents answer agents in Local Mode with no human step: the architect and the product manager
 * are the example command agents of {@code examples/agents/}; the architect, asked about users,
 * asks the product manager itself (a nested clarification on the same issue, which would hang if
 * any agent ran under the ledger lock). The test plays the engineer's pipeline through the CLI.
 */
class AgentToAgentFlowTest {
    @TempDir
    Path dir;

    @Test
    void twoCommandAgentsAskAndAnswerOverSeveralRoundsAndEverythingResolvesWithoutAHuman() throws Exception {
        Path examples = Path.of("examples/agents").toAbsolutePath();
        // The agents' own agentx calls run in child processes on the real clock, and each runs a
        // monitor pass: the test clock starts now so that no record looks overdue to them.
        MutableClock clock = new MutableClock(java.time.Instant.now().truncatedTo(java.time.temporal.ChronoUnit.SECONDS));
        ChannelRoot root = new ChannelRoot(dir.resolve("project"), clock);
        AgentxOnPath.install(dir.resolve("bin"), root.env);
        root.config("""
                [agents.architect]
                channel = "command"
                command = ["%s"]
                timeout_seconds = 120

                [agents.product-manager]
                channel = "command"
                command = ["%s"]
                timeout_seconds = 60
                """.formatted(examples.resolve("architect.sh"), examples.resolve("product-manager.sh")));

        assertEquals("CLR-42-001\n", ok(root, "clarify", "ask", "--issue", "42", "--from", "engineer", "--to",
                "architect", "--topic", "Auth", "Which auth method should the API use?").out());
        clock.advance(Duration.ofMinutes(1));
        ok(root, "clarify", "followup", "CLR-42-001", "What token lifetime?");
        clock.advance(Duration.ofMinutes(1));
        Run third = ok(root, "clarify", "followup", "CLR-42-001", "Who are the users of this API?");
        assertTrue(third.out().contains("round 3 asked; answered"), third.out() + third.err());
        clock.advance(Duration.ofMinutes(1));
        ok(root, "clarify", "resolve", "CLR-42-001", "-m", "JWT, 15 minute tokens, sized for small teams.");

        Run db = ok(root, "clarify", "ask", "--issue", "42", "--from", "engineer", "--to", "architect",
                "--option", "SQLite", "--option", "PostgreSQL", "Which database?");
        assertEquals("CLR-42-003\n", db.out(), "CLR-42-002 is the architect's own question to the product manager");
        ok(root, "clarify", "resolve", "CLR-42-003", "-m", "PostgreSQL.");

        // What the digest counts: every clarification resolved, none escalated, no human in any thread.
        Ledger ledger = root.local().ledgers().read(42).orElseThrow();
        assertEquals(3, ledger.clarifications().size());
        for (ClarificationRecord r : ledger.clarifications()) {
            assertEquals(Status.RESOLVED, r.status(), r.id());
            for (ThreadEntry e : r.thread()) {
                assertFalse(e.type() == EntryType.ESCALATION, r.id() + " escalated");
                assertTrue(Roles.PRIORITY.contains(e.from()), r.id() + ": entry by " + e.from() + ", not an agent");
                assertFalse(e.isProposal());
            }
        }
        ClarificationRecord auth = ledger.find("CLR-42-001").orElseThrow();
        assertEquals(3, auth.answeredRounds());
        assertEquals("Use JWT bearer tokens signed with RS256; see ADR-42.", answer(auth, 1));
        assertEquals("15 minutes for access tokens, with refresh tokens valid for 7 days.", answer(auth, 2));
        assertEquals("Per product-manager (CLR-42-002): Small teams of 2 to 10 developers; single sign-on comes later.",
                answer(auth, 3));

        ClarificationRecord nested = ledger.find("CLR-42-002").orElseThrow();
        assertEquals("architect", nested.from());
        assertEquals("product-manager", nested.to());
        assertEquals("Who are the users of this API?", nested.lastQuestion().orElseThrow().body());
        assertEquals("architect", nested.thread().get(nested.thread().size() - 1).from(), "resolved by the architect");

        ClarificationRecord choice = ledger.find("CLR-42-003").orElseThrow();
        assertEquals(1, choice.lastAnswer().orElseThrow().choice(), "PostgreSQL, picked by index");

        Map<String, Integer> counts = new TreeMap<>();
        ObjectMapper json = new ObjectMapper();
        for (String line : Files.readAllLines(root.state().resolve("events.jsonl"))) {
            JsonNode e = json.readTree(line);
            counts.merge(e.get("event").asText(), 1, Integer::sum);
        }
        assertEquals(Map.of("clarification-requested", 5, "clarification-answered", 5, "clarification-resolved", 3),
                counts);
        // ...and the digest shows it: all three resolved without a human, none escalated.
        JsonNode digest = json.readTree(ok(root, "--json", "clarify", "digest", "--since", "1d").out());
        assertEquals(3, digest.get("total").asInt(), digest.toString());
        assertEquals(3, digest.get("autoResolved").asInt(), digest.toString());
        assertEquals(0, digest.get("escalated").asInt(), digest.toString());
        assertEquals(1.0, digest.get("autoResolutionRate").asDouble(), digest.toString());
        Path failures = root.state().resolve(FileChannelFailures.FILE);
        assertTrue(!Files.exists(failures) || Files.readString(failures).equals("{ }\n"), "no channel failed");
    }

    private static String answer(ClarificationRecord r, int round) {
        return r.thread().stream().filter(e -> e.round() == round && e.isAnswer()).findFirst().orElseThrow().body();
    }

    private static Run ok(ChannelRoot root, String... args) {
        Run r = root.cli(args);
        assertEquals(0, r.code(), String.join(" ", args) + "\n" + r.out() + r.err());
        return r;
    }
}
