package dev.agentx.clarify.store.files;

import dev.agentx.clarify.store.DeliveryQueue;
import dev.agentx.clarify.store.InboundDelivery;
import dev.agentx.clarify.support.MutableClock;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class FileDeliveryQueueTest {
    @TempDir
    Path dir;

    @Test
    void deliveryIdsAreRememberedLongerThanGitHubsRedeliveryWindow() {
        MutableClock clock = MutableClock.at("2026-02-26T10:00:00Z");
        FileDeliveryQueue inbox = new FileDeliveryQueue(dir, clock);
        byte[] body = "{}".getBytes(StandardCharsets.UTF_8);
        assertEquals(DeliveryQueue.Accepted.QUEUED, inbox.accept("d-1", "ping", body, ""));
        inbox.done(inbox.queued().get(0));
        clock.advance(Duration.ofDays(3).plusHours(1));
        inbox.prune();
        assertEquals(DeliveryQueue.Accepted.DUPLICATE, new FileDeliveryQueue(dir, clock).accept("d-1", "ping", body, ""));
        clock.advance(FileDeliveryQueue.KEEP_SEEN);
        inbox.prune();
        assertEquals(DeliveryQueue.Accepted.QUEUED, inbox.accept("d-1", "ping", body, ""));
    }

    @Test
    void pendingDeliveriesKeepTheirOrderAcrossRestarts() {
        MutableClock clock = MutableClock.at("2026-02-26T10:00:00Z");
        FileDeliveryQueue inbox = new FileDeliveryQueue(dir, clock);
        inbox.accept("b", "ping", new byte[] {1}, "");
        inbox.accept("a", "ping", new byte[] {2}, "");
        FileDeliveryQueue again = new FileDeliveryQueue(dir, clock);
        again.accept("c", "ping", new byte[] {3}, "");
        assertEquals(java.util.List.of("b", "a", "c"), again.queued().stream().map(q -> again.read(q).id()).toList());
        assertEquals(3, again.read(again.queued().get(2)).body()[0]);
        assertThrows(IllegalArgumentException.class, () -> again.accept("../x", "ping", new byte[0], ""));
    }

    @Test
    void segmentsRollOverAndGoOnceTheirDeliveriesAreDone() throws Exception {
        MutableClock clock = MutableClock.at("2026-02-26T10:00:00Z");
        FileDeliveryQueue inbox = new FileDeliveryQueue(dir, clock, 1_000);
        byte[] big = padded(400);
        for (int i = 0; i < 10; i++) {
            inbox.accept("d-" + i, "ping", big, "");
        }
        assertTrue(segments().size() >= 4, "about two deliveries per segment: " + segments());
        for (DeliveryQueue.Queued q : inbox.queued().subList(0, 6)) {
            inbox.done(q);
        }
        FileDeliveryQueue again = new FileDeliveryQueue(dir, clock, 1_000);
        assertEquals(java.util.List.of("d-6", "d-7", "d-8", "d-9"), again.queued().stream().map(DeliveryQueue.Queued::id)
                .toList());
        for (DeliveryQueue.Queued q : again.queued()) {
            assertEquals(q.id(), again.read(q).id());
            assertArrayEquals(big, again.read(q).body());
            again.done(q);
        }
        assertEquals(1, segments().size(), "only the segment appended to is left: " + segments());
        assertEquals(0, new FileDeliveryQueue(dir, clock, 1_000).size());
    }

    @Test
    void aDoneRecordIsNotWaitedForButIsOnDiskBeforeItsSegmentGoes() throws Exception {
        MutableClock clock = MutableClock.at("2026-02-26T10:00:00Z");
        FileDeliveryQueue inbox = new FileDeliveryQueue(dir, clock, 1_000);
        byte[] big = padded(600); // two of these fill a segment of 1,000 bytes
        for (int i = 0; i < 3; i++) {
            inbox.accept("d-" + i, "ping", big, "");
        }
        java.nio.file.Path first = segments().get(0);
        assertEquals(2, segments().size(), "two deliveries fill a segment: " + segments());
        java.util.List<DeliveryQueue.Queued> queued = inbox.queued();
        inbox.saveProgress(queued.get(0), new DeliveryQueue.Progress(1, false, 0, null));
        long[] before = inbox.marks.writtenAndDurable();
        assertEquals(before[0], before[1], "a command's progress is on disk when saveProgress returns");

        inbox.done(queued.get(0));
        long[] after = inbox.marks.writtenAndDurable();
        assertEquals(before[0] + 1, after[0]);
        assertEquals(before[1], after[1], "done waits for no fdatasync");
        assertTrue(java.nio.file.Files.exists(first));

        inbox.done(queued.get(1)); // the last one of the first segment: it goes, after a sync
        long[] gone = inbox.marks.writtenAndDurable();
        assertEquals(gone[0], gone[1], "both done records are on disk before the segment is deleted");
        assertEquals(false, java.nio.file.Files.exists(first));
        assertEquals(java.util.List.of("d-2"), new FileDeliveryQueue(dir, clock, 1_000).queued().stream().map(DeliveryQueue.Queued::id)
                .toList());
    }

    @Test
    void aDeliveryDoneBeforeACrashUndidItsSegmentsDeletionIsNotQueuedAgain() throws Exception {
        MutableClock clock = MutableClock.at("2026-02-26T10:00:00Z");
        FileDeliveryQueue inbox = new FileDeliveryQueue(dir, clock, 1_000);
        inbox.accept("a", "ping", body(), "");
        java.nio.file.Path segment = segments().get(0);
        byte[] kept = java.nio.file.Files.readAllBytes(segment);
        inbox.accept("b", "ping", body(), "");
        inbox.done(inbox.queued().get(0));
        // as if the segment had been deleted and a crash undid it: the journal says "a" is done
        java.nio.file.Files.write(segment, kept, java.nio.file.StandardOpenOption.APPEND);
        FileDeliveryQueue again = new FileDeliveryQueue(dir, clock, 1_000);
        assertEquals(java.util.List.of("b"), again.queued().stream().map(DeliveryQueue.Queued::id).toList());
    }

    @Test
    void aTornLastAppendIsCutOffAndEverythingAcknowledgedBeforeItIsKept() throws Exception {
        MutableClock clock = MutableClock.at("2026-02-26T10:00:00Z");
        FileDeliveryQueue inbox = new FileDeliveryQueue(dir, clock);
        inbox.accept("a", "ping", body(), "");
        inbox.accept("b", "ping", body(), "");
        java.nio.file.Path segment = segments().get(0);
        long size = java.nio.file.Files.size(segment);
        try (var ch = java.nio.channels.FileChannel.open(segment, java.nio.file.StandardOpenOption.WRITE)) {
            ch.truncate(size - 3); // a crash in the middle of appending "b": never acknowledged
        }
        FileDeliveryQueue again = new FileDeliveryQueue(dir, clock);
        assertEquals(java.util.List.of("a"), again.queued().stream().map(DeliveryQueue.Queued::id).toList());
        assertEquals(DeliveryQueue.Accepted.QUEUED, again.accept("b", "ping", body(), ""), "GitHub redelivers it");
        assertEquals(java.util.List.of("a", "b"), new FileDeliveryQueue(dir, clock).queued().stream().map(DeliveryQueue.Queued::id)
                .toList());
    }

    @Test
    void aFailedDeliveryIsKeptInFailedAsAFileAPersonCanRead() throws Exception {
        MutableClock clock = MutableClock.at("2026-02-26T10:00:00Z");
        FileDeliveryQueue inbox = new FileDeliveryQueue(dir, clock);
        inbox.accept("bad-1", "issue_comment", body(), "");
        DeliveryQueue.Queued q = inbox.queued().get(0);
        inbox.fail(q, "failed 8 times");
        java.nio.file.Path kept = dir.resolve(String.format("failed/%020d-bad-1.json", q.seq()));
        InboundDelivery d = DeliveryFile.decode(java.nio.file.Files.readAllBytes(kept));
        assertEquals("bad-1", d.id());
        assertArrayEquals(body(), d.body());
        assertEquals(0, new FileDeliveryQueue(dir, clock).size());
        assertEquals(DeliveryQueue.Accepted.DUPLICATE, new FileDeliveryQueue(dir, clock).accept("bad-1", "issue_comment", body(), ""));
    }

    @Test
    void concurrentAcceptsAreAllQueuedAndReadableAfterARestart() throws Exception {
        MutableClock clock = MutableClock.at("2026-02-26T10:00:00Z");
        FileDeliveryQueue inbox = new FileDeliveryQueue(dir, clock, 64 * 1024);
        int threads = 8;
        int each = 100;
        var pool = java.util.concurrent.Executors.newFixedThreadPool(threads);
        var done = new java.util.ArrayList<java.util.concurrent.Future<?>>();
        for (int t = 0; t < threads; t++) {
            int thread = t;
            done.add(pool.submit(() -> {
                for (int i = 0; i < each; i++) {
                    String id = "t" + thread + "-" + i;
                    inbox.accept(id, "ping", ("{\"id\":\"" + id + "\"}").getBytes(StandardCharsets.UTF_8), "");
                }
            }));
        }
        for (var f : done) {
            f.get();
        }
        pool.shutdown();
        FileDeliveryQueue again = new FileDeliveryQueue(dir, clock, 64 * 1024);
        assertEquals(threads * each, again.size());
        for (DeliveryQueue.Queued q : again.queued()) {
            assertEquals("{\"id\":\"" + q.id() + "\"}", new String(again.read(q).body(), StandardCharsets.UTF_8));
        }
    }

    private java.util.List<java.nio.file.Path> segments() throws java.io.IOException {
        try (var s = java.nio.file.Files.list(dir.resolve("queue"))) {
            return s.sorted().toList();
        }
    }

    /** A delivery body of a little more than {@code pad} bytes. */
    private static byte[] padded(int pad) {
        return ("{\"pad\":\"" + "x".repeat(pad) + "\"}").getBytes(StandardCharsets.UTF_8);
    }

    private static byte[] body() {
        return "{}".getBytes(StandardCharsets.UTF_8);
    }

    /**
     * The journal is compacted from what the inbox keeps in memory while 4 threads accept
     * deliveries, record progress and mark them done: whatever the interleaving, the journal then
     * rebuilds the same state, every id known and the progress of those still queued. The done
     * records a compaction writes are what Jackson writes for the record with its default settings.
     */
    @Test
    @org.junit.jupiter.api.Timeout(value = 2, unit = java.util.concurrent.TimeUnit.MINUTES)
    void compactionsWhileDeliveriesComeAndGoLeaveAJournalThatRebuildsTheState() throws Exception {
        MutableClock clock = MutableClock.at("2026-02-26T10:00:00Z");
        FileDeliveryQueue inbox = new FileDeliveryQueue(dir, clock);
        byte[] body = "{}".getBytes(StandardCharsets.UTF_8);
        java.util.concurrent.ExecutorService pool = java.util.concurrent.Executors.newFixedThreadPool(4);
        java.util.List<java.util.concurrent.Future<?>> work = new java.util.ArrayList<>();
        for (int t = 0; t < 4; t++) {
            int lane = t;
            work.add(pool.submit(() -> {
                for (int i = 0; i < 1_000; i++) {
                    String id = "d-" + lane + "-" + i;
                    inbox.accept(id, "issue_comment", body, "o/r#" + lane);
                    DeliveryQueue.Queued q = inbox.queued().stream().filter(x -> x.id().equals(id)).findFirst().orElseThrow();
                    inbox.saveProgress(q, new DeliveryQueue.Progress(i % 3, false, i % 2, null));
                    if (i % 4 != 0) {
                        inbox.done(q);
                    }
                }
                return null;
            }));
        }
        int compactions = 0;
        while (work.stream().anyMatch(f -> !f.isDone())) {
            inbox.prune();
            compactions++;
        }
        for (java.util.concurrent.Future<?> f : work) {
            f.get(60, java.util.concurrent.TimeUnit.SECONDS);
        }
        pool.shutdown();
        assertTrue(compactions > 5, "compactions while deliveries came and went: " + compactions);
        inbox.syncDone();

        FileDeliveryQueue again = new FileDeliveryQueue(dir, clock);
        assertEquals(inbox.size(), again.size());
        assertEquals(1_000, again.size(), "every fourth delivery is still queued");
        for (DeliveryQueue.Queued q : again.queued()) {
            int i = Integer.parseInt(q.id().substring(q.id().lastIndexOf('-') + 1));
            assertEquals(new DeliveryQueue.Progress(i % 3, false, i % 2, null), again.progress(q), q.id());
        }
        for (int t = 0; t < 4; t++) {
            for (int i = 0; i < 1_000; i++) {
                assertEquals(DeliveryQueue.Accepted.DUPLICATE, again.accept("d-" + t + "-" + i, "issue_comment", body, ""), "d-" + t + "-" + i);
            }
        }
        again.prune();
        var json = dev.agentx.clarify.files.JsonSupport.mapper();
        int doneRecords = 0;
        try (dev.agentx.clarify.files.Journal j = new dev.agentx.clarify.files.Journal(dir.resolve("journal"))) {
            for (byte[] r : j.records()) {
                InboxJournal.Rec rec = json.readValue(r, InboxJournal.Rec.class);
                if (rec.op().equals("done")) {
                    assertEquals(new String(json.writeValueAsBytes(rec), StandardCharsets.UTF_8),
                            new String(r, StandardCharsets.UTF_8));
                    doneRecords++;
                }
            }
        }
        assertEquals(3_000, doneRecords);
    }

    /** As the outbox's: a change held half done (record written, memory not yet) holds the compaction's mark. */
    @Test
    @org.junit.jupiter.api.Timeout(value = 2, unit = java.util.concurrent.TimeUnit.MINUTES)
    void aCompactionMarksTheJournalOnlyWhenNoChangeIsHalfDone() throws Exception {
        MutableClock clock = MutableClock.at("2026-02-26T10:00:00Z");
        FileDeliveryQueue inbox = new FileDeliveryQueue(dir, clock);
        inbox.accept("d-1", "ping", "{}".getBytes(StandardCharsets.UTF_8), "");
        java.util.concurrent.ExecutorService pool = java.util.concurrent.Executors.newSingleThreadExecutor();
        java.util.concurrent.atomic.AtomicReference<Thread> compactor = new java.util.concurrent.atomic.AtomicReference<>();
        java.util.concurrent.Future<?> compaction;
        inbox.marks.changing.readLock().lock();
        try {
            compaction = pool.submit(() -> {
                compactor.set(Thread.currentThread());
                inbox.prune();
            });
            long deadline = System.nanoTime() + java.util.concurrent.TimeUnit.SECONDS.toNanos(30);
            while (compactor.get() == null || !inbox.marks.changing.hasQueuedThread(compactor.get())) {
                assertTrue(!compaction.isDone(), "the compaction did not wait for the change in progress");
                assertTrue(System.nanoTime() < deadline, "the compaction never waited for the change in progress");
                Thread.onSpinWait();
            }
        } finally {
            inbox.marks.changing.readLock().unlock();
        }
        compaction.get(30, java.util.concurrent.TimeUnit.SECONDS);
        pool.shutdown();
        assertEquals(1, new FileDeliveryQueue(dir, clock).size());
    }

    /**
     * A start reads every record bound to Rec, strictly: each kind as Jackson writes it is read back
     * the same, anything else is refused, and the refusal names the journal.
     */
    @Test
    void theJournalReaderReadsEveryKindOfRecordAndRefusesAnythingElse() throws Exception {
        var json = dev.agentx.clarify.files.JsonSupport.mapper();
        MutableClock clock = MutableClock.at("2026-02-26T10:00:00Z");
        for (InboxJournal.Rec r : java.util.List.of(new InboxJournal.Rec("seq", 41, null, null, null),
                new InboxJournal.Rec("progress", 42, null, new DeliveryQueue.Progress(2, true, 3, clock.instant().plusSeconds(20)), null),
                new InboxJournal.Rec("progress", 43, null, DeliveryQueue.Progress.NONE, null),
                new InboxJournal.Rec("done", 42, "72d3162e-cc78-11e3-81ab-4c9367dc0958", null, clock.instant()),
                new InboxJournal.Rec("done", 0, "d-1", null, java.time.Instant.parse("2026-02-26T10:00:00.000000001Z")))) {
            byte[] bytes = json.writeValueAsBytes(r);
            assertEquals(r, InboxJournal.read(bytes), r.op());
        }
        for (String bad : java.util.List.of("[]", "{\"op\":\"done\",\"extra\":1}", "{\"op\":7}",
                "{\"seq\":\"1\"}", "{\"op\":\"done\"} {}", "{\"op\":\"done\",\"at\":\"yesterday\"}",
                "{\"op\":\"seq\",\"seq\":99999999999999999999}", "{\"op\":\"progress\",\"progress\":{\"attempts\":\"1\"}}",
                "{\"op\":\"progress\",\"progress\":{\"tries\":1}}")) {
            assertThrows(Exception.class, () -> InboxJournal.read(bad.getBytes(StandardCharsets.UTF_8)), bad);
        }
        java.nio.file.Path file = dir.resolve("journal");
        try (dev.agentx.clarify.files.Journal j = new dev.agentx.clarify.files.Journal(file)) {
            j.records();
            j.write("{\"op\":\"seq\",\"seq\":1}".getBytes(StandardCharsets.UTF_8));
            j.write("{\"op\":\"done\",\"seq\":2,\"id\":\"d-2\",\"at\":\"yesterday\"}".getBytes(StandardCharsets.UTF_8));
            j.sync();
        }
        IllegalStateException refused = assertThrows(IllegalStateException.class, () -> new FileDeliveryQueue(dir, clock));
        assertTrue(refused.getMessage().contains("cannot read the inbox journal " + file), refused.getMessage());
        assertTrue(refused.getMessage().contains("'at'"), refused.getMessage());
    }

    /**
     * What an inbox acknowledged is read without changing a byte of it, a torn last record left as
     * it is; carried into another inbox, its deliveries queue behind that one's in their order with
     * their failed attempts, its ids done with become duplicates there, and ids that inbox knew stay
     * as they were.
     */
    @Test
    void whatAnInboxAcknowledgedIsReadWithoutChangingItAndCarriedIntoAnother() throws Exception {
        MutableClock clock = MutableClock.at("2026-02-26T10:00:00Z");
        java.nio.file.Path from = dir.resolve("from");
        FileDeliveryQueue source = new FileDeliveryQueue(from, clock);
        source.accept("done-1", "ping", new byte[] {1}, "");
        source.done(source.queued().get(0));
        source.accept("b", "issue_comment", new byte[] {2}, "acme/shop#1");
        source.saveProgress(source.queued().get(0), new DeliveryQueue.Progress(0, false, 2, clock.instant()
                .plusSeconds(20)));
        clock.advance(Duration.ofSeconds(1));
        source.accept("a", "ping", new byte[] {3}, "");
        source.accept("both", "ping", new byte[] {4}, "");
        source.close();
        java.nio.file.Files.write(from.resolve("journal"), new byte[] {0, 0, 1, 0, 'x'},
                java.nio.file.StandardOpenOption.APPEND); // a record half-written when the server was killed
        java.util.Map<String, byte[]> before = bytes(from);

        dev.agentx.clarify.store.Acknowledged read = FileDeliveryQueue.acknowledged(from);
        assertEquals(java.util.List.of("b", "a", "both"), read.waiting().stream()
                .map(dev.agentx.clarify.store.Acknowledged.Waiting::id).toList());
        assertEquals(new dev.agentx.clarify.store.Acknowledged.Waiting("b", "issue_comment",
                java.time.Instant.parse("2026-02-26T10:00:00Z"), "acme/shop#1", read.waiting().get(0).body(), 2,
                clock.instant().plusSeconds(19)), read.waiting().get(0));
        assertArrayEquals(new byte[] {2}, read.waiting().get(0).body());
        assertEquals("", read.waiting().get(1).key());
        assertEquals(java.util.Set.of("done-1"), read.done().keySet());
        java.util.Map<String, byte[]> after = bytes(from);
        assertEquals(before.keySet(), after.keySet());
        before.forEach((name, content) -> assertArrayEquals(content, after.get(name), name));

        java.nio.file.Path to = dir.resolve("to");
        FileDeliveryQueue destination = new FileDeliveryQueue(to, clock);
        destination.accept("x", "ping", new byte[] {9}, "");
        destination.accept("both", "ping", new byte[] {8}, "");
        destination.carry(read);
        destination.close();
        FileDeliveryQueue reopened = new FileDeliveryQueue(to, clock);
        assertEquals(java.util.List.of("x", "both", "b", "a"), reopened.queued().stream().map(DeliveryQueue.Queued::id)
                .toList());
        DeliveryQueue.Queued b = reopened.queued().get(2);
        assertEquals(new DeliveryQueue.Progress(0, false, 2, clock.instant().plusSeconds(19)), reopened.progress(b));
        assertEquals("acme/shop#1", b.key());
        assertEquals(java.time.Instant.parse("2026-02-26T10:00:00Z"), b.receivedAt());
        assertArrayEquals(new byte[] {8}, reopened.read(reopened.queued().get(1)).body(), "the inbox's own kept");
        assertEquals(DeliveryQueue.Accepted.DUPLICATE, reopened.accept("done-1", "ping", new byte[0], ""));
        assertEquals(dev.agentx.clarify.store.Acknowledged.NONE, FileDeliveryQueue.acknowledged(dir.resolve("none")));
    }

    private static java.util.Map<String, byte[]> bytes(java.nio.file.Path dir) throws java.io.IOException {
        java.util.Map<String, byte[]> out = new java.util.TreeMap<>();
        try (java.util.stream.Stream<java.nio.file.Path> walk = java.nio.file.Files.walk(dir)) {
            for (java.nio.file.Path p : walk.filter(java.nio.file.Files::isRegularFile).toList()) {
                out.put(dir.relativize(p).toString(), java.nio.file.Files.readAllBytes(p));
            }
        }
        return out;
    }
}
