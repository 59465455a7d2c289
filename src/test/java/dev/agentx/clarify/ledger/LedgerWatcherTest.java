package dev.agentx.clarify.ledger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The ledger folder's watch as the MCP server and the dashboard use it: which files are changes,
 * and that a ledger made by any writer is seen, whatever happened to the folder meanwhile.
 */
class LedgerWatcherTest {
    @TempDir
    Path dir;

    private final List<LedgerWatcher> open = new ArrayList<>();
    /** The issues the listener was told of, in order. */
    private final LinkedBlockingQueue<Integer> changes = new LinkedBlockingQueue<>();

    @AfterEach
    void close() {
        open.forEach(LedgerWatcher::close);
    }

    private Path watch(Duration recheck) throws IOException {
        return watch(Files.createDirectories(dir.resolve("state/clarifications")), recheck);
    }

    private Path watch(Path folder, Duration recheck) {
        LedgerWatcher w = new LedgerWatcher(folder, recheck);
        open.add(w);
        w.onChange(changes::add);
        return folder;
    }

    @Test
    void aNewLedgerIsAChangeAndTheOtherFilesOfTheFolderAreNone() throws Exception {
        Path folder = watch(Duration.ofSeconds(30));
        // what the writers of issue 8 leave beside its ledger, and names that only look like one
        write(folder.resolve("issue-8.json.lock"));
        write(folder.resolve(".issue-8.json.tmp-1f2e"));
        write(folder.resolve(".issue-8.json.queue"));
        write(folder.resolve(".queue/8-0001767225600000-42-1.req"));
        write(folder.resolve("issue-008.json"));
        write(folder.resolve("issue-8.json.stale-1"));
        write(folder.resolve("notes.txt"));
        ledger(folder, 7);
        // notifications come in order: had any of those files been taken for a ledger, it would come first
        assertEquals(7, next());
        ledger(folder, 7);
        assertEquals(7, next());
        assertTrue(changes.isEmpty(), changes.toString());
    }

    /**
     * A folder with no project yet: the watcher makes nothing (a made {@code .agentx/} would turn
     * the folder into a project root for every command below it), and hears of the first ledger
     * once a writer makes the folders and writes it, also when that happens before the watcher's
     * thread first looks at the folder (the ledger is then new, not part of what was there at the
     * start). Twenty projects, so that both orders of the writer and that first look occur.
     */
    @Test
    void aFolderThatDoesNotExistIsNotMadeAndItsFirstLedgerIsAChange() throws Exception {
        for (int i = 0; i < 20; i++) {
            Path project = Files.createDirectories(dir.resolve("project-" + i));
            Path folder = watch(project.resolve(".agentx/state/clarifications"), Duration.ofSeconds(30));
            assertFalse(Files.exists(project.resolve(".agentx")), "no project made");
            Files.createDirectories(folder);
            ledger(folder, 100 + i);
            awaitChangeOf(100 + i);
            open.remove(open.size() - 1).close();
        }
    }

    /**
     * The folders a writer makes one below the other, the next of them made just as the watcher
     * begins to watch the nearest one there was: the watch never hears of that level, so the
     * watcher must see it there when its watch has begun, and watch it instead. The recheck is
     * longer than the wait, so only a watch can tell of the ledger in time.
     */
    @Test
    void aLevelMadeWhileTheAncestorsWatchBeganIsWatchedInstead() throws Exception {
        Path project = Files.createDirectories(dir.resolve("project"));
        Path folder = project.resolve(".agentx/state/clarifications");
        java.util.concurrent.atomic.AtomicBoolean once = new java.util.concurrent.atomic.AtomicBoolean();
        LedgerWatcher w = new LedgerWatcher(folder, Duration.ofMinutes(5), () -> {
            if (once.compareAndSet(false, true)) {
                try {
                    Files.createDirectories(project.resolve(".agentx/state")); // a writer, meanwhile
                } catch (IOException e) {
                    throw new java.io.UncheckedIOException(e);
                }
            }
        });
        open.add(w);
        w.onChange(changes::add);
        assertTrue(once.get(), "the writer made its levels as the watch of " + project + " began");
        Files.createDirectories(folder);
        ledger(folder, 9);
        assertEquals(9, next());
    }

    @Test
    void aLedgerMadeAfterTheFolderWasRemovedAndMadeAgainIsAChange() throws Exception {
        Path folder = watch(Duration.ofSeconds(30));
        ledger(folder, 3);
        assertEquals(3, next());
        removeAll(folder);
        Files.createDirectories(folder); // as the next writer does (the watcher may have been first)
        ledger(folder, 4);
        awaitChangeOf(4);
        ledger(folder, 4);
        awaitChangeOf(4);
    }

    @Test
    void aFolderMovedAwayAndMadeAnewIsWatchedFromTheNextLook() throws Exception {
        Path folder = watch(Duration.ofMillis(200));
        ledger(folder, 3);
        assertEquals(3, next());
        // the old watch follows the moved folder; the look at the folder finds another one there
        Files.move(folder, dir.resolve("state/clarifications.old"), StandardCopyOption.ATOMIC_MOVE);
        Files.createDirectories(folder);
        ledger(folder, 5);
        awaitChangeOf(5);
        ledger(folder, 5);
        awaitChangeOf(5);
    }

    /** The next issue told of, within 30 s. */
    private int next() throws InterruptedException {
        Integer issue = changes.poll(30, TimeUnit.SECONDS);
        assertTrue(issue != null, "no change within 30 s");
        return issue;
    }

    /** Waits (30 s at most) until the listener is told of {@code issue}; others told of before are passed over. */
    private void awaitChangeOf(int issue) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        List<Integer> others = new ArrayList<>();
        while (true) {
            long left = deadline - System.nanoTime();
            Integer next = left > 0 ? changes.poll(left, TimeUnit.NANOSECONDS) : null;
            assertTrue(next != null, "no change of #" + issue + " within 30 s; others: " + others);
            if (next == issue) {
                return;
            }
            others.add(next);
        }
    }

    /** A ledger written as the store writes it: a temporary file renamed over the ledger's name. */
    private static void ledger(Path folder, int issue) throws IOException {
        Path temp = folder.resolve(".issue-" + issue + ".json.tmp-" + System.nanoTime());
        Files.writeString(temp, "{\"issueNumber\":" + issue + ",\"clarifications\":[]," + System.nanoTime() + "}",
                StandardCharsets.UTF_8);
        Files.move(temp, folder.resolve("issue-" + issue + ".json"), StandardCopyOption.ATOMIC_MOVE,
                StandardCopyOption.REPLACE_EXISTING);
    }

    private static void write(Path file) throws IOException {
        Files.createDirectories(file.getParent());
        Files.writeString(file, "x", StandardCharsets.UTF_8);
    }

    private static void removeAll(Path folder) throws IOException {
        try (Stream<Path> files = Files.walk(folder)) {
            for (Path p : files.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(p);
            }
        }
    }
}
