package dev.agentx.clarify.files;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class JournalTest {
    @TempDir
    Path dir;

    private static byte[] b(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    private static List<String> strings(List<byte[]> records) {
        return records.stream().map(r -> new String(r, StandardCharsets.UTF_8)).toList();
    }

    @Test
    void recordsSurviveReopeningInOrder() {
        Path file = dir.resolve("j");
        try (Journal j = new Journal(file)) {
            assertEquals(List.of(), j.records());
            j.append(b("one"));
            j.append(b(""));
            j.append(b("three"));
        }
        try (Journal j = new Journal(file)) {
            assertEquals(List.of("one", "", "three"), strings(j.records()));
            j.append(b("four"));
        }
        try (Journal j = new Journal(file)) {
            assertEquals(List.of("one", "", "three", "four"), strings(j.records()));
            assertEquals(4, j.size());
        }
    }

    @Test
    void writtenRecordsAreNumberedReadBackWithoutASyncAndCoveredBySyncTo() {
        Path file = dir.resolve("j");
        try (Journal j = new Journal(file)) {
            j.records();
            long a = j.write(b("a"));
            long c = j.write(b("b"));
            assertEquals(a + 1, c);
            j.syncTo(c);
            j.syncTo(a); // already covered: returns at once
            long d = j.write(b("c"));
            assertEquals(c + 1, d);
            j.sync();
            j.sync(); // nothing new
        }
        try (Journal j = new Journal(file)) {
            assertEquals(List.of("a", "b", "c"), strings(j.records()));
        }
    }

    @Test
    void concurrentWritersThatSyncTheirOwnRecordsLoseNothing() throws Exception {
        Path file = dir.resolve("j");
        ExecutorService pool = Executors.newFixedThreadPool(8);
        try (Journal j = new Journal(file)) {
            j.records();
            List<Future<?>> all = new ArrayList<>();
            for (int t = 0; t < 8; t++) {
                int thread = t;
                all.add(pool.submit(() -> {
                    for (int i = 0; i < 100; i++) {
                        long n = j.write(b(thread + "/" + i));
                        if (i % 3 == 0) {
                            j.syncTo(n);
                        }
                    }
                    j.sync();
                }));
            }
            for (Future<?> f : all) {
                f.get(60, TimeUnit.SECONDS);
            }
        } finally {
            pool.shutdown();
        }
        try (Journal j = new Journal(file)) {
            Set<String> got = new HashSet<>(strings(j.records()));
            assertEquals(800, got.size());
            assertTrue(got.contains("7/99"));
        }
    }

    @Test
    void aTornLastRecordIsCutOffAndAppendsGoOnAfterTheGoodPart() throws IOException {
        Path file = dir.resolve("j");
        try (Journal j = new Journal(file)) {
            j.records();
            j.append(b("kept"));
            j.append(b("torn by a crash"));
        }
        long whole = Files.size(file);
        for (long cut : new long[] {whole - 1, whole - 10, 4 + 4 + 4 + 3}) {
            Path copy = dir.resolve("copy-" + cut);
            Files.copy(file, copy);
            try (RandomAccessFile raf = new RandomAccessFile(copy.toFile(), "rw")) {
                raf.setLength(cut);
            }
            try (Journal j = new Journal(copy)) {
                assertEquals(List.of("kept"), strings(j.records()), "cut at " + cut);
                j.append(b("after"));
            }
            try (Journal j = new Journal(copy)) {
                assertEquals(List.of("kept", "after"), strings(j.records()), "cut at " + cut);
            }
        }
    }

    @Test
    void aDamagedRecordBeforeGoodOnesIsCorruptionNotATornTail() throws IOException {
        Path file = dir.resolve("j");
        try (Journal j = new Journal(file)) {
            j.records();
            j.append(b("first"));
            j.append(b("second"));
        }
        byte[] bytes = Files.readAllBytes(file);
        bytes[8] ^= 0x20; // a payload byte of the first record
        Files.write(file, bytes);
        try (Journal j = new Journal(file)) {
            Exception e = assertThrows(RuntimeException.class, j::records);
            assertTrue(e.getMessage().contains("corrupt"), e.getMessage());
        }
        assertEquals(bytes.length, Files.size(file), "nothing is cut off a corrupt journal");
    }

    @Test
    void concurrentAppendsAndCompactionsLoseNothing() throws Exception {
        Path file = dir.resolve("j");
        int threads = 8;
        int each = 200;
        try (Journal j = new Journal(file)) {
            j.records();
            ExecutorService pool = Executors.newFixedThreadPool(threads + 1);
            CountDownLatch go = new CountDownLatch(1);
            List<Future<?>> all = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                int thread = t;
                all.add(pool.submit(() -> {
                    go.await();
                    for (int i = 0; i < each; i++) {
                        j.append(b(thread + ":" + i));
                    }
                    return null;
                }));
            }
            all.add(pool.submit(() -> {
                go.await();
                for (int i = 0; i < 20; i++) {
                    j.compact(records -> records); // keeps everything, rewrites the file
                }
                return null;
            }));
            go.countDown();
            for (Future<?> f : all) {
                f.get(60, TimeUnit.SECONDS);
            }
            pool.shutdown();
        }
        try (Journal j = new Journal(file)) {
            List<String> got = strings(j.records());
            assertEquals(threads * each, got.size());
            Set<String> distinct = new HashSet<>(got);
            assertEquals(threads * each, distinct.size());
            for (int t = 0; t < threads; t++) {
                int last = -1;
                for (String s : got) {
                    if (s.startsWith(t + ":")) {
                        int i = Integer.parseInt(s.substring(s.indexOf(':') + 1));
                        assertEquals(last + 1, i, "one thread's records stay in order");
                        last = i;
                    }
                }
            }
        }
    }

    /**
     * A compaction's fold of a large journal takes seconds: appends must not wait for it. Here the
     * fold waits until another thread has appended and synced three records; they follow the
     * fold's output, in order, and survive reopening.
     */
    @Test
    void appendsGoOnWhileACompactionFoldsAndFollowItsOutput() throws Exception {
        Path file = dir.resolve("j");
        try (Journal j = new Journal(file)) {
            j.records();
            for (int i = 0; i < 10; i++) {
                j.append(b("r" + i));
            }
            CountDownLatch folding = new CountDownLatch(1);
            CountDownLatch appended = new CountDownLatch(1);
            ExecutorService pool = Executors.newSingleThreadExecutor();
            Future<?> compaction = pool.submit(() -> j.compact(records -> {
                folding.countDown();
                try {
                    assertTrue(appended.await(30, TimeUnit.SECONDS), "appends were held up by the fold");
                } catch (InterruptedException e) {
                    throw new IllegalStateException(e);
                }
                return records.subList(8, 10);
            }));
            assertTrue(folding.await(30, TimeUnit.SECONDS));
            for (int i = 10; i < 13; i++) {
                j.append(b("r" + i));
            }
            appended.countDown();
            compaction.get(30, TimeUnit.SECONDS);
            pool.shutdown();
            assertEquals(5, j.size());
            j.append(b("r13"));
        }
        try (Journal j = new Journal(file)) {
            assertEquals(List.of("r8", "r9", "r10", "r11", "r12", "r13"), strings(j.records()));
        }
        assertTrue(Files.notExists(dir.resolve(".j.compact")));
    }

    @Test
    void compactionKeepsWhatTheFoldKeeps() {
        Path file = dir.resolve("j");
        try (Journal j = new Journal(file)) {
            j.records();
            for (int i = 0; i < 10; i++) {
                j.append(b("r" + i));
            }
            j.compact(records -> records.subList(7, 10));
            assertEquals(3, j.size());
            j.append(b("r10"));
        }
        try (Journal j = new Journal(file)) {
            assertEquals(List.of("r7", "r8", "r9", "r10"), strings(j.records()));
        }
        assertThrows(IllegalArgumentException.class, () -> {
            try (Journal j = new Journal(dir.resolve("big"))) {
                j.append(new byte[Journal.MAX_RECORD + 1]);
            }
        });
    }

    /**
     * A compaction from a snapshot its owner keeps in memory: the head replaces the records before
     * the mark, and the records appended after the mark (here while the head is being written)
     * follow it as they are. A mark from before the last compaction is refused.
     */
    @Test
    void compactionFromAMarkWritesTheSnapshotAndKeepsWhatCameAfterTheMark() throws Exception {
        Path file = dir.resolve("j");
        try (Journal j = new Journal(file)) {
            j.records();
            for (int i = 0; i < 10; i++) {
                j.append(b("r" + i));
            }
            Journal.Mark mark = j.mark();
            j.append(b("after-mark"));
            ExecutorService pool = Executors.newSingleThreadExecutor();
            CountDownLatch writing = new CountDownLatch(1);
            CountDownLatch appended = new CountDownLatch(1);
            Future<?> compaction = pool.submit(() -> j.compact(mark, out -> {
                out.accept(b("state-1"));
                writing.countDown();
                try {
                    assertTrue(appended.await(30, TimeUnit.SECONDS), "appends were held up by the snapshot");
                } catch (InterruptedException e) {
                    throw new IllegalStateException(e);
                }
                out.accept(b("state-2"));
            }));
            assertTrue(writing.await(30, TimeUnit.SECONDS));
            j.append(b("while-writing"));
            appended.countDown();
            compaction.get(30, TimeUnit.SECONDS);
            pool.shutdown();
            assertEquals(4, j.size());
            j.append(b("later"));
            assertThrows(IllegalStateException.class, () -> j.compact(mark, out -> out.accept(b("x"))),
                    "a mark of the file before the compaction is not a point in this one");
        }
        try (Journal j = new Journal(file)) {
            assertEquals(List.of("state-1", "state-2", "after-mark", "while-writing", "later"), strings(j.records()));
        }
        assertTrue(Files.notExists(dir.resolve(".j.compact")));
    }

    /**
     * Records are read through a buffer of 1 MB: records that straddle its edges, one larger than
     * it, and many small ones read back whole and in order, from the file and from a compaction's
     * output (written through a buffer of 64 KB).
     */
    @Test
    void recordsOfEverySizeReadBackAcrossTheReadBuffersEdges() {
        Path file = dir.resolve("j");
        java.util.Random random = new java.util.Random(42);
        List<byte[]> written = new ArrayList<>();
        try (Journal j = new Journal(file)) {
            j.records();
            for (int i = 0; i < 3_000; i++) {
                int size = i == 1_500 ? 3 << 20 : i % 500 == 0 ? 70_000 + random.nextInt(1_000) : random.nextInt(2_000);
                byte[] r = new byte[size];
                random.nextBytes(r);
                written.add(r);
                j.write(r);
            }
            j.sync();
        }
        try (Journal j = new Journal(file)) {
            assertRecords(written, j.records());
            j.compact(j.mark(), out -> written.forEach(out));
        }
        try (Journal j = new Journal(file)) {
            assertRecords(written, j.records());
        }
    }

    private static void assertRecords(List<byte[]> expected, List<byte[]> actual) {
        assertEquals(expected.size(), actual.size());
        for (int i = 0; i < expected.size(); i++) {
            assertTrue(java.util.Arrays.equals(expected.get(i), actual.get(i)), "record " + i + " differs");
        }
    }

    /**
     * Records read back at open may be in the page cache only (the process that wrote them was
     * killed before syncing). Whoever acts on one syncs first with the number it has (0 for a
     * record read back): that first sync must reach the disk; later ones need not.
     */
    @Test
    void theFirstSyncAfterOpeningCoversTheRecordsReadBack() {
        Path file = dir.resolve("j");
        try (Journal j = new Journal(file)) {
            j.records();
            j.write(b("written, never synced"));
        }
        try (Journal j = new Journal(file)) {
            assertEquals(1, j.records().size());
            long before = j.syncs();
            j.syncTo(0);
            assertEquals(before + 1, j.syncs(), "the records read back are made durable");
            j.syncTo(0);
            j.sync();
            assertEquals(before + 1, j.syncs(), "once");
        }
        try (Journal j = new Journal(dir.resolve("empty"))) {
            j.records();
            long before = j.syncs();
            j.sync();
            assertEquals(before, j.syncs(), "nothing read back, nothing to sync");
        }
    }
}
