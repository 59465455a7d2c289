package dev.agentx.clarify.files;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Marks are links of one empty file of the runtime folder, and outlive its removal. */
class MarkFilesTest {
    @TempDir
    Path state;

    private static Object key(Path p) throws Exception {
        return Files.readAttributes(p, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS).fileKey();
    }

    private static long links(Path p) throws Exception {
        return ((Number) Files.getAttribute(p, "unix:nlink", LinkOption.NOFOLLOW_LINKS)).longValue();
    }

    @Test
    void marksAreLinksOfOneFileAndNeedNoInodeOfTheirOwn() throws Exception {
        Path runtime = RuntimeFolder.in(state);
        Path a = state.resolve("monitor-active").resolve("7");
        Path b = state.resolve("open-records").resolve("engineer").resolve("7");
        MarkFiles.make(a, runtime);
        MarkFiles.make(b, runtime);
        MarkFiles.make(b, runtime); // there already: nothing changes
        Path source = runtime.resolve(MarkFiles.SOURCE);
        assertEquals(key(source), key(a), "the folder was made and the mark linked");
        assertEquals(key(source), key(b));
        assertEquals(3, links(source));
        assertEquals(0, Files.size(a));
        RuntimeFolder.leave(runtime);
    }

    @Test
    void theMarksStayWhenTheRuntimeFolderGoesAndTheNextOneGetsANewSource() throws Exception {
        Path runtime = RuntimeFolder.in(state);
        Path first = state.resolve("monitor-active").resolve("1");
        MarkFiles.make(first, runtime);
        Object before = key(first);
        RuntimeFolder.leave(runtime); // the last one out: the folder and its mark file go
        assertTrue(Files.notExists(runtime));
        assertTrue(Files.exists(first), "a mark is a name of its own");
        Path second = state.resolve("monitor-active").resolve("2");
        MarkFiles.make(second, runtime);
        assertEquals(key(runtime.resolve(MarkFiles.SOURCE)), key(second));
        assertNotEquals(before, key(second));
        assertEquals(before, key(first));
        RuntimeFolder.leave(runtime);
    }

    @Test
    void aMarkFileSweptFromUnderAWriterIsMadeAgain() throws Exception {
        Path runtime = RuntimeFolder.in(state);
        MarkFiles.make(state.resolve("m").resolve("1"), runtime);
        Files.delete(runtime.resolve(MarkFiles.SOURCE));
        Path mark = state.resolve("m").resolve("2");
        MarkFiles.make(mark, runtime);
        assertEquals(key(runtime.resolve(MarkFiles.SOURCE)), key(mark));
        RuntimeFolder.leave(runtime);
    }
}
