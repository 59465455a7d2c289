package dev.agentx.clarify.github.inbox;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class AckPriorityTest {
    /** Waits until the thread blocks (in laneStarting), without sleeping a fixed time. */
    private static void awaitBlocked(Thread t) {
        long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
        while (t.getState() != Thread.State.TIMED_WAITING && t.getState() != Thread.State.WAITING) {
            assertTrue(System.nanoTime() < deadline, "the lane did not wait: " + t.getState());
            Thread.onSpinWait();
        }
    }

    @Test
    void everyLaneWorksWhileTheWebhookKeepsUp() {
        AckPriority p = new AckPriority(3);
        p.requestStarted(); // one request in flight is not a queue
        for (int i = 0; i < 3; i++) {
            p.laneStarting();
        }
        assertEquals(3, p.allowedLanes());
    }

    @Test
    void whileRequestsQueueUpOneLaneWorksAndTheOthersWaitForTheBurstToEnd() throws Exception {
        AckPriority p = new AckPriority(4);
        p.requestStarted();
        p.requestStarted();
        assertEquals(1, p.allowedLanes());
        p.laneStarting(); // one lane always works
        AtomicInteger started = new AtomicInteger();
        CountDownLatch second = new CountDownLatch(1);
        Thread lane = new Thread(() -> {
            p.laneStarting();
            started.incrementAndGet();
            second.countDown();
        });
        lane.start();
        awaitBlocked(lane);
        assertEquals(0, started.get(), "a second lane waits while acknowledgements queue up");
        p.requestEnded(); // one in flight: the burst is over
        assertTrue(second.await(10, TimeUnit.SECONDS), "the waiting lane goes on once the burst ends");
        lane.join();
        assertEquals(4, p.allowedLanes());
    }

    @Test
    void aLaneThatFinishesLetsTheNextOneStartDuringABurst() throws Exception {
        AckPriority p = new AckPriority(4);
        p.requestStarted();
        p.requestStarted();
        p.laneStarting();
        CountDownLatch next = new CountDownLatch(1);
        Thread lane = new Thread(() -> {
            p.laneStarting();
            next.countDown();
        });
        lane.start();
        awaitBlocked(lane);
        p.laneDone();
        assertTrue(next.await(10, TimeUnit.SECONDS), "the worker never stops: one delivery at a time goes on");
        lane.join();
    }

    @Test
    void aLaneWaitingForItsCommitLetsTheNextStartDuringABurstAndGoesOnAfterIt() throws Exception {
        AckPriority p = new AckPriority(4);
        p.requestStarted();
        p.requestStarted();
        p.laneStarting();
        dev.agentx.clarify.store.UnitOfWork.Participant unit = p.stepAsideWhileCommitting();
        CountDownLatch next = new CountDownLatch(1);
        Thread second = new Thread(() -> {
            p.laneStarting();
            next.countDown();
        });
        second.start();
        awaitBlocked(second);
        assertEquals(1, next.getCount(), "the first lane is computing: the second waits");
        unit.committing(); // the first lane's delivery waits for the disk
        assertTrue(next.await(10, TimeUnit.SECONDS), "a lane waiting for its commit uses no core: the next starts");
        second.join();
        unit.committed(); // both count again: a third waits for one of them
        CountDownLatch third = new CountDownLatch(1);
        Thread lane = new Thread(() -> {
            p.laneStarting();
            third.countDown();
        });
        lane.start();
        awaitBlocked(lane);
        p.laneDone();
        assertEquals(1, third.getCount(), "two lanes were working: one done leaves one, the limit");
        p.laneDone();
        assertTrue(third.await(10, TimeUnit.SECONDS));
        lane.join();
        unit.rolledBack(); // told twice: counted back once
        p.laneDone();
        assertEquals(1, p.allowedLanes());
    }

    @Test
    void anInterruptedLaneGoesOnWithItsInterruptKept() throws Exception {
        AckPriority p = new AckPriority(1);
        p.laneStarting();
        AtomicInteger interrupted = new AtomicInteger();
        Thread lane = new Thread(() -> {
            p.laneStarting();
            if (Thread.currentThread().isInterrupted()) {
                interrupted.incrementAndGet();
            }
        });
        lane.start();
        awaitBlocked(lane);
        lane.interrupt(); // the worker is stopping
        lane.join(10_000);
        assertEquals(1, interrupted.get());
        assertThrows(IllegalArgumentException.class, () -> new AckPriority(0));
    }
}
