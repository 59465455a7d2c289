package dev.agentx.clarify.files;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

class GroupCommitTest {
    @Test
    void callersWhoArriveDuringASyncShareTheNextOne() throws Exception {
        CountDownLatch firstStarted = new CountDownLatch(1);
        CountDownLatch releaseFirst = new CountDownLatch(1);
        AtomicInteger syncs = new AtomicInteger();
        GroupCommit commit = new GroupCommit(() -> {
            if (syncs.incrementAndGet() == 1) {
                firstStarted.countDown();
                await(releaseFirst);
            }
        });
        Thread first = new Thread(commit::commit);
        first.start();
        assertTrue(firstStarted.await(10, TimeUnit.SECONDS));
        List<Thread> waiters = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            Thread t = new Thread(commit::commit);
            waiters.add(t);
            t.start();
        }
        for (Thread t : waiters) { // all five took their tickets and wait for the running sync
            while (!waitingForTheSync(t)) {
                assertTrue(t.isAlive());
                Thread.onSpinWait();
            }
        }
        releaseFirst.countDown();
        first.join(10_000);
        for (Thread t : waiters) {
            t.join(10_000);
            assertEquals(Thread.State.TERMINATED, t.getState());
        }
        // the first sync started before they called, so it does not count for them; one more serves all five
        assertEquals(2, syncs.get());
    }

    @Test
    void aCommitReturnsOnlyAfterASyncThatStartedAfterTheCall() throws Exception {
        AtomicLong written = new AtomicLong();
        AtomicLong durable = new AtomicLong();
        GroupCommit commit = new GroupCommit(() -> {
            long upTo = written.get(); // what the sync covers: everything written before it started
            Thread.yield();
            durable.accumulateAndGet(upTo, Math::max);
        });
        List<Thread> threads = new ArrayList<>();
        AtomicInteger violations = new AtomicInteger();
        for (int i = 0; i < 8; i++) {
            Thread t = new Thread(() -> {
                for (int n = 0; n < 200; n++) {
                    long mine = written.incrementAndGet();
                    commit.commit();
                    if (durable.get() < mine) {
                        violations.incrementAndGet();
                    }
                }
            });
            threads.add(t);
            t.start();
        }
        for (Thread t : threads) {
            t.join(60_000);
        }
        assertEquals(0, violations.get());
        assertEquals(1600, written.get());
    }

    @Test
    void aFailedSyncFailsItsCallerAndTheNextCommitSyncsAgain() {
        AtomicInteger calls = new AtomicInteger();
        GroupCommit commit = new GroupCommit(() -> {
            if (calls.incrementAndGet() == 1) {
                throw new IOException("disk full");
            }
        });
        UncheckedIOException e = assertThrows(UncheckedIOException.class, commit::commit);
        assertEquals("disk full", e.getCause().getMessage());
        commit.commit();
        assertEquals(2, calls.get());
    }

    private static boolean waitingForTheSync(Thread t) {
        if (t.getState() != Thread.State.WAITING) {
            return false;
        }
        for (StackTraceElement e : t.getStackTrace()) {
            if (e.getMethodName().equals("awaitUninterruptibly")) {
                return true;
            }
        }
        return false;
    }

    private static void await(CountDownLatch latch) {
        try {
            latch.await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
