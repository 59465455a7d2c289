package dev.agentx.clarify.github.outbox;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.agentx.clarify.files.Journal;
import dev.agentx.clarify.files.JsonSupport;
import dev.agentx.clarify.github.RepoRef;
import dev.agentx.clarify.metrics.ServerMetrics;
import dev.agentx.clarify.store.files.OutboxJournal;
import dev.agentx.clarify.support.Allocation;
import dev.agentx.clarify.support.MutableClock;
import dev.agentx.clarify.support.Scrape;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
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
        clock.advance(EffectQueue.KEEP_DONE.plusDays(1));
        again.prune(); // done keys expire; notes never do
        Outbox third = new Outbox(dir, null, clock, ServerMetrics.create());
        assertEquals(json.readTree("{\"posted\":2}"), third.note("mirror/o/r#1", JsonNode.class).orElseThrow());
        assertEquals(json.readTree("{\"posted\":5}"), third.note("mirror/o/r#2", JsonNode.class).orElseThrow());
        assertEquals(1, third.size());
    }

    /**
     * An issue's note is keyed by record ids, unique to the issue: reading one costs in proportion
     * to the note, not to every id read before, both at a lane's read and at a start's. (A parser
     * that keeps the names it meets in its mapper's shared table copies the whole table, hundreds
     * of KiB once it holds thousands of ids, before adding a name it lacks.)
     */
    @Test
    void aNoteKeyedByIdsCostsItsOwnSizeHoweverManyIdsWereReadBefore() {
        Outbox outbox = new Outbox(dir, null, clock, ServerMetrics.create());
        int notes = 5_200;
        for (int i = 1; i <= notes; i++) {
            outbox.note("mirror/o/r#" + i, Map.of("posted", Map.of("CLR-" + i + "-001", 1, "CLR-" + i + "-002", 2)));
        }
        outbox.sync();
        for (int i = 1; i <= 5_000; i++) {
            outbox.note("mirror/o/r#" + i, JsonNode.class).orElseThrow();
        }
        long before = Allocation.byThisThread();
        for (int i = 5_001; i <= notes; i++) {
            JsonNode note = outbox.note("mirror/o/r#" + i, JsonNode.class).orElseThrow();
            assertEquals(2, note.get("posted").get("CLR-" + i + "-002").asInt());
        }
        long perRead = (Allocation.byThisThread() - before) / 200;
        assertTrue(perRead < 32 * 1024, "a read of a note allocated " + perRead + " bytes");

        before = Allocation.byThisThread();
        Outbox again = new Outbox(dir, null, clock, ServerMetrics.create());
        long perNoteAtStart = (Allocation.byThisThread() - before) / notes;
        assertTrue(perNoteAtStart < 32 * 1024, "a start allocated " + perNoteAtStart + " bytes per note");
        assertEquals(1, again.note("mirror/o/r#" + notes, JsonNode.class).orElseThrow().get("posted")
                .get("CLR-" + notes + "-001").asInt());
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

    /**
     * The outbox's age histogram: from an effect's queueing to GitHub's confirmation, across its
     * retries (a 502, then the 10 s backoff); an effect that fails for good is not confirmed.
     */
    @Test
    void anEffectsAgeRunsFromItsQueueingToItsConfirmation() {
        var metrics = ServerMetrics.create();
        Outbox outbox = new Outbox(dir, new FlakyGitHub(), clock, metrics);
        outbox.enqueue(new Effect.Comment("slow", 7, REPO, 1, "x-retry"));
        outbox.enqueue(new Effect.Comment("gone", 7, REPO, 2, "x-fail"));
        outbox.sync();
        clock.advance(Duration.ofSeconds(3));
        outbox.flush(); // the 502: retried after 10 s; the 422: failed
        clock.advance(Duration.ofSeconds(30));
        outbox.flush();
        assertEquals(0, outbox.size());
        String m = metrics.scrape();
        assertEquals(1, Scrape.value(m, "agentx_outbox_effect_age_seconds_count{type=\"comment\"}"), m);
        assertEquals(33, Scrape.value(m, "agentx_outbox_effect_age_seconds_sum{type=\"comment\"}"), 0.001, m);
        assertEquals(1, Scrape.value(m, "agentx_outbox_effect_age_seconds_bucket{type=\"comment\",le=\"60.0\"}")
                - Scrape.value(m, "agentx_outbox_effect_age_seconds_bucket{type=\"comment\",le=\"30.0\"}"), m);
    }

    /**
     * A compaction writes the journal from what the outbox keeps in memory, while lanes go on
     * queueing, noting and forgetting and a sender records effects done, retried (a 502) and
     * failed (a 422). Whatever the interleaving, the journal must then rebuild exactly the state
     * in memory: the same effects queued, the same notes, every key known.
     */
    @Test
    @Timeout(value = 2, unit = TimeUnit.MINUTES) // a deadlock fails, not hangs, the build
    void compactionsWhileLanesQueueNoteAndSendLeaveAJournalThatRebuildsTheStateInMemory() throws Exception {
        Outbox outbox = new Outbox(dir, new FlakyGitHub(), clock, ServerMetrics.create());
        int lanes = 4;
        int perLane = 1_500;
        List<String> keys = java.util.Collections.synchronizedList(new ArrayList<>());
        java.util.concurrent.atomic.AtomicBoolean running = new java.util.concurrent.atomic.AtomicBoolean(true);
        ExecutorService pool = Executors.newFixedThreadPool(lanes + 1);
        List<Future<?>> laneWork = new ArrayList<>();
        for (int t = 0; t < lanes; t++) {
            int lane = t;
            laneWork.add(pool.submit(() -> {
                for (int i = 0; i < perLane; i++) {
                    String key = "l" + lane + "-" + i + (i % 13 == 0 ? "-retry" : i % 101 == 0 ? "-fail" : "");
                    keys.add(key);
                    outbox.enqueue(new Effect.Comment(key, 7, REPO, i % 25, key));
                    outbox.note("n/" + lane + "/" + i % 10, Map.of("v", i));
                    if (i % 7 == 0) {
                        outbox.forget("n/" + lane + "/" + (i + 3) % 10);
                    }
                    if (i % 10 == 0) {
                        outbox.sync();
                    }
                }
                outbox.sync();
                return null;
            }));
        }
        Future<?> sender = pool.submit(() -> {
            while (running.get()) {
                outbox.flush();
                clock.advance(Duration.ofSeconds(11)); // a retried effect is due again (its backoff: 10 s)
            }
            return null;
        });
        int compactions = 0;
        while (laneWork.stream().anyMatch(f -> !f.isDone())) {
            outbox.prune();
            compactions++;
        }
        for (Future<?> f : laneWork) {
            f.get(60, TimeUnit.SECONDS);
        }
        running.set(false);
        sender.get(60, TimeUnit.SECONDS);
        pool.shutdown();
        outbox.flush(); // what the last round retried waits for its backoff
        assertTrue(compactions > 5, "compactions while the lanes worked: " + compactions);

        Outbox again = new Outbox(dir, null, clock, ServerMetrics.create());
        assertEquals(outbox.size(), again.size(), "the same effects queued");
        assertEquals(outbox.noteNames("n/"), again.noteNames("n/"));
        for (String name : outbox.noteNames("n/")) {
            assertEquals(outbox.note(name, JsonNode.class), again.note(name, JsonNode.class), name);
        }
        for (String key : keys) {
            assertFalse(again.enqueue(new Effect.Comment(key, 7, REPO, 1, key)), key + " queued, done or failed");
        }
    }

    /** An effect's entry is what the journal keeps of it: read back as the outbox wrote it, whatever it holds. */
    @Test
    void aQueuedEntryIsReadBackAsItWasWritten() throws Exception {
        FlakyGitHub github = new FlakyGitHub();
        Outbox outbox = new Outbox(dir, github, clock, ServerMetrics.create());
        outbox.enqueue(new Effect.Comment("k", 7, REPO, 1, "a \"quoted\"\nbody \u00e9-retry"));
        outbox.flush(); // a 502: a retry record with the attempt and the error
        Outbox again = new Outbox(dir, null, clock, ServerMetrics.create());
        assertEquals(1, again.size());
        outbox.prune(); // compacted: the queue record from memory
        Outbox third = new Outbox(dir, null, clock, ServerMetrics.create());
        assertEquals(1, third.size());
        assertFalse(third.enqueue(new Effect.Comment("k", 7, REPO, 1, "x")), "its key is still queued");
        clock.advance(Duration.ofMinutes(1)); // past its backoff
        new Outbox(dir, github, clock, ServerMetrics.create()).flush(); // the 502 was once
        assertEquals(1, github.posted.size());
        assertTrue(github.posted.get(0).endsWith("\na \"quoted\"\nbody \u00e9-retry"), "the body as queued: "
                + github.posted.get(0));
    }

    /**
     * The done keys a compaction writes (there can be a million) are byte for byte what Jackson
     * writes for the record with its default settings; an effect that failed for good is remembered as done across
     * a restart too, so a redelivery does not queue it again.
     */
    @Test
    void compactedDoneKeysAreWhatJacksonWritesAndFailedKeysOutliveARestart() throws Exception {
        var json = JsonSupport.mapper();
        Outbox outbox = new Outbox(dir, new FlakyGitHub(), clock, ServerMetrics.create());
        outbox.enqueue(comment("ok"));
        outbox.enqueue(new Effect.Comment("gone", 7, REPO, 2, "x-fail"));
        outbox.flush();
        assertEquals(0, outbox.size());
        Outbox restarted = new Outbox(dir, null, clock, ServerMetrics.create()); // from the failed record
        assertFalse(restarted.enqueue(new Effect.Comment("gone", 7, REPO, 2, "x-fail")), "failed: not queued again");
        assertFalse(restarted.enqueue(comment("ok")));
        restarted.prune(); // as the worker's first tick does
        Set<String> keyRecords = new java.util.HashSet<>();
        try (Journal j = new Journal(dir.resolve("journal"))) {
            for (byte[] r : j.records()) {
                OutboxJournal.Rec rec = json.readValue(r, OutboxJournal.Rec.class);
                if (rec.op().equals("key")) {
                    assertEquals(new String(json.writeValueAsBytes(rec), StandardCharsets.UTF_8),
                            new String(r, StandardCharsets.UTF_8));
                    keyRecords.add(rec.hash());
                }
            }
        }
        assertEquals(Set.of(EffectQueue.hash("ok"), EffectQueue.hash("gone")), keyRecords);
    }

    /**
     * What makes the snapshot whole: a change holds {@code changing} for reading from writing its
     * record until the memory shows it, and a compaction marks the journal's end only once no
     * change is half done. Here a change is held half done; the compaction must wait for it.
     */
    @Test
    @Timeout(value = 2, unit = TimeUnit.MINUTES) // a deadlock fails, not hangs, the build
    void aCompactionMarksTheJournalOnlyWhenNoChangeIsHalfDone() throws Exception {
        Outbox outbox = new Outbox(dir, null, clock, ServerMetrics.create());
        outbox.note("n", Map.of("v", 1));
        ExecutorService pool = Executors.newSingleThreadExecutor();
        Future<?> compaction;
        java.util.concurrent.atomic.AtomicReference<Thread> compactor = new java.util.concurrent.atomic.AtomicReference<>();
        outbox.queue.changing.readLock().lock(); // a change between its record and its memory update
        try {
            compaction = pool.submit(() -> {
                compactor.set(Thread.currentThread());
                outbox.prune();
            });
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (compactor.get() == null || !outbox.queue.changing.hasQueuedThread(compactor.get())) {
                assertFalse(compaction.isDone(), "the compaction did not wait for the change in progress");
                assertTrue(System.nanoTime() < deadline, "the compaction never waited for the change in progress");
                Thread.onSpinWait();
            }
        } finally {
            outbox.queue.changing.readLock().unlock();
        }
        compaction.get(30, TimeUnit.SECONDS);
        pool.shutdown();
        assertEquals(Optional.of(Map.of("v", 1)), new Outbox(dir, null, clock, ServerMetrics.create())
                .note("n", Map.class));
    }
}
