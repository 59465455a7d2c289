package dev.agentx.clarify.files;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.agentx.clarify.support.MutableClock;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class RecycledFileTest {
    @TempDir
    Path dir;

    @Test
    void replacementsReuseTheReplacedInodeAndLeaveOnlyTheSpare() throws Exception {
        Path target = dir.resolve("agent-status.json");
        RecycledFile file = new RecycledFile(target, Duration.ZERO, Clock.systemUTC()); // each write finds the spare at rest
        Set<Object> inodes = new HashSet<>();
        for (int i = 0; i < 50; i++) {
            String text = "content " + i + " " + "x".repeat(i % 7 * 100);
            write(file, text);
            assertEquals(text, Files.readString(target));
            inodes.add(Files.getAttribute(target, "unix:ino"));
        }
        // the first write makes the file and the second the spare; from then on the two take turns
        assertEquals(2, inodes.size(), "inodes the file had: " + inodes);
        assertEquals(List.of(".runtime/agent-status.json.spare.1", "agent-status.json"), names());
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

    /**
     * A reader that opened the file before two replacements (a person's {@code cat}, paused) still
     * reads what it opened: the inode it holds became a spare, and a spare is not written over
     * before the grace is past; each write within the grace keeps the inode it replaced as one
     * spare more.
     */
    @Test
    void aSpareReplacedWithinTheGraceIsNotWrittenOver() throws Exception {
        Path target = dir.resolve("agent-status.json");
        RecycledFile file = new RecycledFile(target, Duration.ofMinutes(10), Clock.systemUTC());
        write(file, "one");
        try (java.io.InputStream opened = Files.newInputStream(target)) {
            write(file, "two"); // "one"'s inode is the spare now
            write(file, "three");
            write(file, "four");
            assertEquals("one", new String(opened.readAllBytes(), StandardCharsets.UTF_8));
        }
        assertEquals("four", Files.readString(target));
        assertEquals(List.of(".runtime/agent-status.json.spare.1", ".runtime/agent-status.json.spare.2", ".runtime/agent-status.json.spare.3",
                "agent-status.json"), names(), "one, two and three are spares; no new file is left");
    }

    /**
     * Writes faster than the grace: every write makes a new file until there are as many spares as
     * the grace needs; once they have rested, writes reuse them and allocate nothing, in turn,
     * the longest at rest first.
     */
    @Test
    void sparesKeptWithinTheGraceAreReusedOnceTheyRested() throws Exception {
        Path target = dir.resolve("agent-status.json");
        MutableClock clock = new MutableClock(Instant.now());
        RecycledFile file = new RecycledFile(target, Duration.ofMinutes(1), clock);
        Set<Object> inodes = new HashSet<>();
        for (int i = 0; i < 5; i++) {
            write(file, "burst " + i);
            inodes.add(Files.getAttribute(target, "unix:ino"));
        }
        assertEquals(5, inodes.size(), "each write within the grace made a file");
        assertEquals(5, names().size(), "four spares and the file: " + names());
        clock.advance(Duration.ofMinutes(2));
        for (int i = 0; i < 4; i++) {
            Object spare = Files.getAttribute(dir.resolve(".runtime/agent-status.json.spare." + (i + 1)), "unix:ino");
            write(file, "rested " + i);
            assertEquals("rested " + i, Files.readString(target));
            assertEquals(spare, Files.getAttribute(target, "unix:ino"), "spare " + (i + 1) + " is the file now");
            inodes.add(Files.getAttribute(target, "unix:ino"));
        }
        assertEquals(5, inodes.size(), "no inode made after the spares rested");
        assertEquals(5, names().size());
    }

    /** Writes faster than the grace for longer than the spares last: at most SPARES are kept, the rest freed. */
    @Test
    void thereAreNeverMoreSparesThanSPARES() throws Exception {
        Path target = dir.resolve("agent-status.json");
        RecycledFile file = new RecycledFile(target, Duration.ofMinutes(10), Clock.systemUTC());
        for (int i = 0; i < RecycledFile.SPARES + 5; i++) {
            write(file, "write " + i);
        }
        assertEquals("write " + (RecycledFile.SPARES + 4), Files.readString(target));
        List<String> names = names();
        assertEquals(RecycledFile.SPARES + 1, names.size(), "the spares and the file: " + names);
        assertEquals("write 0", Files.readString(dir.resolve(".runtime/agent-status.json.spare.1")), "the first spare kept");
    }

    /**
     * Spares written over at once (no grace, the worst case): a read that a replacement overlapped
     * (here between its reading and its second look, two writes, the second over the very inode it
     * read) is read again, and returns one write's content whole.
     */
    @Test
    void aReadThatAWriteOverlappedIsReadAgain() throws Exception {
        Path target = dir.resolve("agent-status.json");
        RecycledFile file = new RecycledFile(target, Duration.ZERO, Clock.systemUTC());
        write(file, "{\"n\":1}");
        write(file, "{\"n\":2}");
        Object read = Files.getAttribute(target, "unix:ino");
        AtomicInteger looks = new AtomicInteger();
        file.afterRead(() -> {
            if (looks.getAndIncrement() == 0) {
                write(file, "{\"n\":3333}"); // the spare over in place, renamed over the file
                write(file, "{\"n\":44}"); // the inode just read, over in place, the file again
            }
        });
        assertEquals("{\"n\":44}", new String(file.read(), StandardCharsets.UTF_8));
        assertEquals(read, Files.getAttribute(target, "unix:ino"), "the same inode as the first read");
        assertEquals(2, looks.get(), "read twice");
        assertEquals("{\"n\":44}", new String(file.read(), StandardCharsets.UTF_8), "once when nothing overlaps");
        assertEquals(3, looks.get());
    }

    @Test
    void aWriterKilledHalfWayLeavesNothingTheNextCannotMend() throws Exception {
        Path target = dir.resolve("agent-status.json");
        RecycledFile file = new RecycledFile(target, Duration.ZERO, Clock.systemUTC());
        write(file, "one");
        write(file, "two");
        // killed after giving the file its second name, before the rename: the live file has two names
        Files.createLink(dir.resolve(".runtime/agent-status.json.spare-old"), target);
        write(file, "three");
        assertEquals("three", Files.readString(target));
        assertEquals(List.of(".runtime/agent-status.json.spare.1", "agent-status.json"), names());
        // killed after the rename, before the replaced inode became the spare: no spare, an old name
        Files.move(dir.resolve(".runtime/agent-status.json.spare.1"), dir.resolve(".runtime/agent-status.json.spare-old"));
        write(file, "four");
        assertEquals("four", Files.readString(target));
        List<String> names = names();
        assertEquals(2, names.size(), "one spare and the file: " + names);
        assertTrue(names.get(0).matches("\\.runtime/agent-status\\.json\\.spare\\.\\d+"), names.get(0));
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
        assertFalse(Files.exists(dir.resolve(".runtime/agent-status.json.spare-old")));
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

    /** The files of the folder and of its runtime folder (the spares), but the runtime folder's own {@code in-use}. */
    private List<String> names() throws Exception {
        try (Stream<Path> files = Files.list(dir); Stream<Path> runtime = Files.list(dir.resolve(".runtime"))) {
            return Stream.concat(files.filter(p -> !p.getFileName().toString().equals(".runtime")),
                    runtime.filter(p -> !p.getFileName().toString().equals("in-use")))
                    .map(p -> dir.relativize(p).toString()).sorted().toList();
        }
    }
}
