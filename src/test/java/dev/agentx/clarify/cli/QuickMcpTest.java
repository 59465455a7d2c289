package dev.agentx.clarify.cli;

import static dev.agentx.clarify.cli.ShortcutRuns.run;

import dev.agentx.clarify.cli.ShortcutRuns.Result;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;

import dev.agentx.clarify.support.MutableClock;
import dev.agentx.clarify.support.TestRoot;
import dev.agentx.clarify.support.Workflows;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code agentx mcp} without picocli ({@link QuickMcp}) takes only the plain command lines, and a
 * refused start ends as on picocli's model: the same exit code and messages, nothing on stdout.
 * (A session that starts is driven over stdio by McpServerTest, through this path.)
 */
class QuickMcpTest {
    @TempDir
    Path dir;

    @Test
    void onlyPlainCommandLinesAreTaken() {
        QuickMcp.Args a = QuickMcp.parse(new String[] {"mcp", "--agent", "engineer"});
        assertNotNull(a);
        assertEquals("engineer", a.agent());
        assertNull(a.root());
        a = QuickMcp.parse(new String[] {"--root=/tmp/p", "mcp", "--agent=architect"});
        assertNotNull(a);
        assertEquals(Path.of("/tmp/p"), a.root());
        assertEquals("architect", a.agent());
        assertNotNull(QuickMcp.parse(new String[] {"--root", "/tmp/p", "mcp"}));
        for (List<String> picocli : List.of(List.of("mcp", "--help"), List.of("mcp", "--agent"),
                List.of("mcp", "--agent", "a", "--agent", "b"), List.of("mcp", "--agent", "-x"),
                List.of("mcp", "--agent", "@file"), List.of("--json", "mcp", "--agent", "a"),
                List.of("--root", "a", "--root", "b", "mcp"), List.of("mcp", "extra"), List.of("clarify"),
                List.of("--root", "mcp", "mcp"), List.of("mcp", "-V"))) {
            assertNull(QuickMcp.parse(picocli.toArray(String[]::new)), picocli.toString());
        }
    }

    @Test
    void aRefusedStartEndsAsOnPicocli() throws Exception {
        MutableClock clock = MutableClock.at("2026-02-26T10:00:00Z");
        TestRoot fast = new TestRoot(dir.resolve("fast"), clock);
        TestRoot full = new TestRoot(dir.resolve("full"), clock);
        for (TestRoot r : List.of(fast, full)) {
            Workflows.mesh(r);
        }
        for (List<String> line : List.of(List.of("mcp"), List.of("mcp", "--agent", "nobody"),
                List.of("mcp", "--agent=nobody"))) {
            String[] args = line.toArray(String[]::new);
            Result quick = run(fast, true, Map.of(), args);
            Result model = run(full, false, Map.of(), args);
            assertEquals(2, model.code(), line + ": " + model.err());
            assertEquals(model.code(), quick.code(), line.toString());
            assertEquals(model.out(), quick.out(), line.toString());
            assertEquals(model.err().replace(full.root.toString(), "ROOT"), quick.err().replace(fast.root.toString(),
                    "ROOT"), line.toString());
            assertEquals("", quick.out(), line.toString());
        }
        Result quick = run(fast, true, Map.of(McpCommand.AGENT_ENV, "nobody"), "mcp");
        Result model = run(full, false, Map.of(McpCommand.AGENT_ENV, "nobody"), "mcp");
        assertEquals(model.code(), quick.code());
        assertEquals(model.err().replace(full.root.toString(), "ROOT"), quick.err().replace(fast.root.toString(),
                "ROOT"));
    }
}
