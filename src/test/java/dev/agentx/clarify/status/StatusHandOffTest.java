package dev.agentx.clarify.status;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class StatusHandOffTest {
    @TempDir
    Path state;

    @Test
    void whatIsLeftIsListedWithItsIssueAndAgentsUntilDone() {
        StatusHandOff handOff = new StatusHandOff(state);
        assertFalse(handOff.any(), "no directory yet: nothing left");
        handOff.leave(7, Set.of("engineer", "architect"));
        handOff.leave(9, Set.of("reviewer"));
        assertTrue(handOff.any());
        List<StatusHandOff.Pending> left = handOff.list();
        assertEquals(2, left.size());
        StatusHandOff.Pending seven = left.stream().filter(p -> p.issue() == 7).findFirst().orElseThrow();
        assertEquals(Set.of("engineer", "architect"), seven.agents());
        handOff.done(left);
        assertFalse(handOff.any());
        assertEquals(List.of(), handOff.list());
    }

    @Test
    void aHalfWrittenFileIsNeverReadAndOneAbandonedIsRemoved() throws Exception {
        StatusHandOff handOff = new StatusHandOff(state);
        Files.createDirectories(handOff.directory());
        Path writing = handOff.directory().resolve("7-100-1.tmp");
        Path abandoned = handOff.directory().resolve("7-101-1.tmp");
        Files.writeString(writing, "engin");
        Files.writeString(abandoned, "arch");
        Files.setLastModifiedTime(abandoned, FileTime.from(Instant.now().minus(Duration.ofMinutes(5))));
        assertFalse(handOff.any(), "temporary files are not mirrors left");
        assertEquals(List.of(), handOff.list());
        assertTrue(Files.exists(writing), "its writer may still rename it");
        assertFalse(Files.exists(abandoned));
    }

    @Test
    void aFileThatNamesNoIssueIsRemoved() throws Exception {
        StatusHandOff handOff = new StatusHandOff(state);
        Files.createDirectories(handOff.directory());
        Files.writeString(handOff.directory().resolve("notes.txt"), "hello");
        assertEquals(List.of(), handOff.list());
        assertFalse(handOff.any());
    }
}
