package dev.agentx.clarify.channel;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.agentx.clarify.config.AgentSettings;
import dev.agentx.clarify.protocol.EntryType;
import dev.agentx.clarify.protocol.ThreadEntry;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The command channel against real child processes (small bash agents). */
class CommandChannelTest {
    @TempDir
    Path dir;

    static final QuestionRequest REQUEST = new QuestionRequest("CLR-42-001", 42, "engineer", "architect", "Auth", 1,
            "Which auth? $(touch pwned) `touch pwned2`", List.of("JWT", "Sessions"),
            List.of(new ThreadEntry(1, "engineer", EntryType.QUESTION, "Which auth? $(touch pwned) `touch pwned2`",
                    Instant.parse("2026-02-26T10:00:00Z"))));

    private Path script(String name, String body) throws IOException {
        Path p = dir.resolve(name);
        Files.writeString(p, "#!/usr/bin/env bash\n" + body, StandardCharsets.UTF_8);
        Files.setPosixFilePermissions(p, PosixFilePermissions.fromString("rwxr-xr-x"));
        return p;
    }

    private CommandChannel channel(List<String> argv, int timeoutSeconds, int maxOutput) {
        AgentSettings s = new AgentSettings("command", argv, timeoutSeconds, null, null, null, null, maxOutput, 0, 3);
        return new CommandChannel("architect", s, dir, Map.of("PATH", System.getenv("PATH"), "HOME", dir.toString()),
                new RequestJson(RequestContext.local(dir)));
    }

    static Delivery.Failed failed(Delivery d, String expected) {
        Delivery.Failed f = assertInstanceOf(Delivery.Failed.class, d, d.toString());
        assertTrue(f.error().contains(expected), f.error());
        return f;
    }

    @Test
    void anAgentGetsTheRequestOnStdinAndInItsEnvironmentAndAnswers() throws Exception {
        script("agent.sh", """
                cat > request.json
                printf '%s' "$AGENTX_QUESTION" > question.txt
                printf '%s|%s|%s|%s|%s|%s|%s' "$AGENTX_CLARIFICATION_ID" "$AGENTX_ISSUE" "$AGENTX_FROM" "$AGENTX_TO" \\
                  "$AGENTX_TOPIC" "$AGENTX_ROUND" "$AGENTX_OPTIONS" > env.txt
                echo '{"answer": "JWT, see ADR-42", "choice": 0}'
                """);
        Delivery d = channel(List.of("./agent.sh"), 30, 65536).ask(REQUEST);
        assertEquals(new Delivery.Answered("JWT, see ADR-42", 0, "command"), d);

        JsonNode req = new ObjectMapper().readTree(dir.resolve("request.json").toFile());
        assertEquals(1, req.get("version").asInt());
        assertEquals("CLR-42-001", req.get("id").asText());
        assertEquals(42, req.get("issue").asInt());
        assertEquals("engineer", req.get("from").asText());
        assertEquals("architect", req.get("to").asText());
        assertEquals("Auth", req.get("topic").asText());
        assertEquals(1, req.get("round").asInt());
        assertEquals(REQUEST.question(), req.get("question").asText());
        assertEquals("Sessions", req.get("options").get(1).asText());
        assertEquals("question", req.get("thread").get(0).get("type").asText());
        assertEquals("local", req.get("repository").get("mode").asText());
        assertEquals(dir.toAbsolutePath().normalize().toString(), req.get("repository").get("root").asText());
        assertEquals(42, req.get("issueContext").get("number").asInt());

        assertEquals("CLR-42-001|42|engineer|architect|Auth|1|JWT\nSessions", Files.readString(dir.resolve("env.txt")));
        assertEquals(REQUEST.question(), Files.readString(dir.resolve("question.txt")));
        assertFalse(Files.exists(dir.resolve("pwned")), "user text must never reach a shell");
        assertFalse(Files.exists(dir.resolve("pwned2")), "user text must never reach a shell");
    }

    @Test
    void argvIsPassedWithoutAShell() throws Exception {
        Delivery d = channel(List.of("/bin/echo", "a; touch pwned", "$HOME", "*"), 30, 65536).ask(REQUEST);
        assertEquals(new Delivery.Answered("a; touch pwned $HOME *", null, "command"), d);
        assertFalse(Files.exists(dir.resolve("pwned")));
    }

    @Test
    void aHangingAgentTimesOutAndItsWholeProcessTreeIsKilled() throws Exception {
        script("hang.sh", """
                sleep 300 &
                echo "$$ $!" > pids.txt
                wait
                """);
        long start = System.nanoTime();
        failed(channel(List.of("./hang.sh"), 1, 65536).ask(REQUEST), "gave no answer within 1 s");
        assertTrue(System.nanoTime() - start < TimeUnit.SECONDS.toNanos(20), "returned soon after the timeout");
        for (String pid : Files.readString(dir.resolve("pids.txt")).trim().split(" ")) {
            assertDead(pid);
        }
    }

    /** The process has ended (or ends within 10 s of being killed: SIGKILL is asynchronous). */
    private static void assertDead(String pid) throws Exception {
        Optional<ProcessHandle> h = ProcessHandle.of(Long.parseLong(pid.trim()));
        if (h.isPresent()) {
            try {
                h.get().onExit().get(10, TimeUnit.SECONDS);
            } catch (java.util.concurrent.TimeoutException e) {
                throw new AssertionError("process " + pid + " still runs", e);
            }
            assertFalse(h.get().isAlive(), "process " + pid + " still runs");
        }
    }

    @Test
    void anAgentThatFloodsItsOutputIsKilledAtTheLimit() throws Exception {
        script("flood.sh", """
                echo $$ > pid.txt
                while true; do echo "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"; done
                """);
        failed(channel(List.of("./flood.sh"), 30, 10_000).ask(REQUEST), "printed more than 10000 bytes");
        assertDead(Files.readString(dir.resolve("pid.txt")));
    }

    @Test
    void anAgentThatExitsNonZeroFailsWithItsStderr() throws Exception {
        script("crash.sh", """
                cat > /dev/null
                echo "model quota exhausted" >&2
                exit 3
                """);
        failed(channel(List.of("./crash.sh"), 30, 65536).ask(REQUEST), "exited with code 3: model quota exhausted");
        // a long trace: its end, where the cause is, goes into the note
        script("trace.sh", """
                cat > /dev/null
                for i in $(seq 1 40); do echo "diagnostic line $i with some detail text" >&2; done
                echo "FATAL: the real cause is here" >&2
                exit 1
                """);
        failed(channel(List.of("./trace.sh"), 30, 65536).ask(REQUEST), "diagnostic line 40 with some detail text "
                + "FATAL: the real cause is here");
    }

    @Test
    void aMissingProgramOrACannotAnswerIsAFailure() throws Exception {
        failed(channel(List.of("./no-such-agent"), 30, 65536).ask(REQUEST), "cannot start");
        script("unsure.sh", "cat >/dev/null\necho 'CANNOT_ANSWER: not my area'\n");
        failed(channel(List.of("./unsure.sh"), 30, 65536).ask(REQUEST), "cannot answer: not my area");
        script("silent.sh", "cat >/dev/null\n");
        failed(channel(List.of("./silent.sh"), 30, 65536).ask(REQUEST), "empty answer");
    }

    @Test
    void anAgentThatIgnoresStdinStillAnswers() throws Exception {
        // a request far larger than a pipe buffer, never read by the agent
        String big = "x".repeat(1900);
        List<ThreadEntry> thread = new java.util.ArrayList<>();
        for (int i = 0; i < 200; i++) {
            thread.add(new ThreadEntry(1, "engineer", EntryType.QUESTION, big, Instant.parse("2026-02-26T10:00:00Z")));
        }
        QuestionRequest large = new QuestionRequest("CLR-1-001", 1, "engineer", "architect", "t", 1, "q", List.of(), thread);
        assertEquals(new Delivery.Answered("ok", null, "command"),
                channel(List.of("/bin/echo", "ok"), 30, 65536).ask(large));
    }
}
