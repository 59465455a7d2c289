package dev.agentx.clarify.docs;

import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.agentx.clarify.support.OnlyDocumentedState;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.opentest4j.AssertionFailedError;

/** The check the CLI, MCP and crash suites end with: what docs/protocol.md lists, and nothing else. */
class StateOnDiskTest {
    @TempDir
    Path dir;

    private Path stateWithEveryDocumentedFile() throws Exception {
        Path state = dir.resolve(".agentx/state");
        for (String f : List.of("clarifications/issue-1.json", "clarifications/issue-42.json.lock", "agent-status.json",
                "agent-status.json.lock", "events.jsonl", "monitor-index.json", "open-records/engineer/7", "monitor-active/7", "channel-failures.json",
                "channel-failures.json.lock", ".runtime/issue-1.json.queue", ".runtime/changes/1-2-3-4.req")) {
            Files.createDirectories(state.resolve(f).getParent());
            Files.writeString(state.resolve(f), "");
        }
        return state;
    }

    @Test
    void theDocumentedFilesAndTheRuntimeFolderPass() throws Exception {
        stateWithEveryDocumentedFile();
        OnlyDocumentedState.assertOnlyDocumentedUnder(dir);
    }

    @Test
    void aFileTheDocsDoNotListFailsNamingIt() throws Exception {
        Path state = stateWithEveryDocumentedFile();
        for (String stray : List.of(".agent-status.json.queue", "clarifications/.issue-1.json.queue",
                "clarifications/issue-x.json", ".agent-status.pending/1-2-3")) {
            Files.createDirectories(state.resolve(stray).getParent());
            Files.writeString(state.resolve(stray), "");
            AssertionFailedError e = assertThrows(AssertionFailedError.class,
                    () -> OnlyDocumentedState.assertOnlyDocumentedUnder(dir));
            assertTrue(e.getMessage().contains(stray), e.getMessage());
            Files.delete(state.resolve(stray));
        }
    }
}
