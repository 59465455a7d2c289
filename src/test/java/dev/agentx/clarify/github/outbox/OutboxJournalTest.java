package dev.agentx.clarify.github.outbox;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.agentx.clarify.files.JsonSupport;
import dev.agentx.clarify.github.RepoRef;
import dev.agentx.clarify.metrics.ServerMetrics;
import dev.agentx.clarify.support.MutableClock;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class OutboxJournalTest {
    @TempDir
    Path dir;

    private final MutableClock clock = MutableClock.at("2026-02-26T10:00:00Z");
    private static final RepoRef REPO = new RepoRef("o", "r");

    private static Effect comment(String key) {
        return new Effect.Comment(key, 7, REPO, 1, "body of " + key);
    }

    @Test
    void queuedEffectsAndDoneKeysSurviveARestart() {
        Outbox outbox = new Outbox(dir, null, clock, ServerMetrics.create());
        assertTrue(outbox.enqueue(comment("k1")));
        assertTrue(outbox.enqueue(comment("k2")));
        assertFalse(outbox.enqueue(comment("k1")), "a key is queued once");
        Outbox again = new Outbox(dir, null, clock, ServerMetrics.create());
        assertEquals(2, again.size());
        assertFalse(again.enqueue(comment("k2")));
    }

    @Test
    void anOutboxOfTheEarlierFileLayoutIsTakenOver() throws Exception {
        Path pending = Files.createDirectories(dir.resolve("pending"));
        Path done = Files.createDirectories(dir.resolve("done"));
        var json = JsonSupport.mapper();
        // one still to send, one sent whose file a crash left behind, and a done key
        Outbox.Entry waiting = new Outbox.Entry(comment("waiting"), clock.instant(), 2, null, true, "502", "d-1");
        Files.write(pending.resolve("00000000000000000003-" + Outbox.hash("waiting") + ".json"),
                json.writeValueAsBytes(waiting));
        Files.write(pending.resolve("00000000000000000002-" + Outbox.hash("sent") + ".json"),
                json.writeValueAsBytes(new Outbox.Entry(comment("sent"), clock.instant(), 0, null, false, null, null)));
        Files.writeString(done.resolve(Outbox.hash("sent")), clock.instant().toString());
        Files.writeString(done.resolve(Outbox.hash("old")), clock.instant().minus(Duration.ofDays(1)).toString());

        Outbox outbox = new Outbox(dir, null, clock, ServerMetrics.create());
        assertEquals(1, outbox.size(), "the one not done is queued, the done one is dropped");
        assertFalse(outbox.enqueue(comment("sent")));
        assertFalse(outbox.enqueue(comment("old")));
        assertFalse(outbox.enqueue(comment("waiting")));
        assertFalse(Files.exists(pending), "the earlier layout is gone once taken over");
        assertFalse(Files.exists(done));

        Outbox again = new Outbox(dir, null, clock, ServerMetrics.create());
        assertEquals(1, again.size());
        assertFalse(again.enqueue(comment("old")));
        clock.advance(Outbox.KEEP_DONE);
        again.prune();
        assertTrue(again.enqueue(comment("old")), "done keys are forgotten after " + Outbox.KEEP_DONE.toDays() + " days");
    }

    @Test
    void aNoteIsDurableWithTheEffectsBeforeItAndOutlivesRestartsAndCompactions() throws Exception {
        var json = JsonSupport.mapper();
        Outbox outbox = new Outbox(dir, null, clock, ServerMetrics.create());
        assertTrue(outbox.note("mirror/o/r#1", JsonNode.class).isEmpty());
        outbox.enqueue(comment("k1"));
        outbox.note("mirror/o/r#1", Map.of("posted", 1));
        outbox.note("mirror/o/r#2", Map.of("posted", 5));
        outbox.note("mirror/o/r#1", Map.of("posted", 2));
        assertEquals(0, outbox.journalDurable(), "written, not synced yet");
        assertEquals(json.readTree("{\"posted\":2}"), outbox.note("mirror/o/r#1", JsonNode.class).orElseThrow(),
                "seen at once");
        outbox.sync();
        assertEquals(4, outbox.journalDurable(), "this thread's sync covers its notes with its effects");

        Outbox again = new Outbox(dir, null, clock, ServerMetrics.create());
        assertEquals(json.readTree("{\"posted\":2}"), again.note("mirror/o/r#1", JsonNode.class).orElseThrow(),
                "the latest wins");
        assertEquals(json.readTree("{\"posted\":5}"), again.note("mirror/o/r#2", JsonNode.class).orElseThrow());
        clock.advance(Outbox.KEEP_DONE.plusDays(1));
        again.prune(); // done keys expire; notes never do
        Outbox third = new Outbox(dir, null, clock, ServerMetrics.create());
        assertEquals(json.readTree("{\"posted\":2}"), third.note("mirror/o/r#1", JsonNode.class).orElseThrow());
        assertEquals(json.readTree("{\"posted\":5}"), third.note("mirror/o/r#2", JsonNode.class).orElseThrow());
        assertEquals(1, third.size());
    }

    /** Runs {@code work} on a thread of its own (another lane) and waits for it. */
    private static void onAnotherThread(Runnable work) throws InterruptedException {
        Thread t = new Thread(work);
        t.start();
        t.join();
    }

    @Test
    void aThreadsSyncCoversWhatItQueuedNotWhatOthersQueued() throws Exception {
        Outbox outbox = new Outbox(dir, null, clock, ServerMetrics.create());
        onAnotherThread(() -> {
            outbox.enqueue(comment("a1"));
            outbox.sync();
        });
        assertEquals(1, outbox.journalDurable());
        onAnotherThread(() -> outbox.enqueue(comment("a2"))); // another lane's, not synced yet
        long syncs = outbox.journalSyncs();
        outbox.sync();
        assertEquals(1, outbox.journalDurable(), "this thread queued nothing: its sync waits for no one's effects");
        assertEquals(syncs, outbox.journalSyncs(), "and costs no fdatasync");

        outbox.enqueue(comment("b1"));
        outbox.sync();
        assertEquals(3, outbox.journalDurable(), "its own effect, and the other lane's written before it");
        assertEquals(syncs + 1, outbox.journalSyncs());
        outbox.sync();
        assertEquals(syncs + 1, outbox.journalSyncs(), "nothing new: no fdatasync");
    }

    @Test
    void queueingAKeyAnotherThreadHasPendingMakesThatEffectDurableOnSync() throws Exception {
        Outbox outbox = new Outbox(dir, null, clock, ServerMetrics.create());
        outbox.enqueue(comment("mine"));
        outbox.sync();
        onAnotherThread(() -> outbox.enqueue(comment("shared"))); // queued by another lane, not durable yet
        assertEquals(1, outbox.journalDurable());
        assertFalse(outbox.enqueue(comment("shared")), "queued once");
        outbox.sync();
        assertEquals(2, outbox.journalDurable(),
                "whoever then records the effect as queued relies on it: the sync covers it");
    }
}
