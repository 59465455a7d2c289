package dev.agentx.clarify.mcp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.agentx.clarify.cli.Main;
import dev.agentx.clarify.status.AgentState;
import dev.agentx.clarify.status.AgentStatus;
import dev.agentx.clarify.status.AgentStatusCodec;
import dev.agentx.clarify.support.MutableClock;
import dev.agentx.clarify.support.OnlyDocumentedState;
import dev.agentx.clarify.support.TestRoot;
import dev.agentx.clarify.support.Workflows;
import io.modelcontextprotocol.client.McpAsyncClient;
import io.modelcontextprotocol.client.McpClient;
import io.modelcontextprotocol.client.McpSyncClient;
import io.modelcontextprotocol.client.transport.ServerParameters;
import io.modelcontextprotocol.client.transport.StdioClientTransport;
import io.modelcontextprotocol.json.jackson2.JacksonMcpJsonMapper;
import io.modelcontextprotocol.spec.McpError;
import io.modelcontextprotocol.spec.McpSchema;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import reactor.core.publisher.Mono;

/**
 * {@code agentx mcp} as an agent host runs it: a separate process per agent, driven through the
 * MCP Java SDK's own client over stdio.
 */
@ExtendWith(OnlyDocumentedState.class)
class McpServerTest {
    private static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    Path dir;

    private final List<AutoCloseable> open = new ArrayList<>();
    private final List<String> stderr = new CopyOnWriteArrayList<>();

    @AfterEach
    void close() throws Exception {
        for (AutoCloseable c : open) {
            c.close();
        }
    }

    @Test
    void listsTheToolsWithSchemasAnAgentCanUse() {
        TestRoot root = mesh();
        McpSyncClient engineer = client(root.root, "engineer");
        McpSchema.InitializeResult init = engineer.getCurrentInitializationResult();
        assertEquals("agentx-clarify", init.serverInfo().name());
        assertTrue(init.instructions().contains("'engineer'"), init.instructions());

        Map<String, McpSchema.Tool> tools = new LinkedHashMap<>();
        engineer.listTools().tools().forEach(t -> tools.put(t.name(), t));
        assertEquals(List.of("clarify_ask", "clarify_answer", "clarify_followup", "clarify_resolve", "clarify_escalate",
                "clarify_wait", "clarify_inbox", "clarify_show", "clarify_status"), List.copyOf(tools.keySet()));
        for (McpSchema.Tool t : tools.values()) {
            assertTrue(t.description().length() > 60, t.name() + ": " + t.description());
            assertEquals("object", t.inputSchema().get("type"), t.name());
            assertEquals(Boolean.FALSE, t.inputSchema().get("additionalProperties"), t.name());
            for (Object required : (List<?>) t.inputSchema().get("required")) {
                assertTrue(properties(t).containsKey(required), t.name() + " requires " + required);
            }
        }
        McpSchema.Tool ask = tools.get("clarify_ask");
        assertEquals(List.of("issue", "to", "question"), ask.inputSchema().get("required"));
        assertEquals(List.of("issue", "to", "question", "topic", "blocking", "options", "workflow", "wait_seconds"),
                List.copyOf(properties(ask).keySet()));
        assertEquals("integer", ((Map<?, ?>) properties(ask).get("issue")).get("type"));
        assertEquals("array", ((Map<?, ?>) properties(ask).get("options")).get("type"));
        assertEquals(List.of("id", "answer"), tools.get("clarify_answer").inputSchema().get("required"));
        assertEquals(Boolean.TRUE, tools.get("clarify_inbox").annotations().readOnlyHint());
        assertEquals(Boolean.FALSE, tools.get("clarify_ask").annotations().readOnlyHint());
    }

    private static Map<?, ?> properties(McpSchema.Tool t) {
        return (Map<?, ?>) t.inputSchema().get("properties");
    }

    /** pm, PM or Product-Manager (also from AGENTX_AGENT) is the role product-manager, as the ledgers name it. */
    @Test
    void theAgentIsItsRoleWhateverAliasOrCaseNamesIt() {
        TestRoot root = mesh();
        TestRoot.Run asked = root.cli("clarify", "ask", "--issue", "45", "--from", "engineer", "--to", "pm",
                "Which users may export?");
        assertEquals(0, asked.code(), asked.err());

        McpSyncClient pm = client(root.root, Map.of(), "--agent", "PM");
        assertTrue(pm.getCurrentInitializationResult().instructions().contains("'product-manager'"),
                pm.getCurrentInitializationResult().instructions());
        JsonNode inbox = data(ok(call(pm, "clarify_inbox", Map.of())));
        assertEquals("product-manager", inbox.get("agent").asText());
        assertEquals("CLR-45-001", inbox.get("questions").get(0).get("id").asText(), inbox.toString());
        String status = text(ok(call(pm, "clarify_status", Map.of())));
        assertTrue(status.startsWith("product-manager: clarifying on #45\n- asked by engineer in CLR-45-001"), status);

        McpSyncClient fromEnv = client(root.root, Map.of("AGENTX_AGENT", " Product-Manager "));
        JsonNode answered = data(ok(call(fromEnv, "clarify_answer", Map.of("id", "CLR-45-001", "answer", "Admins."))));
        assertEquals("product-manager", answered.get("clarification").get("thread").get(1).get("from").asText());
    }

    /**
     * An agent the project does not know is refused before the session starts, as a missing one
     * is. (A process of its own: a server that did start would read this one's stdin.)
     */
    @Test
    void anUnknownAgentIsAUsageErrorAtStartNamingTheKnownOnes() throws Exception {
        TestRoot root = mesh();
        root.write(".agentx/config.toml", "default_workflow = \"mesh\"\n\n[roles]\nsecurity = [\"alice\"]\n");
        root.write(".agentx/workflows/release.toml", "[workflow]\nname = \"release\"\n\n[[steps]]\nid = \"qa\"\n"
                + "agent = \"qa\"\ncan_clarify = [\"engineer\"]\n");
        Raw flag = raw(root, Map.of(), "--agent", "wizard");
        flag.in().close();
        assertEquals(List.of(), flag.rest(), "nothing on stdout");
        String err = Files.readString(flag.err());
        assertEquals(2, flag.process().exitValue(), err);
        assertTrue(err.startsWith("USAGE: Unknown agent 'wizard' (--agent): "), err);
        assertTrue(err.contains("Known agents: product-manager, architect, ux-designer, engineer, reviewer, security, "),
                err);
        assertTrue(err.contains(", qa"), err);

        Raw env = raw(root, Map.of("AGENTX_AGENT", "wizard"));
        env.in().close();
        env.rest();
        assertEquals(2, env.process().exitValue(), Files.readString(env.err()));
        assertTrue(Files.readString(env.err()).startsWith("USAGE: Unknown agent 'wizard' (AGENTX_AGENT): "),
                Files.readString(env.err()));
    }

    @Test
    void twoAgentsAskAndAnswerEachOtherOverSeveralRoundsToResolution() throws Exception {
        TestRoot root = mesh();
        McpSyncClient engineer = client(root.root, "engineer");
        McpSyncClient architect = client(root.root, "architect");

        // round 1: the engineer asks and waits in the same call; the architect finds it in its inbox
        CompletableFuture<McpSchema.CallToolResult> asked = CompletableFuture.supplyAsync(() -> call(engineer,
                "clarify_ask", Map.of("issue", 42, "to", "architect", "question", "JWT or sessions?",
                        "options", List.of("JWT", "Sessions"), "wait_seconds", 120)));
        JsonNode inbox = awaitInbox(architect, 1);
        JsonNode question = inbox.get("questions").get(0);
        assertEquals("CLR-42-001", question.get("id").asText());
        assertEquals("engineer", question.get("from").asText());
        assertEquals("JWT or sessions?", question.get("question").asText());
        assertFalse(asked.isDone(), "the ask waits for the answer");

        JsonNode answered = data(ok(call(architect, "clarify_answer",
                Map.of("id", "CLR-42-001", "answer", "JWT, see ADR-42", "choice", 1))));
        assertEquals("answered", answered.get("status").asText());

        McpSchema.CallToolResult first = asked.get(60, TimeUnit.SECONDS);
        JsonNode waited = data(ok(first));
        assertEquals("answered", waited.get("waited").get("outcome").asText());
        // woken by the ledger's change, not by the periodic look (30 s) or the end of the wait (120 s)
        assertTrue(waited.get("waited").get("seconds").asDouble() < 20, waited.toString());
        assertTrue(text(first).contains("JWT, see ADR-42"), text(first));
        assertTrue(text(first).contains("Choice: 1) JWT"), text(first));

        // the engineer's inbox holds the answer to read; the architect's is empty now
        JsonNode engineerInbox = data(ok(call(engineer, "clarify_inbox", Map.of())));
        assertEquals("CLR-42-001", engineerInbox.get("answers").get(0).get("id").asText());
        assertEquals(0, data(ok(call(architect, "clarify_inbox", Map.of()))).get("questions").size());

        // round 2 and 3: follow-ups, each answered while the engineer waits
        for (int round = 2; round <= 3; round++) {
            String q = "Round " + round + ": token lifetime?";
            CompletableFuture<McpSchema.CallToolResult> follow = CompletableFuture.supplyAsync(() -> call(engineer,
                    "clarify_followup", Map.of("id", "CLR-42-001", "question", q, "wait_seconds", 120)));
            assertEquals(q, awaitInbox(architect, 1).get("questions").get(0).get("question").asText());
            ok(call(architect, "clarify_answer", Map.of("id", "CLR-42-001", "answer", round * 5 + " minutes")));
            JsonNode r = data(ok(follow.get(60, TimeUnit.SECONDS)));
            assertEquals(round, r.get("round").asInt());
            assertEquals("answered", r.get("waited").get("outcome").asText());
        }

        JsonNode resolved = data(ok(call(engineer, "clarify_resolve",
                Map.of("id", "CLR-42-001", "note", "JWT, 15 minute tokens"))));
        assertEquals("resolved", resolved.get("status").asText());

        JsonNode shown = data(ok(call(architect, "clarify_show", Map.of("id", "CLR-42-001"))));
        JsonNode thread = shown.get("clarification").get("thread");
        assertEquals(7, thread.size(), thread.toString()); // 3 questions, 3 answers, the resolution
        assertEquals("resolution", thread.get(6).get("type").asText());
        assertEquals(0, thread.get(1).get("choice").asInt());

        // the ledger on disk says the same as the CLI would show
        TestRoot.Run cli = root.cli("clarify", "show", "CLR-42-001", "--json");
        assertEquals(0, cli.code(), cli.err());
        assertEquals(JSON.readTree(cli.out()).get("status").asText(), "resolved");
    }

    /**
     * A session writes the statuses behind its tool calls: they reach agent-status.json while the
     * session runs (another process reads them there) and are all on disk once it has ended.
     */
    @Test
    void aSessionsStatusesReachTheFileWhileItRunsAndAllAreThereWhenItEnds() throws Exception {
        TestRoot root = mesh();
        McpSyncClient engineer = client(root.root, "engineer");
        McpSyncClient architect = client(root.root, "architect");
        ok(call(engineer, "clarify_ask", Map.of("issue", 9, "to", "architect", "question", "Which queue?")));
        Map<String, AgentStatus> seen = awaitStatus(root, "engineer", AgentState.BLOCKED_CLARIFICATION);
        assertEquals("architect", seen.get("engineer").waitingOn());
        assertEquals(AgentState.CLARIFYING, seen.get("architect").status());

        ok(call(architect, "clarify_answer", Map.of("id", "CLR-9-001", "answer", "The durable one.")));
        architect.close();
        engineer.close();
        Map<String, AgentStatus> after = new AgentStatusCodec().decode(
                Files.readAllBytes(root.state().resolve("agent-status.json")));
        assertEquals(AgentState.WORKING, after.get("engineer").status(), after.toString());
        assertEquals(AgentState.WORKING, after.get("architect").status(), after.toString());
    }

    /** agent-status.json as another process reads it, once it shows {@code agent} in {@code state}. */
    private static Map<String, AgentStatus> awaitStatus(TestRoot root, String agent, AgentState state)
            throws Exception {
        Path file = root.state().resolve("agent-status.json");
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (true) {
            Map<String, AgentStatus> read = Files.exists(file)
                    ? new AgentStatusCodec().decode(Files.readAllBytes(file)) : Map.of();
            if (read.containsKey(agent) && read.get(agent).status() == state || System.nanoTime() > deadline) {
                assertEquals(state, read.containsKey(agent) ? read.get(agent).status() : null, read.toString());
                return read;
            }
            Thread.sleep(50);
        }
    }

    @Test
    void aWaitEndsWithTheTimeoutAndClarifyWaitPicksItUpAgain() {
        TestRoot root = mesh();
        McpSyncClient engineer = client(root.root, "engineer");
        McpSyncClient architect = client(root.root, "architect");
        JsonNode asked = data(ok(call(engineer, "clarify_ask",
                Map.of("issue", 7, "to", "architect", "question", "Which database?", "wait_seconds", 1))));
        assertEquals("timeout", asked.get("waited").get("outcome").asText());
        assertEquals("pending", asked.get("status").asText());

        ok(call(architect, "clarify_answer", Map.of("id", "CLR-7-001", "answer", "PostgreSQL")));
        McpSchema.CallToolResult again = call(engineer, "clarify_wait", Map.of("id", "CLR-7-001", "wait_seconds", 5));
        assertEquals("answered", data(ok(again)).get("waited").get("outcome").asText());
    }

    @Test
    void theRoundLimitAndTheScopeGuardRefuseAsInTheCli() {
        TestRoot mesh = mesh();
        McpSyncClient engineer = client(mesh.root, "engineer");
        McpSyncClient architect = client(mesh.root, "architect");
        ok(call(engineer, "clarify_ask", Map.of("issue", 5, "to", "architect", "question", "Q1?")));
        for (int round = 1; round < 5; round++) {
            ok(call(architect, "clarify_answer", Map.of("id", "CLR-5-001", "answer", "A" + round)));
            ok(call(engineer, "clarify_followup", Map.of("id", "CLR-5-001", "question", "Q" + (round + 1) + "?")));
        }
        ok(call(architect, "clarify_answer", Map.of("id", "CLR-5-001", "answer", "A5")));
        McpSchema.CallToolResult sixth = call(engineer, "clarify_followup", Map.of("id", "CLR-5-001", "question", "Q6?"));
        assertTrue(sixth.isError());
        assertEquals("MAX_ROUNDS_EXCEEDED", data(sixth).get("error").get("code").asText());
        assertTrue(text(sixth).startsWith("MAX_ROUNDS_EXCEEDED: "), text(sixth));
        String detail = data(sixth).get("error").get("detail").asText();
        assertTrue(!detail.isEmpty() && text(sixth).endsWith("\n\n" + detail), detail + "\nvs\n" + text(sixth));
        assertEquals("escalated", data(ok(call(engineer, "clarify_show", Map.of("id", "CLR-5-001"))))
                .get("clarification").get("status").asText());

        // the CLI refuses the same sixth round with the same code and words
        TestRoot viaCli = new TestRoot(dir.resolve("limits"), MutableClock.at("2026-01-01T00:00:00Z"));
        Workflows.mesh(viaCli);
        assertEquals(0, viaCli.cli("clarify", "ask", "--issue", "5", "--from", "engineer", "--to", "architect", "Q1?").code());
        for (int round = 1; round < 5; round++) {
            assertEquals(0, viaCli.cli("clarify", "answer", "CLR-5-001", "A" + round).code());
            assertEquals(0, viaCli.cli("clarify", "followup", "CLR-5-001", "Q" + (round + 1) + "?").code());
        }
        assertEquals(0, viaCli.cli("clarify", "answer", "CLR-5-001", "A5").code());
        TestRoot.Run cli = viaCli.cli("clarify", "followup", "CLR-5-001", "Q6?");
        assertEquals(3, cli.code());
        String mcpError = data(sixth).get("error").get("message").asText();
        assertTrue(cli.err().contains("MAX_ROUNDS_EXCEEDED: " + mcpError), cli.err() + "\nvs " + mcpError);

        // scope: in the bundled feature workflow the architect may not ask the engineer
        TestRoot feature = new TestRoot(dir.resolve("feature"), MutableClock.at("2026-01-01T00:00:00Z"));
        feature.write(".agentx/config.toml", "default_workflow = \"feature\"\n");
        McpSyncClient featureArchitect = client(feature.root, "architect");
        McpSchema.CallToolResult scope = call(featureArchitect, "clarify_ask",
                Map.of("issue", 9, "to", "engineer", "question", "Can you build it?"));
        assertTrue(scope.isError());
        assertEquals("SCOPE_VIOLATION", data(scope).get("error").get("code").asText());
        TestRoot.Run cliScope = feature.cli("clarify", "ask", "--issue", "9", "--from", "architect", "--to", "engineer",
                "Can you build it?");
        assertEquals(3, cliScope.code());
        assertEquals(cliScope.err().strip(), text(scope).strip());
        assertFalse(mcpError.isBlank());
    }

    @Test
    void aBadArgumentIsAToolErrorAndTheServerGoesOn() {
        TestRoot root = mesh();
        McpSyncClient engineer = client(root.root, "engineer");
        List<Map<String, Object>> bad = List.of(
                Map.of("to", "architect", "question", "no issue?"),
                Map.of("issue", "forty-two", "to", "architect", "question", "Q?"),
                Map.of("issue", 4.5, "to", "architect", "question", "Q?"),
                Map.of("issue", 1, "to", List.of("architect"), "question", "Q?"),
                Map.of("issue", 1, "to", "architect", "question", "Q?", "blocking", "maybe"),
                Map.of("issue", 1, "to", "architect", "question", "Q?", "options", List.of(1, 2)),
                Map.of("issue", 1, "to", "architect", "question", "Q?", "from", "architect"),
                Map.of("issue", 1, "to", "architect", "question", "Q?", "wait_seconds", 100000));
        for (Map<String, Object> args : bad) {
            McpSchema.CallToolResult r = call(engineer, "clarify_ask", args);
            assertTrue(r.isError(), args.toString());
            assertEquals("USAGE", data(r).get("error").get("code").asText(), args + ": " + text(r));
            assertTrue(text(r).startsWith("USAGE: clarify_ask: "), text(r));
        }
        McpSchema.CallToolResult empty = call(engineer, "clarify_ask",
                Map.of("issue", 1, "to", "architect", "question", ""));
        assertEquals("VALIDATION", data(empty).get("error").get("code").asText(), text(empty));
        McpSchema.CallToolResult negative = call(engineer, "clarify_ask",
                Map.of("issue", -1, "to", "architect", "question", "Q?"));
        assertEquals("VALIDATION", data(negative).get("error").get("code").asText(), "as the CLI's --issue -1: "
                + text(negative));
        McpSchema.CallToolResult id = call(engineer, "clarify_answer", Map.of("id", "CLR-x", "answer", "A"));
        assertEquals("VALIDATION", data(id).get("error").get("code").asText(), text(id));
        McpSchema.CallToolResult missing = call(engineer, "clarify_show", Map.of("id", "CLR-1-009"));
        assertEquals("NOT_FOUND", data(missing).get("error").get("code").asText(), text(missing));
        McpSchema.CallToolResult both = call(engineer, "clarify_show", Map.of("id", "CLR-1-001", "issue", 1));
        assertEquals("USAGE", data(both).get("error").get("code").asText(), text(both));
        // an unknown tool is a protocol error (JSON-RPC invalid params), as MCP specifies
        McpError unknown = assertThrows(McpError.class, () -> call(engineer, "clarify_nope", Map.of()));
        assertTrue(unknown.getMessage().contains("Unknown tool"), unknown.getMessage());

        // nothing was written, and the server still answers
        assertFalse(Files.exists(root.state().resolve("clarifications/issue-1.json")));
        assertEquals("CLR-1-001", data(ok(call(engineer, "clarify_ask",
                Map.of("issue", "1", "to", "architect", "question", "Now right?", "blocking", "false"))))
                .get("id").asText());
    }

    @Test
    void aLineThatIsNotJsonRpcGetsAParseErrorAndTheSessionGoesOn() throws Exception {
        Raw host = raw(mesh(), Map.of(), "engineer");
        host.send("this is not json");
        JsonNode first = host.next();
        assertEquals(-32700, first.path("error").path("code").asInt(), first.toString());
        assertTrue(first.has("id") && first.get("id").isNull(), "JSON-RPC 2.0: id null: " + first);
        // JSON-RPC of another version is no JSON-RPC 2.0 message: invalid request, with its id
        host.send("{\"jsonrpc\":\"1.0\",\"id\":78,\"method\":\"ping\"}");
        JsonNode old = host.next();
        assertEquals(-32600, old.path("error").path("code").asInt(), old.toString());
        assertEquals(78, old.path("id").asInt(), old.toString());
        host.send(INITIALIZE);
        JsonNode second = host.next();
        assertEquals(1, second.path("id").asInt(), second.toString());
        assertEquals("agentx-clarify", second.path("result").path("serverInfo").path("name").asText());
        host.in.close();
        assertTrue(host.process.waitFor(30, TimeUnit.SECONDS), "the server ends when the host closes stdin");
    }

    /**
     * Every request gets an answer: before initialize an error (ping its result); after it, even
     * before notifications/initialized, the request is served; params the SDK cannot take are
     * invalid params, named.
     */
    @Test
    void everyRequestIsAnsweredWhateverItsMomentOrParams() throws Exception {
        Raw host = raw(mesh(), Map.of(), "engineer");
        host.send(request(7, "tools/list", null));
        JsonNode early = host.next();
        assertEquals(7, early.path("id").asInt(), early.toString());
        assertEquals(-32600, early.path("error").path("code").asInt(), early.toString());
        assertEquals("Invalid request: the session is not initialized; send initialize first.",
                early.path("error").path("message").asText());
        host.send(request(8, "ping", null));
        assertEquals(JSON.readTree("{\"jsonrpc\":\"2.0\",\"id\":8,\"result\":{}}"), host.next());

        host.send(INITIALIZE);
        assertEquals(1, host.next().path("id").asInt());
        host.send(request(2, "tools/call", Map.of("name", "clarify_status", "arguments", Map.of())));
        host.send(request(3, "tools/call", null));
        host.send(request(4, "tools/call", Map.of("name", "clarify_status", "arguments", List.of())));
        Map<Integer, JsonNode> answers = host.answers(3);
        assertTrue(answers.get(2).path("result").path("content").get(0).path("text").asText().startsWith("engineer: "),
                answers.get(2).toString());
        assertEquals(-32602, answers.get(3).path("error").path("code").asInt(), answers.get(3).toString());
        assertEquals("Invalid params: tools/call needs params, an object with 'name' (a string) and optionally "
                + "'arguments' (an object); got none.", answers.get(3).path("error").path("message").asText());
        assertEquals(-32602, answers.get(4).path("error").path("code").asInt(), answers.get(4).toString());

        host.send(INITIALIZED);
        host.send(request(5, "tools/call", Map.of("name", "clarify_inbox")));
        JsonNode inbox = host.next();
        assertEquals(5, inbox.path("id").asInt(), inbox.toString());
        assertFalse(inbox.path("result").path("isError").asBoolean(), inbox.toString());
        host.in.close();
        assertTrue(host.process.waitFor(30, TimeUnit.SECONDS));
        assertEquals(0, host.process.exitValue());
    }

    /** A host that writes its requests and closes stdin at once still gets every answer. */
    @Test
    void theRequestsReadBeforeTheInputEndsAreAnsweredThenTheServerExits() throws Exception {
        Raw host = raw(mesh(), Map.of(), "engineer");
        host.send(INITIALIZE);
        host.send(INITIALIZED);
        host.send(request(2, "tools/call", Map.of("name", "clarify_status", "arguments", Map.of())));
        host.send(request(3, "tools/call", Map.of("name", "clarify_ask", "arguments", Map.of("issue", 45, "to",
                "architect", "question", "JWT or sessions?", "wait_seconds", 600))));
        host.in.close();
        Map<Integer, JsonNode> answers = host.answers(3);
        assertTrue(answers.get(2).path("result").path("content").get(0).path("text").asText().startsWith("engineer: "),
                answers.get(2).toString());
        JsonNode asked = answers.get(3).path("result").path("structuredContent");
        assertEquals("CLR-45-001", asked.path("id").asText(), answers.get(3).toString());
        assertEquals("ended", asked.path("waited").path("outcome").asText(), answers.get(3).toString());
        assertTrue(host.process.waitFor(30, TimeUnit.SECONDS), "the server ends once it answered");
        assertEquals(0, host.process.exitValue());
    }

    /** notifications/cancelled ends the call's wait, and its answer is not sent (MCP: cancellation). */
    @Test
    void aCancelledWaitEndsAndIsNotAnswered() throws Exception {
        TestRoot root = mesh();
        Raw host = raw(root, Map.of("AGENTX_LOG_LEVEL", "info"), "engineer");
        host.send(INITIALIZE);
        host.send(INITIALIZED);
        assertEquals(1, host.next().path("id").asInt());
        host.send(request(2, "tools/call", Map.of("name", "clarify_ask", "arguments", Map.of("issue", 46, "to",
                "architect", "question", "Which queue?", "wait_seconds", 600))));
        host.send(JSON.writeValueAsString(Map.of("jsonrpc", "2.0", "method", "notifications/cancelled",
                "params", Map.of("requestId", 2, "reason", "the user stopped it"))));
        host.send(request(3, "ping", null));
        // the ask ended its wait: its answer was dropped, long before the 600 s
        String dropped = "request 2 was cancelled by the host: its answer is not sent";
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (!Files.readString(host.err).contains(dropped) && System.nanoTime() < deadline) {
            Thread.sleep(100);
        }
        assertTrue(Files.readString(host.err).contains(dropped), Files.readString(host.err));
        assertFalse(Files.readString(host.err).contains("No handler registered"), Files.readString(host.err));
        host.in.close();
        List<JsonNode> rest = host.rest();
        assertTrue(rest.stream().anyMatch(m -> m.path("id").asInt() == 3), rest.toString());
        assertTrue(rest.stream().noneMatch(m -> m.path("id").asInt() == 2), rest.toString());
        assertEquals(0, host.process.exitValue());
        // the question stays asked
        assertEquals(0, root.cli("clarify", "show", "CLR-46-001").code());
    }

    @Test
    void threadsAreResourcesAndAChangeByAnotherProcessIsNotified() throws Exception {
        TestRoot root = mesh();
        McpSyncClient engineer = client(root.root, "engineer");
        ok(call(engineer, "clarify_ask", Map.of("issue", 3, "to", "architect", "question", "REST or gRPC?")));

        LinkedBlockingQueue<List<McpSchema.ResourceContents>> updates = new LinkedBlockingQueue<>();
        McpAsyncClient watcher = McpClient.async(transport(root.root, "reviewer"))
                .requestTimeout(Duration.ofSeconds(60)).initializationTimeout(Duration.ofSeconds(60))
                .resourcesUpdateConsumer(contents -> Mono.fromRunnable(() -> updates.add(contents))).build();
        open.add(watcher::close);
        watcher.initialize().block(Duration.ofSeconds(60));

        List<String> uris = watcher.listResources().block(Duration.ofSeconds(30)).resources().stream()
                .map(McpSchema.Resource::uri).toList();
        assertEquals(List.of("agentx://issue/3"), uris);
        assertEquals(List.of("agentx://issue/{number}"), watcher.listResourceTemplates().block(Duration.ofSeconds(30))
                .resourceTemplates().stream().map(McpSchema.ResourceTemplate::uriTemplate).toList());
        McpSchema.ReadResourceResult read = watcher.readResource(new McpSchema.ReadResourceRequest("agentx://issue/3"))
                .block(Duration.ofSeconds(30));
        JsonNode ledger = JSON.readTree(((McpSchema.TextResourceContents) read.contents().get(0)).text());
        assertEquals(3, ledger.get("issueNumber").asInt());
        assertEquals("REST or gRPC?", ledger.get("clarifications").get(0).get("thread").get(0).get("body").asText());

        // the architect answers through the CLI, in this test's process: the watcher's host hears of it
        TestRoot.Run cli = root.cli("clarify", "answer", "CLR-3-001", "--from", "architect", "gRPC inside, REST outside");
        assertEquals(0, cli.code(), cli.err());
        List<McpSchema.ResourceContents> update = updates.poll(30, TimeUnit.SECONDS);
        assertTrue(update != null, "no notifications/resources/updated within 30 s; stderr: " + stderr);
        assertTrue(update.stream().anyMatch(c -> c.uri().equals("agentx://issue/3")
                && ((McpSchema.TextResourceContents) c).text().contains("gRPC inside")), update.toString());

        // a damaged ledger read as a resource says so, as the tools do (not a bare internal error)
        Files.writeString(root.state().resolve("clarifications/issue-9.json"), "{\"issueNumber\": 9, \"clarif");
        McpError damaged = assertThrows(McpError.class, () -> watcher.readResource(
                new McpSchema.ReadResourceRequest("agentx://issue/9")).block(Duration.ofSeconds(30)));
        assertTrue(damaged.getMessage().startsWith("LEDGER_DAMAGED: "), damaged.getMessage());
    }

    /**
     * An issue that had no ledger when the session started: another process (the CLI here, with
     * its own engine on the same root) gives it its first clarification. The session's host hears
     * that the list changed, finds the issue in resources/list, and hears of each later change. So
     * it does after the ledger folder was removed and made again while the session ran (the
     * project's state cleared, a checkout): the session watches the folder of that name, not the
     * one it found at its start.
     */
    @Test
    void anIssueAnotherProcessStartsAfterTheSessionIsListedAndItsChangesNotified() throws Exception {
        TestRoot root = mesh();
        ok(root.cli("clarify", "ask", "--issue", "5", "--from", "engineer", "--to", "architect", "Before?"));
        LinkedBlockingQueue<List<McpSchema.Resource>> lists = new LinkedBlockingQueue<>();
        LinkedBlockingQueue<List<McpSchema.ResourceContents>> updates = new LinkedBlockingQueue<>();
        McpAsyncClient engineer = McpClient.async(transport(root.root, "engineer"))
                .requestTimeout(Duration.ofSeconds(60)).initializationTimeout(Duration.ofSeconds(60))
                .resourcesChangeConsumer(resources -> Mono.fromRunnable(() -> lists.add(resources)))
                .resourcesUpdateConsumer(contents -> Mono.fromRunnable(() -> updates.add(contents))).build();
        open.add(engineer::close);
        engineer.initialize().block(Duration.ofSeconds(60));
        assertEquals(List.of("agentx://issue/5"), uris(engineer.listResources().block(Duration.ofSeconds(30))
                .resources()));

        // the architect asks the engineer on a new issue from another process
        ok(root.cli("clarify", "ask", "--issue", "700", "--from", "architect", "--to", "engineer", "new"));
        List<McpSchema.Resource> listed = lists.poll(30, TimeUnit.SECONDS);
        assertTrue(listed != null, "no notifications/resources/list_changed within 30 s; stderr: " + stderr);
        assertTrue(uris(listed).contains("agentx://issue/700"), listed.toString());
        assertEquals(List.of("agentx://issue/5", "agentx://issue/700"),
                uris(engineer.listResources().block(Duration.ofSeconds(30)).resources()).stream().sorted().toList());
        // a later change of the issue (its answer, again by another process) is notified as updated
        ok(root.cli("clarify", "answer", "CLR-700-001", "--from", "engineer", "Here it is"));
        assertTrue(awaitUpdate(updates, "agentx://issue/700", "Here it is") != null,
                "no notifications/resources/updated for the answer within 30 s; stderr: " + stderr);

        // the ledger folder goes, and comes back as a checkout or the next writer makes it
        Path ledgers = root.state().resolve("clarifications");
        try (java.util.stream.Stream<Path> files = Files.walk(ledgers)) {
            for (Path p : files.sorted(java.util.Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(p);
            }
        }
        Files.createDirectories(ledgers);
        lists.clear();
        ok(root.cli("clarify", "ask", "--issue", "701", "--from", "architect", "--to", "engineer", "newer"));
        listed = awaitList(lists, "agentx://issue/701");
        assertTrue(listed != null, "no notifications/resources/list_changed with issue 701 within 30 s; stderr: "
                + stderr);
        assertTrue(uris(engineer.listResources().block(Duration.ofSeconds(30)).resources())
                .contains("agentx://issue/701"));
        ok(root.cli("clarify", "answer", "CLR-701-001", "--from", "engineer", "Here too"));
        assertTrue(awaitUpdate(updates, "agentx://issue/701", "Here too") != null,
                "no notifications/resources/updated for issue 701 within 30 s; stderr: " + stderr);
    }

    private static void ok(TestRoot.Run run) {
        assertEquals(0, run.code(), run.err());
    }

    private static List<String> uris(List<McpSchema.Resource> resources) {
        return resources.stream().map(McpSchema.Resource::uri).toList();
    }

    /** The first resource list, of those the host fetched on list_changed, holding {@code uri}; null if none within 30 s. */
    private static List<McpSchema.Resource> awaitList(LinkedBlockingQueue<List<McpSchema.Resource>> lists, String uri)
            throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (true) {
            long left = deadline - System.nanoTime();
            List<McpSchema.Resource> list = left > 0 ? lists.poll(left, TimeUnit.NANOSECONDS) : null;
            if (list == null || uris(list).contains(uri)) {
                return list;
            }
        }
    }

    /** The first update of {@code uri} whose text contains {@code text}, within 30 s; null if none came. */
    private static List<McpSchema.ResourceContents> awaitUpdate(LinkedBlockingQueue<List<McpSchema.ResourceContents>>
            updates, String uri, String text) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (true) {
            long left = deadline - System.nanoTime();
            List<McpSchema.ResourceContents> update = left > 0 ? updates.poll(left, TimeUnit.NANOSECONDS) : null;
            if (update == null || update.stream().anyMatch(c -> c.uri().equals(uri)
                    && ((McpSchema.TextResourceContents) c).text().contains(text))) {
                return update;
            }
        }
    }

    @Test
    void theSameConversationGivesTheSameLedgerAsTheCli() throws Exception {
        TestRoot viaMcp = mesh();
        McpSyncClient engineer = client(viaMcp.root, "engineer");
        McpSyncClient architect = client(viaMcp.root, "architect");
        McpSyncClient pm = client(viaMcp.root, "product-manager");
        ok(call(engineer, "clarify_ask", Map.of("issue", 12, "to", "architect", "question", "Cache where?",
                "topic", "Caching", "options", List.of("Redis", "In process"))));
        ok(call(architect, "clarify_answer", Map.of("id", "CLR-12-001", "answer", "2")));
        ok(call(engineer, "clarify_followup", Map.of("id", "CLR-12-001", "question", "Eviction?")));
        ok(call(architect, "clarify_answer", Map.of("id", "CLR-12-001", "answer", "LRU")));
        ok(call(engineer, "clarify_resolve", Map.of("id", "CLR-12-001", "note", "In-process LRU")));
        ok(call(architect, "clarify_ask", Map.of("issue", 12, "to", "product-manager", "question", "Offline mode?",
                "blocking", false)));
        ok(call(pm, "clarify_escalate", Map.of("id", "CLR-12-002", "reason", "Needs the PO")));

        TestRoot viaCli = new TestRoot(dir.resolve("cli"), MutableClock.at("2026-01-01T00:00:00Z"));
        Workflows.mesh(viaCli);
        List<String[]> commands = List.of(
                new String[] {"clarify", "ask", "--issue", "12", "--from", "engineer", "--to", "architect",
                        "--topic", "Caching", "--option", "Redis", "--option", "In process", "Cache where?"},
                new String[] {"clarify", "answer", "CLR-12-001", "--from", "architect", "2"},
                new String[] {"clarify", "followup", "CLR-12-001", "Eviction?"},
                new String[] {"clarify", "answer", "CLR-12-001", "--from", "architect", "LRU"},
                new String[] {"clarify", "resolve", "CLR-12-001", "--by", "engineer", "-m", "In-process LRU"},
                new String[] {"clarify", "ask", "--issue", "12", "--from", "architect", "--to", "product-manager",
                        "--non-blocking", "Offline mode?"},
                new String[] {"clarify", "escalate", "CLR-12-002", "--by", "product-manager", "-m", "Needs the PO"});
        for (String[] c : commands) {
            TestRoot.Run run = viaCli.cli(c);
            assertEquals(0, run.code(), String.join(" ", c) + ": " + run.err());
        }
        assertEquals(withoutTimes(viaCli.state().resolve("clarifications/issue-12.json")),
                withoutTimes(viaMcp.state().resolve("clarifications/issue-12.json")));
    }

    // ---- helpers ---------------------------------------------------------------------------

    private static final String INITIALIZE = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{"
            + "\"protocolVersion\":\"2024-11-05\",\"capabilities\":{},\"clientInfo\":{\"name\":\"t\",\"version\":\"1\"}}}";
    private static final String INITIALIZED = "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}";

    private static String request(int id, String method, Object params) throws Exception {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("jsonrpc", "2.0");
        m.put("id", id);
        m.put("method", method);
        if (params != null) {
            m.put("params", params);
        }
        return JSON.writeValueAsString(m);
    }

    /** A server process driven line by line, as a host that writes its own JSON-RPC; stderr goes to {@code err}. */
    private record Raw(Process process, java.io.Writer in, LinkedBlockingQueue<String> out, Path err) {
        void send(String line) throws Exception {
            in.write(line + "\n");
            in.flush();
        }

        /** The next message the server writes (a minute at most). */
        JsonNode next() throws Exception {
            String line = out.poll(60, TimeUnit.SECONDS);
            assertTrue(line != null && !line.isEmpty(), "no message from the server within 60 s: "
                    + Files.readString(err));
            return JSON.readTree(line);
        }

        /** The next {@code n} answers by id, in whatever order they come; notifications are passed over. */
        Map<Integer, JsonNode> answers(int n) throws Exception {
            Map<Integer, JsonNode> byId = new LinkedHashMap<>();
            while (byId.size() < n) {
                JsonNode m = next();
                if (m.has("id")) {
                    byId.put(m.get("id").asInt(), m);
                }
            }
            return byId;
        }

        /** Every message until the server closes stdout; then it has ended. */
        List<JsonNode> rest() throws Exception {
            List<JsonNode> messages = new ArrayList<>();
            for (String line = out.poll(60, TimeUnit.SECONDS); line != null && !line.isEmpty();
                    line = out.poll(60, TimeUnit.SECONDS)) {
                messages.add(JSON.readTree(line));
            }
            assertTrue(process.waitFor(30, TimeUnit.SECONDS), "the server ends when its input ends");
            return messages;
        }
    }

    private Raw raw(TestRoot root, Map<String, String> env, String agent) throws Exception {
        return raw(root, env, "--agent", agent);
    }

    /** {@code agentx --root ROOT mcp MCPARGS} with {@code env} added to this process's environment. */
    private Raw raw(TestRoot root, Map<String, String> env, String... mcpArgs) throws Exception {
        Path err = Files.createTempFile(dir, "stderr", ".log");
        List<String> args = new ArrayList<>(List.of("--root", root.root.toString(), "mcp"));
        args.addAll(List.of(mcpArgs));
        ProcessBuilder b = dev.agentx.clarify.support.Jvm.builder(Main.class, args.toArray(String[]::new))
                .redirectError(err.toFile());
        b.environment().putAll(env);
        Process p = b.start();
        open.add(p::destroyForcibly);
        LinkedBlockingQueue<String> out = new LinkedBlockingQueue<>();
        Thread reader = new Thread(() -> {
            try (var lines = new java.io.BufferedReader(new java.io.InputStreamReader(p.getInputStream(),
                    StandardCharsets.UTF_8))) {
                for (String line = lines.readLine(); line != null; line = lines.readLine()) {
                    out.add(line);
                }
            } catch (java.io.IOException e) {
                // the process ended
            }
            out.add(""); // the end of the output
        }, "raw-host-stdout");
        reader.setDaemon(true);
        reader.start();
        return new Raw(p, new java.io.OutputStreamWriter(p.getOutputStream(), StandardCharsets.UTF_8), out, err);
    }

    private TestRoot mesh() {
        TestRoot root = new TestRoot(dir.resolve("project"), MutableClock.at("2026-01-01T00:00:00Z"));
        Workflows.mesh(root);
        return root;
    }

    /**
     * The SDK's stdio client, one message sent at a time. Its sendMessage gives up with "Failed to
     * enqueue message" when two threads send at once (java-sdk issue 875, fixed after 0.17.0): the
     * test thread's tool call and the client's own resources/list, which it sends when the server
     * says the resource list changed (a question on a new issue does).
     */
    private static final class SerializedStdioClientTransport extends StdioClientTransport {
        SerializedStdioClientTransport(ServerParameters params, JacksonMcpJsonMapper json) {
            super(params, json);
        }

        @Override
        public synchronized reactor.core.publisher.Mono<Void> sendMessage(McpSchema.JSONRPCMessage message) {
            return super.sendMessage(message);
        }
    }

    private StdioClientTransport transport(Path root, String agent) {
        return transport(root, Map.of(), "--agent", agent);
    }

    /** The server with {@code env} added to this process's environment and {@code mcpArgs} after {@code mcp}. */
    private StdioClientTransport transport(Path root, Map<String, String> env, String... mcpArgs) {
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        List<String> args = new ArrayList<>(List.of("-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-Xmx128m", "-cp",
                System.getProperty("java.class.path"), Main.class.getName(), "--root", root.toString(), "mcp"));
        args.addAll(List.of(mcpArgs));
        ServerParameters params = ServerParameters.builder(java).args(args).env(env).build();
        StdioClientTransport transport = new SerializedStdioClientTransport(params,
                new JacksonMcpJsonMapper(new ObjectMapper()));
        String who = String.join(" ", mcpArgs) + env;
        transport.setStdErrorHandler(line -> stderr.add(who + ": " + line));
        return transport;
    }

    private McpSyncClient client(Path root, String agent) {
        return client(root, Map.of(), "--agent", agent);
    }

    private McpSyncClient client(Path root, Map<String, String> env, String... mcpArgs) {
        McpSyncClient client = McpClient.sync(transport(root, env, mcpArgs)).requestTimeout(Duration.ofSeconds(180))
                .initializationTimeout(Duration.ofSeconds(60)).build();
        open.add(client::close);
        client.initialize();
        return client;
    }

    /** The tool's result; a call the session could not make fails with what the servers wrote to stderr. */
    private McpSchema.CallToolResult call(McpSyncClient client, String tool, Map<String, Object> args) {
        try {
            return client.callTool(new McpSchema.CallToolRequest(tool, args));
        } catch (McpError e) {
            throw e; // the server's answer: an error of the protocol
        } catch (RuntimeException e) {
            throw new AssertionError("calling " + tool + " failed: " + e + "\nstderr of the servers: " + stderr, e);
        }
    }

    private McpSchema.CallToolResult ok(McpSchema.CallToolResult r) {
        assertFalse(Boolean.TRUE.equals(r.isError()), text(r) + "\nstderr: " + stderr);
        return r;
    }

    private static String text(McpSchema.CallToolResult r) {
        return ((McpSchema.TextContent) r.content().get(0)).text();
    }

    private static JsonNode data(McpSchema.CallToolResult r) {
        return JSON.valueToTree(r.structuredContent());
    }

    /** The agent's inbox once it holds {@code questions} questions (another process asks meanwhile). */
    private JsonNode awaitInbox(McpSyncClient client, int questions) throws InterruptedException {
        Supplier<JsonNode> inbox = () -> data(ok(call(client, "clarify_inbox", Map.of())));
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        JsonNode last = inbox.get();
        while (last.get("questions").size() < questions && System.nanoTime() < deadline) {
            Thread.sleep(100);
            last = inbox.get();
        }
        assertEquals(questions, last.get("questions").size(), last.toString());
        return last;
    }

    /** The ledger with every time stamp blanked: the two runs happened at different times. */
    private static JsonNode withoutTimes(Path ledger) throws Exception {
        JsonNode node = JSON.readTree(Files.readString(ledger, StandardCharsets.UTF_8));
        blank(node);
        return node;
    }

    private static void blank(JsonNode node) {
        if (node instanceof ObjectNode o) {
            List<String> names = new ArrayList<>();
            o.fieldNames().forEachRemaining(names::add);
            for (String n : names) {
                JsonNode v = o.get(n);
                if (v.isTextual() && v.asText().matches("\\d{4}-\\d\\d-\\d\\dT.*Z")) {
                    o.put(n, "<time>");
                } else {
                    blank(v);
                }
            }
        } else if (node.isArray()) {
            node.forEach(McpServerTest::blank);
        }
    }
}
