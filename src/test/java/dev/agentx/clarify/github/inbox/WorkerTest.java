package dev.agentx.clarify.github.inbox;

import dev.agentx.clarify.files.JsonSupport;
import dev.agentx.clarify.github.Payloads;
import dev.agentx.clarify.github.outbox.Outbox;
import dev.agentx.clarify.metrics.ServerMetrics;
import dev.agentx.clarify.store.DeliveryQueue;
import dev.agentx.clarify.store.InboundDelivery;
import dev.agentx.clarify.store.files.FileDeliveryQueue;
import dev.agentx.clarify.support.MutableClock;
import dev.agentx.clarify.support.Scrape;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

class WorkerTest {
    @TempDir
    Path dir;

    private final MutableClock clock = MutableClock.at("2026-02-26T10:00:00Z");

    private static byte[] comment(int issue, String text) {
        return ("{\"action\":\"created\",\"repository\":{\"id\":1296269,\"full_name\":\"o/r\"},"
                + "\"issue\":{\"number\":" + issue
                + "},\"comment\":{\"body\":\"" + text + "\"}}").getBytes(StandardCharsets.UTF_8);
    }

    private static String text(InboundDelivery d) {
        String s = new String(d.body(), StandardCharsets.UTF_8);
        return s.substring(s.indexOf("\"body\":\"") + 8, s.lastIndexOf("\"}}"));
    }

    /**
     * Deliveries of one issue acknowledged at the same moment are handed to the worker by their
     * request threads in either order; they are processed in the inbox's order, the one a restart
     * would process them in.
     */
    @Test
    void deliveriesOfAnIssueHandedOverOutOfOrderAreProcessedInTheInboxsOrder() {
        FileDeliveryQueue inbox = new FileDeliveryQueue(dir.resolve("inbox"), clock);
        List<DeliveryQueue.Queued> queued = new ArrayList<>();
        HandOver handOver = new HandOver(inbox, queued);
        List<String> handled = new ArrayList<>();
        Outbox outbox = new Outbox(dir.resolve("outbox"), null, clock, ServerMetrics.create());
        try (Worker worker = new Worker(handOver, TestProcessors.of((d, payload, progress, save) -> handled.add(text(d))),
                outbox, clock, true, ServerMetrics.create())) {
            inbox.accept("d-1", "issue_comment", comment(1, "answer"), "1296269#1");
            inbox.accept("d-2", "issue_comment", comment(1, "resolve"), "1296269#1");
            handOver.listener.accept(queued.get(1));
            handOver.listener.accept(queued.get(0));
            worker.drain();
            assertEquals(List.of("answer", "resolve"), handled);
        }
    }

    @Test
    void aSlowIssueDoesNotHoldUpTheOthersAndEachIssueKeepsItsOrder() throws Exception {
        FileDeliveryQueue inbox = new FileDeliveryQueue(dir.resolve("inbox"), clock);
        CountDownLatch slowStarted = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        CountDownLatch others = new CountDownLatch(20);
        List<String> handled = Collections.synchronizedList(new ArrayList<>());
        List<Integer> priorities = Collections.synchronizedList(new ArrayList<>());
        DeliveryProcessor handler = TestProcessors.of((d, payload, progress, save) -> {
            priorities.add(Thread.currentThread().getPriority());
            String t = text(d);
            if (t.equals("1-0")) {
                slowStarted.countDown();
                try {
                    assertTrue(release.await(30, TimeUnit.SECONDS));
                } catch (InterruptedException e) {
                    throw new IllegalStateException(e);
                }
            }
            handled.add(t);
            if (!t.startsWith("1-")) {
                others.countDown();
            }
        });
        Outbox outbox = new Outbox(dir.resolve("outbox"), null, clock, ServerMetrics.create());
        try (Worker worker = new Worker(inbox, handler, outbox, clock, false, ServerMetrics.create())) {
            worker.start();
            accept(inbox, "d-1-0", "issue_comment", comment(1, "1-0"));
            assertTrue(slowStarted.await(30, TimeUnit.SECONDS));
            for (int i = 1; i <= 5; i++) {
                accept(inbox, "d-1-" + i, "issue_comment", comment(1, "1-" + i));
                for (int issue = 2; issue <= 5; issue++) {
                    accept(inbox, "d-" + issue + "-" + i, "issue_comment", comment(issue, issue + "-" + i));
                }
            }
            // every other issue is processed while issue 1 is stuck in its first delivery
            assertTrue(others.await(30, TimeUnit.SECONDS), handled.toString());
            assertTrue(handled.stream().noneMatch(t -> t.startsWith("1-")), handled.toString());
            assertEquals(6, inbox.queued().stream().filter(q -> q.key().equals("1296269#1")).count(),
                    "issue 1's deliveries wait in the inbox");
            release.countDown();
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (inbox.size() > 0 && System.nanoTime() < deadline) {
                Thread.onSpinWait();
            }
            assertEquals(0, inbox.size());
        }
        // lanes step back for the webhook's threads (nice 4 under -XX:ThreadPriorityPolicy=1)
        assertEquals(List.of(Thread.MIN_PRIORITY), priorities.stream().distinct().toList());
        for (int issue = 1; issue <= 5; issue++) {
            String prefix = issue + "-";
            List<String> mine = handled.stream().filter(t -> t.startsWith(prefix)).toList();
            List<String> expected = new ArrayList<>();
            for (int i = issue == 1 ? 0 : 1; i <= 5; i++) {
                expected.add(prefix + i);
            }
            assertEquals(expected, mine, "issue " + issue + " in the order received");
        }
    }

    @Test
    void closingWorksOffTheDeliveriesAlreadyAcknowledged() throws Exception {
        FileDeliveryQueue inbox = new FileDeliveryQueue(dir.resolve("inbox"), clock);
        CountDownLatch started = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        List<String> handled = Collections.synchronizedList(new ArrayList<>());
        DeliveryProcessor handler = TestProcessors.of((d, payload, progress, save) -> {
            started.countDown();
            try {
                assertTrue(release.await(30, TimeUnit.SECONDS));
            } catch (InterruptedException e) {
                throw new IllegalStateException(e);
            }
            handled.add(text(d));
        });
        Outbox outbox = new Outbox(dir.resolve("outbox"), null, clock, ServerMetrics.create());
        Worker worker = new Worker(inbox, handler, outbox, clock, false, ServerMetrics.create());
        worker.start();
        List<String> expected = new ArrayList<>();
        for (int i = 0; i < 40; i++) { // issue 1 has more deliveries than a lane's turn
            int issue = i % 4 == 0 ? 2 : 1;
            accept(inbox, "d-" + i, "issue_comment", comment(issue, issue + "-" + i));
            expected.add(issue + "-" + i);
        }
        assertTrue(started.await(30, TimeUnit.SECONDS));
        Thread closing = new Thread(worker::close);
        closing.start(); // the server stops while every delivery is still queued but the first
        release.countDown();
        closing.join(60_000);
        assertEquals(0, inbox.size(), "worked off before the worker stopped: " + handled);
        assertEquals(expected.stream().filter(t -> t.startsWith("1-")).toList(),
                handled.stream().filter(t -> t.startsWith("1-")).toList(), "each issue in its order");
        assertEquals(40, handled.size());
    }

    @Test
    void aFailingDeliveryHoldsBackOnlyItsOwnIssueUntilItsRetryIsDue() {
        FileDeliveryQueue inbox = new FileDeliveryQueue(dir.resolve("inbox"), clock);
        List<String> handled = new ArrayList<>();
        int[] failuresLeft = {1};
        DeliveryProcessor handler = TestProcessors.of((d, payload, progress, save) -> {
            String t = text(d);
            if (t.equals("1-0") && failuresLeft[0]-- > 0) {
                throw new IllegalStateException("GitHub is down");
            }
            handled.add(t);
        });
        Outbox outbox = new Outbox(dir.resolve("outbox"), null, clock, ServerMetrics.create());
        Worker worker = new Worker(inbox, handler, outbox, clock, true, ServerMetrics.create());
        accept(inbox, "a", "issue_comment", comment(1, "1-0"));
        accept(inbox, "b", "issue_comment", comment(1, "1-1"));
        accept(inbox, "c", "issue_comment", comment(2, "2-0"));
        worker.drain();
        assertEquals(List.of("2-0"), handled, "issue 2 goes on; issue 1 waits behind its failed delivery");
        assertEquals(1, inbox.progress(inbox.queued().get(0)).attempts());
        clock.advance(Duration.ofSeconds(9));
        worker.drain();
        assertEquals(List.of("2-0"), handled, "not before the backoff is over");
        assertTrue(worker.oldestDue().isEmpty(), "a line waiting out a retry is not overdue");
        clock.advance(Duration.ofSeconds(2));
        worker.drain();
        assertEquals(List.of("2-0", "1-0", "1-1"), handled);
        assertEquals(0, inbox.size());

        // a restart keeps a planned retry: the progress is in the inbox's journal
        accept(inbox, "d", "issue_comment", comment(3, "3-0"));
        failuresLeft[0] = 0;
        FileDeliveryQueue again = new FileDeliveryQueue(dir.resolve("inbox"), clock);
        assertEquals(1, again.size());
        assertEquals(DeliveryQueue.Accepted.DUPLICATE, accept(again, "a", "issue_comment", comment(1, "1-0")));
    }
    /**
     * {@code agentx_deliveries_total} counts a delivery once, at its final outcome: a delivery that
     * failed and was retried is counted as processed once, the failed attempt only in the processing
     * histogram ({@code outcome="retry"}); one that fails for good is counted as failed once.
     */
    @Test
    void aRetriedDeliveryIsCountedOnceAtItsFinalOutcome() {
        FileDeliveryQueue inbox = new FileDeliveryQueue(dir.resolve("inbox"), clock);
        int[] failuresLeft = {1};
        DeliveryProcessor handler = TestProcessors.of((d, payload, progress, save) -> {
            if (text(d).equals("1-0") && failuresLeft[0]-- > 0) {
                throw new IllegalStateException("GitHub is down");
            }
            if (text(d).equals("2-0")) {
                throw new IllegalStateException("always fails");
            }
        });
        var metrics = ServerMetrics.create();
        Outbox outbox = new Outbox(dir.resolve("outbox"), null, clock, metrics);
        Worker worker = new Worker(inbox, handler, outbox, clock, true, metrics);
        accept(inbox, "a", "issue_comment", comment(1, "1-0"));
        accept(inbox, "b", "issue_comment", comment(2, "2-0"));
        for (int i = 0; i < 12 && inbox.size() > 0; i++) {
            worker.drain();
            clock.advance(Duration.ofHours(2));
        }
        assertEquals(0, inbox.size());
        String m = metrics.scrape();
        assertEquals(1, Scrape.value(m, "agentx_deliveries_total{action=\"created\",event=\"issue_comment\","
                + "outcome=\"processed\"}"), m);
        assertEquals(1, Scrape.value(m, "agentx_deliveries_total{action=\"created\",event=\"issue_comment\","
                + "outcome=\"failed\"}"), m);
        assertEquals(2, Scrape.sum(m, "agentx_deliveries_total"), "two deliveries, two outcomes: " + m);
        assertTrue(Scrape.value(m, "agentx_delivery_processing_seconds_count{event=\"issue_comment\","
                + "outcome=\"retry\"}") >= 2, "the failed attempts are timed, not counted as deliveries: " + m);
    }

    /**
     * A command's progress is a note in the outbox journal, durable with its effects. A process that
     * dies after the command (here: an Error out of the handler, nothing closed) leaves it on disk:
     * the next start hands the delivery over with the command counted as done. Once the delivery is
     * done with and the inbox's done record is durable, the note is forgotten.
     */
    @Test
    void aCommandsProgressOutlivesTheProcessAndIsForgottenOnceItsDeliveryIsDurablyDone() {
        FileDeliveryQueue inbox = new FileDeliveryQueue(dir.resolve("inbox"), clock);
        Outbox outbox = new Outbox(dir.resolve("outbox"), null, clock, ServerMetrics.create());
        DeliveryProcessor dies = TestProcessors.of((d, payload, progress, save) -> {
            save.accept(new DeliveryQueue.Progress(progress.commandsDone() + 1, true, 0, null));
            outbox.sync(); // as the contract asks before the next step
            throw new AssertionError("killed after the first command");
        });
        Worker first = new Worker(inbox, dies, outbox, clock, true, ServerMetrics.create());
        accept(inbox, "a", "issue_comment", comment(1, "1-0"));
        try {
            first.drain();
        } catch (AssertionError expected) {
            // the process is gone: nothing is closed, nothing more is written
        }
        assertEquals(0, inbox.progress(inbox.queued().get(0)).commandsDone(), "the inbox's journal has no record");

        FileDeliveryQueue inbox2 = new FileDeliveryQueue(dir.resolve("inbox"), clock);
        Outbox outbox2 = new Outbox(dir.resolve("outbox"), null, clock, ServerMetrics.create());
        assertEquals(List.of(ProgressNotes.PROGRESS + inbox2.queued().get(0).seq()), outbox2.noteNames(ProgressNotes.PROGRESS));
        List<DeliveryQueue.Progress> seen = new ArrayList<>();
        Worker second = new Worker(inbox2, TestProcessors.of((d, payload, progress, save) -> seen.add(progress)),
                outbox2, clock, true,
                ServerMetrics.create());
        second.drain();
        assertEquals(1, seen.size());
        assertEquals(1, seen.get(0).commandsDone(), "the first command is not carried out again");
        assertTrue(seen.get(0).refused());
        assertEquals(0, inbox2.size());
        assertEquals(List.of(ProgressNotes.PROGRESS + "1"), outbox2.noteNames(ProgressNotes.PROGRESS),
                "kept until the done record is durable: the next tick");
        second.drain();
        assertEquals(List.of(), outbox2.noteNames(ProgressNotes.PROGRESS));
        Outbox outbox3 = new Outbox(dir.resolve("outbox"), null, clock, ServerMetrics.create());
        assertEquals(List.of(), outbox3.noteNames(ProgressNotes.PROGRESS), "and stays forgotten");
    }

    /** Queues a delivery with the order key the webhook gives it (its repository and issue). */
    private static DeliveryQueue.Accepted accept(FileDeliveryQueue inbox, String id, String event, byte[] body) {
        try {
            return inbox.accept(id, event, body, Payloads.orderKey(JsonSupport.mapper().readTree(body)));
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }
}
