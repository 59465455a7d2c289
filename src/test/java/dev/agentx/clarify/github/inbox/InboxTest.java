package dev.agentx.clarify.github.inbox;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.agentx.clarify.support.MutableClock;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class InboxTest {
    @TempDir
    Path dir;

    @Test
    void deliveryIdsAreRememberedLongerThanGitHubsRedeliveryWindow() {
        MutableClock clock = MutableClock.at("2026-02-26T10:00:00Z");
        Inbox inbox = new Inbox(dir, clock);
        byte[] body = "{}".getBytes(StandardCharsets.UTF_8);
        assertEquals(Inbox.Accepted.QUEUED, inbox.accept("d-1", "ping", body));
        inbox.done(inbox.queued().get(0));
        clock.advance(Duration.ofDays(3).plusHours(1));
        inbox.prune();
        assertEquals(Inbox.Accepted.DUPLICATE, new Inbox(dir, clock).accept("d-1", "ping", body));
        clock.advance(Inbox.KEEP_SEEN);
        inbox.prune();
        assertEquals(Inbox.Accepted.QUEUED, inbox.accept("d-1", "ping", body));
    }

    @Test
    void pendingDeliveriesKeepTheirOrderAcrossRestarts() {
        MutableClock clock = MutableClock.at("2026-02-26T10:00:00Z");
        Inbox inbox = new Inbox(dir, clock);
        inbox.accept("b", "ping", new byte[] {1});
        inbox.accept("a", "ping", new byte[] {2});
        Inbox again = new Inbox(dir, clock);
        again.accept("c", "ping", new byte[] {3});
        assertEquals(java.util.List.of("b", "a", "c"), again.queued().stream().map(q -> again.read(q).id()).toList());
        assertEquals(3, again.read(again.queued().get(2)).body()[0]);
        assertThrows(IllegalArgumentException.class, () -> again.accept("../x", "ping", new byte[0]));
    }

    @Test
    void anInboxOfTheEarlierFileLayoutIsTakenOver() throws Exception {
        MutableClock clock = MutableClock.at("2026-02-26T10:00:00Z");
        java.nio.file.Path pending = java.nio.file.Files.createDirectories(dir.resolve("pending"));
        java.nio.file.Path seen = java.nio.file.Files.createDirectories(dir.resolve("seen"));
        var json = dev.agentx.clarify.files.JsonSupport.mapper();
        java.nio.file.Files.write(pending.resolve("00000000000000000004-waiting.json"), json.writeValueAsBytes(
                new InboundDelivery("waiting", "ping", clock.instant(), "{}".getBytes(StandardCharsets.UTF_8))));
        java.nio.file.Files.write(pending.resolve("00000000000000000002-broken.json"), new byte[] {'{'});
        // the file format of the version before this one
        java.nio.file.Files.write(pending.resolve("00000000000000000006-recent.json"), DeliveryFile.encode(json,
                new InboundDelivery("recent", "ping", clock.instant(), body())));
        java.nio.file.Files.write(pending.resolve("00000000000000000004-waiting.progress"),
                json.writeValueAsBytes(new Inbox.Progress(1, true, 2, null)));
        // that version marked ids seen when they were accepted: a pending one is not done
        java.nio.file.Files.writeString(seen.resolve("waiting"), clock.instant().toString());
        java.nio.file.Files.writeString(seen.resolve("processed"), clock.instant().toString());

        Inbox inbox = new Inbox(dir, clock);
        assertEquals(2, inbox.size());
        assertEquals("waiting", inbox.read(inbox.queued().get(0)).id());
        assertArrayEquals(body(), inbox.read(inbox.queued().get(1)).body());
        inbox.done(inbox.queued().get(1));
        assertEquals(true, java.nio.file.Files.exists(dir.resolve("failed/00000000000000000002-broken.json")),
                "an unreadable file is kept for a person");
        assertEquals(Inbox.Accepted.DUPLICATE, inbox.accept("broken", "ping", body()));
        assertEquals(new Inbox.Progress(1, true, 2, null), inbox.progress(inbox.queued().get(0)));
        assertEquals(Inbox.Accepted.DUPLICATE, inbox.accept("processed", "ping", body()));
        assertEquals(Inbox.Accepted.DUPLICATE, inbox.accept("waiting", "ping", body()));
        assertEquals(false, java.nio.file.Files.exists(seen));
        inbox.done(inbox.queued().get(0));
        Inbox again = new Inbox(dir, clock);
        assertEquals(0, again.size());
        assertEquals(Inbox.Accepted.DUPLICATE, again.accept("waiting", "ping", body()));
        assertEquals(Inbox.Accepted.QUEUED, again.accept("new", "ping", body()));
        assertEquals(7, again.queued().get(0).seq(), "numbering goes on after the highest taken over");
        assertEquals(false, java.nio.file.Files.exists(pending), "the earlier version's files are gone");
    }

    @Test
    void segmentsRollOverAndGoOnceTheirDeliveriesAreDone() throws Exception {
        MutableClock clock = MutableClock.at("2026-02-26T10:00:00Z");
        Inbox inbox = new Inbox(dir, clock, 1_000);
        byte[] big = padded(400);
        for (int i = 0; i < 10; i++) {
            inbox.accept("d-" + i, "ping", big);
        }
        assertTrue(segments().size() >= 4, "about two deliveries per segment: " + segments());
        for (Inbox.Queued q : inbox.queued().subList(0, 6)) {
            inbox.done(q);
        }
        Inbox again = new Inbox(dir, clock, 1_000);
        assertEquals(java.util.List.of("d-6", "d-7", "d-8", "d-9"), again.queued().stream().map(Inbox.Queued::id)
                .toList());
        for (Inbox.Queued q : again.queued()) {
            assertEquals(q.id(), again.read(q).id());
            assertArrayEquals(big, again.read(q).body());
            again.done(q);
        }
        assertEquals(1, segments().size(), "only the segment appended to is left: " + segments());
        assertEquals(0, new Inbox(dir, clock, 1_000).size());
    }

    @Test
    void aDoneRecordIsNotWaitedForButIsOnDiskBeforeItsSegmentGoes() throws Exception {
        MutableClock clock = MutableClock.at("2026-02-26T10:00:00Z");
        Inbox inbox = new Inbox(dir, clock, 1_000);
        byte[] big = padded(600); // two of these fill a segment of 1,000 bytes
        for (int i = 0; i < 3; i++) {
            inbox.accept("d-" + i, "ping", big);
        }
        java.nio.file.Path first = segments().get(0);
        assertEquals(2, segments().size(), "two deliveries fill a segment: " + segments());
        java.util.List<Inbox.Queued> queued = inbox.queued();
        inbox.saveProgress(queued.get(0), new Inbox.Progress(1, false, 0, null));
        long[] before = inbox.journalWrittenAndDurable();
        assertEquals(before[0], before[1], "a command's progress is on disk when saveProgress returns");

        inbox.done(queued.get(0));
        long[] after = inbox.journalWrittenAndDurable();
        assertEquals(before[0] + 1, after[0]);
        assertEquals(before[1], after[1], "done waits for no fdatasync");
        assertTrue(java.nio.file.Files.exists(first));

        inbox.done(queued.get(1)); // the last one of the first segment: it goes, after a sync
        long[] gone = inbox.journalWrittenAndDurable();
        assertEquals(gone[0], gone[1], "both done records are on disk before the segment is deleted");
        assertEquals(false, java.nio.file.Files.exists(first));
        assertEquals(java.util.List.of("d-2"), new Inbox(dir, clock, 1_000).queued().stream().map(Inbox.Queued::id)
                .toList());
    }

    @Test
    void aDeliveryDoneBeforeACrashUndidItsSegmentsDeletionIsNotQueuedAgain() throws Exception {
        MutableClock clock = MutableClock.at("2026-02-26T10:00:00Z");
        Inbox inbox = new Inbox(dir, clock, 1_000);
        inbox.accept("a", "ping", body());
        java.nio.file.Path segment = segments().get(0);
        byte[] kept = java.nio.file.Files.readAllBytes(segment);
        inbox.accept("b", "ping", body());
        inbox.done(inbox.queued().get(0));
        // as if the segment had been deleted and a crash undid it: the journal says "a" is done
        java.nio.file.Files.write(segment, kept, java.nio.file.StandardOpenOption.APPEND);
        Inbox again = new Inbox(dir, clock, 1_000);
        assertEquals(java.util.List.of("b"), again.queued().stream().map(Inbox.Queued::id).toList());
    }

    @Test
    void aTornLastAppendIsCutOffAndEverythingAcknowledgedBeforeItIsKept() throws Exception {
        MutableClock clock = MutableClock.at("2026-02-26T10:00:00Z");
        Inbox inbox = new Inbox(dir, clock);
        inbox.accept("a", "ping", body());
        inbox.accept("b", "ping", body());
        java.nio.file.Path segment = segments().get(0);
        long size = java.nio.file.Files.size(segment);
        try (var ch = java.nio.channels.FileChannel.open(segment, java.nio.file.StandardOpenOption.WRITE)) {
            ch.truncate(size - 3); // a crash in the middle of appending "b": never acknowledged
        }
        Inbox again = new Inbox(dir, clock);
        assertEquals(java.util.List.of("a"), again.queued().stream().map(Inbox.Queued::id).toList());
        assertEquals(Inbox.Accepted.QUEUED, again.accept("b", "ping", body()), "GitHub redelivers it");
        assertEquals(java.util.List.of("a", "b"), new Inbox(dir, clock).queued().stream().map(Inbox.Queued::id)
                .toList());
    }

    @Test
    void aFailedDeliveryIsKeptInFailedAsAFileAPersonCanRead() throws Exception {
        MutableClock clock = MutableClock.at("2026-02-26T10:00:00Z");
        Inbox inbox = new Inbox(dir, clock);
        inbox.accept("bad-1", "issue_comment", body());
        Inbox.Queued q = inbox.queued().get(0);
        inbox.fail(q, "failed 8 times");
        java.nio.file.Path kept = dir.resolve(String.format("failed/%020d-bad-1.json", q.seq()));
        InboundDelivery d = DeliveryFile.decode(dev.agentx.clarify.files.JsonSupport.mapper(),
                java.nio.file.Files.readAllBytes(kept));
        assertEquals("bad-1", d.id());
        assertArrayEquals(body(), d.body());
        assertEquals(0, new Inbox(dir, clock).size());
        assertEquals(Inbox.Accepted.DUPLICATE, new Inbox(dir, clock).accept("bad-1", "issue_comment", body()));
    }

    @Test
    void concurrentAcceptsAreAllQueuedAndReadableAfterARestart() throws Exception {
        MutableClock clock = MutableClock.at("2026-02-26T10:00:00Z");
        Inbox inbox = new Inbox(dir, clock, 64 * 1024);
        int threads = 8;
        int each = 100;
        var pool = java.util.concurrent.Executors.newFixedThreadPool(threads);
        var done = new java.util.ArrayList<java.util.concurrent.Future<?>>();
        for (int t = 0; t < threads; t++) {
            int thread = t;
            done.add(pool.submit(() -> {
                for (int i = 0; i < each; i++) {
                    String id = "t" + thread + "-" + i;
                    inbox.accept(id, "ping", ("{\"id\":\"" + id + "\"}").getBytes(StandardCharsets.UTF_8));
                }
            }));
        }
        for (var f : done) {
            f.get();
        }
        pool.shutdown();
        Inbox again = new Inbox(dir, clock, 64 * 1024);
        assertEquals(threads * each, again.size());
        for (Inbox.Queued q : again.queued()) {
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
}
