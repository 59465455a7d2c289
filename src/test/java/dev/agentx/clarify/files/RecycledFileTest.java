package dev.agentx.clarify.files;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class RecycledFileTest {
    @TempDir
    Path dir;

    @Test
    void replacementsReuseTheReplacedInodeAndLeaveOnlyTheSpare() throws Exception {
        Path target = dir.resolve("agent-status.json");
        RecycledFile file = new RecycledFile(target);
        Set<Object> inodes = new HashSet<>();
        for (int i = 0; i < 50; i++) {
            String text = "content " + i + " " + "x".repeat(i % 7 * 100);
            write(file, text);
            assertEquals(text, Files.readString(target));
            inodes.add(Files.getAttribute(target, "unix:ino"));
        }
        // the first write makes the file and the second the spare; from then on the two take turns
        assertEquals(2, inodes.size(), "inodes the file had: " + inodes);
        assertEquals(List.of(".agent-status.json.spare", "agent-status.json"), names());
    }

    @Test
    void aReaderNeverSeesATornFile() throws Exception {
        Path target = dir.resolve("agent-status.json");
        RecycledFile file = new RecycledFile(target);
        String small = "{\"a\":1}";
        String large = "{\"b\":\"" + "y".repeat(20_000) + "\"}";
        write(file, small);
        AtomicBoolean done = new AtomicBoolean();
        List<String> seen = new ArrayList<>();
        Thread reader = new Thread(() -> {
            while (!done.get()) {
                try {
                    String s = Files.readString(target);
                    if (!s.equals(small) && !s.equals(large)) {
                        synchronized (seen) {
                            seen.add(s.length() > 40 ? s.substring(0, 40) + "... (" + s.length() + ")" : s);
                        }
                    }
                } catch (java.io.IOException e) {
                    synchronized (seen) {
                        seen.add(e.toString());
                    }
                }
            }
        });
        reader.start();
        for (int i = 0; i < 2000; i++) {
            write(file, i % 2 == 0 ? large : small);
        }
        done.set(true);
        reader.join();
        assertEquals(List.of(), seen);
    }

    @Test
    void aWriterKilledHalfWayLeavesNothingTheNextCannotMend() throws Exception {
        Path target = dir.resolve("agent-status.json");
        RecycledFile file = new RecycledFile(target);
        write(file, "one");
        write(file, "two");
        // killed after giving the file its second name, before the rename: the live file has two names
        Files.createLink(dir.resolve(".agent-status.json.spare-old"), target);
        write(file, "three");
        assertEquals("three", Files.readString(target));
        assertEquals(List.of(".agent-status.json.spare", "agent-status.json"), names());
        // killed after the rename, before the replaced inode became the spare: no spare, an old name
        Files.move(dir.resolve(".agent-status.json.spare"), dir.resolve(".agent-status.json.spare-old"));
        write(file, "four");
        assertEquals("four", Files.readString(target));
        assertEquals(List.of(".agent-status.json.spare", "agent-status.json"), names());
    }

    @Test
    void aWriteThatIsNotCommittedChangesNothing() throws Exception {
        Path target = dir.resolve("agent-status.json");
        RecycledFile file = new RecycledFile(target);
        write(file, "kept");
        write(file, "kept still");
        file.discard(file.prepare("never".getBytes(StandardCharsets.UTF_8))); // e.g. the lock was lost
        assertEquals("kept still", Files.readString(target));
        write(file, "next");
        assertEquals("next", Files.readString(target));
        assertFalse(Files.exists(dir.resolve(".agent-status.json.spare-old")));
    }

    @Test
    void theFirstWriteMakesTheDirectory() throws Exception {
        Path target = dir.resolve("state/agent-status.json");
        write(new RecycledFile(target), "first");
        assertEquals("first", Files.readString(target));
        assertTrue(Files.isDirectory(dir.resolve("state")));
    }

    private static void write(RecycledFile file, String text) {
        file.commit(file.prepare(text.getBytes(StandardCharsets.UTF_8)));
    }

    private List<String> names() throws Exception {
        try (Stream<Path> files = Files.list(dir)) {
            return files.map(p -> p.getFileName().toString()).sorted().toList();
        }
    }
}
