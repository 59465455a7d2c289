package dev.agentx.clarify.lock;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.agentx.clarify.files.JsonSupport;
import dev.agentx.clarify.protocol.ClarifyException;
import dev.agentx.clarify.protocol.ErrorCode;
import dev.agentx.clarify.support.MutableClock;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class FileLockTest {
    @TempDir
    Path dir;
    MutableClock clock;
    List<Duration> sleeps;
    LockManager locks;
    Path ledger;
    Path lockFile;
    /** The runtime folder: queue, guard, lock content files, temp files (files/RuntimeFolder). */
    Path runtime;
    final ObjectMapper json = JsonSupport.mapper();

    @BeforeEach
    void setUp() {
        clock = MutableClock.at("2026-02-26T10:00:00Z");
        sleeps = new ArrayList<>();
        // The sleeper moves the fake clock: waiting 5 s of lock time takes no real time.
        Sleeper fake = d -> {
            sleeps.add(d);
            clock.advance(d);
        };
        locks = new LockManager(clock, LockSettings.defaults(), fake, ProcessIdentity.current(), LockObserver.NONE);
        ledger = dir.resolve("issue-42.json");
        lockFile = dir.resolve("issue-42.json.lock");
        runtime = dir.resolve(".runtime");
    }

    private void foreignLock(String host, long pid, Instant at) throws Exception {
        Files.write(lockFile, json.writeValueAsBytes(new LockInfo(pid, at, "other", "their-token", host, null)));
    }

    @Test
    void acquireWritesOwnerInfoAndReleaseRemovesIt() throws Exception {
        LockInfo seen = locks.withLock(ledger, "engineer", () -> {
            assertTrue(Files.exists(lockFile));
            try {
                return json.readValue(Files.readAllBytes(lockFile), LockInfo.class);
            } catch (Exception e) {
                throw new RuntimeException(e);
            }
        });
        assertEquals(ProcessHandle.current().pid(), seen.pid());
        assertEquals("engineer", seen.agent());
        assertEquals(clock.instant(), seen.timestamp());
        assertFalse(seen.token().isBlank());
        assertFalse(seen.host().isBlank());
        assertFalse(Files.exists(lockFile), "released");
        assertTrue(sleeps.isEmpty(), "no waiting when free");
    }

    @Test
    void staleLockFromAnotherHostIsTakenOverAfter30s() throws Exception {
        foreignLock("elsewhere", 1, clock.instant().minusSeconds(31));
        locks.withLock(ledger, "engineer", () -> null);
        assertTrue(sleeps.isEmpty(), "taken over at once");
        assertFalse(Files.exists(lockFile));
        try (Stream<Path> files = Stream.concat(Files.list(dir), Files.list(runtime))) {
            assertTrue(files.noneMatch(p -> p.getFileName().toString().contains(".stale-")),
                    "the renamed-away stale lock is cleaned up");
        }
    }

    @Test
    void takingOverAStaleLockSweepsOldTempLockFiles() throws Exception {
        Files.createDirectories(runtime);
        Path old = runtime.resolve("issue-42.json.lock.dead-token");
        Path young = runtime.resolve("issue-42.json.lock.live-token");
        Path otherLocks = runtime.resolve("issue-7.json.lock.spare-of-a-killed-process");
        Files.writeString(old, "{}");
        Files.writeString(young, "{}");
        Files.writeString(otherLocks, "{}");
        Files.setLastModifiedTime(old, FileTime.from(clock.instant().minusSeconds(120)));
        Files.setLastModifiedTime(otherLocks, FileTime.from(clock.instant().minusSeconds(120)));
        Files.setLastModifiedTime(young, FileTime.from(clock.instant()));
        foreignLock("elsewhere", 1, clock.instant().minusSeconds(31));
        locks.withLock(ledger, "engineer", () -> null);
        assertFalse(Files.exists(old), "left by a killed process long ago");
        assertFalse(Files.exists(otherLocks), "another lock's leftover in the directory");
        assertTrue(Files.exists(young), "may belong to a process linking it right now");
    }

    /**
     * A holder killed while writing its file leaves the file's temp copy, and one killed while
     * taking over a stale lock leaves that lock renamed away: the next take-over removes both,
     * whatever their age, and leaves the temp files of other files alone (their writers may be
     * writing them now, under their own locks).
     */
    @Test
    void takingOverALockRemovesTheDeadHoldersTempFileAndStaleLocksRenamedAway() throws Exception {
        Files.createDirectories(runtime);
        Path temp = runtime.resolve("issue-42.json.tmp-4e0434030ca4f5a5");
        Path renamed = runtime.resolve("issue-9.json.lock.stale-0b7e7c1e-9a52-4c3e-8d0e-3f7e0a1c2b4d");
        Path othersTemp = runtime.resolve("issue-7.json.tmp-a76079e19c2f2c95");
        for (Path p : List.of(temp, renamed, othersTemp)) {
            Files.writeString(p, "{}");
            Files.setLastModifiedTime(p, FileTime.from(clock.instant()));
        }
        Process p = new ProcessBuilder("true").start();
        assertTrue(p.waitFor(10, TimeUnit.SECONDS));
        foreignLock(ProcessIdentity.current().host(), p.pid(), clock.instant());
        locks.withLock(ledger, "engineer", () -> null);
        assertFalse(Files.exists(temp), "the dead holder's temp copy of the locked file");
        assertFalse(Files.exists(renamed), "a stale lock renamed away by a process killed before deleting it");
        assertTrue(Files.exists(othersTemp), "another file's temp file");
    }

    @Test
    void freshLockFromAnotherHostTimesOutAfterFifteenSeconds() throws Exception {
        foreignLock("elsewhere", 1, clock.instant().minusSeconds(1));
        Instant start = clock.instant();
        ClarifyException e = assertThrows(ClarifyException.class, () -> locks.withLock(ledger, "engineer", () -> null));
        assertEquals(ErrorCode.LOCK_TIMEOUT, e.code());
        assertTrue(e.getMessage().contains("Failed to acquire lock for issue-42.json"), e.getMessage());
        assertTrue(e.getMessage().contains("held by 'other'"), e.getMessage());
        assertEquals(Duration.ofSeconds(15), Duration.between(start, clock.instant()), "no progress for 15 s: LOCK_TIMEOUT");
        // a holder of another kind is polled with short sleeps: 10 ms x 2^n (n at most 3) with jitter in
        // [0.5, 1), each within its band, the last one cut to the cap
        for (int n = 0; n < sleeps.size() - 1; n++) {
            long base = 10L << Math.min(n, 3);
            long ms = sleeps.get(n).toMillis();
            assertTrue(ms >= base / 2 && ms <= base, "sleep " + n + " = " + ms + " ms");
        }
        assertTrue(sleeps.size() >= 190 && sleeps.size() <= 400, "attempts: " + sleeps.size());
        assertTrue(Files.exists(lockFile), "a live foreign lock is never removed");
        assertEquals("their-token", json.readValue(Files.readAllBytes(lockFile), LockInfo.class).token());
    }

    /**
     * A caller that already waited behind the same holder (in its queue, behind another of our
     * processes that was waiting for that holder) gets what is left of its 15 s, not 15 s more.
     */
    @Test
    void aWaitThatGoesOnFromAnEarlierOneHasOnlyWhatIsLeftForTheSameHolder() throws Exception {
        foreignLock("elsewhere", 1, clock.instant().minusSeconds(1));
        Instant start = clock.instant();
        ClarifyException e = assertThrows(ClarifyException.class, () -> locks.withLockIfFree(ledger, "engineer",
                System.nanoTime(), Duration.ofSeconds(3), () -> { }));
        assertEquals(ErrorCode.LOCK_TIMEOUT, e.code());
        assertEquals(Duration.ofSeconds(3), Duration.between(start, clock.instant()), "what was left: 3 s");
        assertTrue(Files.exists(lockFile), "a live foreign lock is never removed");
    }

    /**
     * A holder of another kind that lets go and takes the lock again every 2 s (a new token each
     * time) is a queue that moves: it is waited out, and the lock taken once it stops.
     */
    @Test
    void aHolderOfAnotherKindThatChangesIsWaitedOutUpToTheQueuesLimit() throws Exception {
        Instant start = clock.instant();
        int[] holders = {0};
        LockManager moving = new LockManager(clock, LockSettings.defaults(), d -> {
            clock.advance(d);
            long elapsed = Duration.between(start, clock.instant()).toMillis();
            try {
                if (elapsed >= 40_000) {
                    Files.deleteIfExists(lockFile); // it stops after 40 s
                } else if (elapsed / 2_000 >= holders[0]) {
                    holders[0]++;
                    Files.write(lockFile, json.writeValueAsBytes(new LockInfo(1, clock.instant(), "script",
                            "token-" + holders[0], "elsewhere", null)));
                }
            } catch (Exception e) {
                throw new RuntimeException(e);
            }
        }, ProcessIdentity.current(), LockObserver.NONE);
        Files.write(lockFile, json.writeValueAsBytes(new LockInfo(1, clock.instant(), "script", "token-0",
                "elsewhere", null)));
        moving.withLock(ledger, "engineer", () -> null);
        Duration waited = Duration.between(start, clock.instant());
        assertTrue(waited.compareTo(Duration.ofSeconds(40)) >= 0 && waited.compareTo(Duration.ofSeconds(41)) < 0,
                "taken when the other holder stopped, after " + waited);

        // one that never stops: LOCK_TIMEOUT after 120 s in all
        Instant again = clock.instant();
        long[] n = {0};
        LockManager forever = new LockManager(clock, LockSettings.defaults(), d -> {
            clock.advance(d);
            try {
                Files.write(lockFile, json.writeValueAsBytes(new LockInfo(1, clock.instant(), "script",
                        "forever-" + (n[0]++ / 100), "elsewhere", null)));
            } catch (Exception e) {
                throw new RuntimeException(e);
            }
        }, ProcessIdentity.current(), LockObserver.NONE);
        Files.write(lockFile, json.writeValueAsBytes(new LockInfo(1, clock.instant(), "script", "forever", "elsewhere",
                null)));
        ClarifyException e = assertThrows(ClarifyException.class, () -> forever.withLock(ledger, "engineer", () -> null));
        assertEquals(ErrorCode.LOCK_TIMEOUT, e.code());
        assertEquals(Duration.ofSeconds(120), Duration.between(again, clock.instant()), e.getMessage());
        assertTrue(e.getMessage().contains("120s in all"), e.getMessage());
    }

    @Test
    void lockOfADeadProcessOnThisHostIsTakenAtOnce() throws Exception {
        Process p = new ProcessBuilder("true").start();
        assertTrue(p.waitFor(10, TimeUnit.SECONDS));
        long deadPid = p.pid();
        foreignLock(ProcessIdentity.current().host(), deadPid, clock.instant());
        locks.withLock(ledger, "engineer", () -> null);
        assertTrue(sleeps.isEmpty(), "dead owner: no waiting for the 30 s");
    }

    @Test
    void lockOfALiveProcessOnThisHostIsRespected() throws Exception {
        foreignLock(ProcessIdentity.current().host(), ProcessHandle.current().pid(), clock.instant());
        ClarifyException e = assertThrows(ClarifyException.class, () -> locks.withLock(ledger, "engineer", () -> null));
        assertEquals(ErrorCode.LOCK_TIMEOUT, e.code());
    }

    @Test
    void aLiveOwnerOnThisHostIsNeverStaleHoweverOld() throws Exception {
        foreignLock(ProcessIdentity.current().host(), ProcessHandle.current().pid(), clock.instant().minusSeconds(3600));
        ClarifyException e = assertThrows(ClarifyException.class, () -> locks.withLock(ledger, "engineer", () -> null));
        assertEquals(ErrorCode.LOCK_TIMEOUT, e.code(), "an hour old, but its owner lives: a paused process resumes");
        assertEquals("their-token", json.readValue(Files.readAllBytes(lockFile), LockInfo.class).token());
    }

    @Test
    void aWriterWhoseLockWasTakenOverWritesNothing() throws Exception {
        ClarifyException e = assertThrows(ClarifyException.class, () -> locks.withLock(ledger, "engineer", () -> {
            try {
                // paused past the stale time, elsewhere: another host took the lock over and holds it now
                Files.delete(lockFile);
                foreignLock("elsewhere", 7, clock.instant());
            } catch (Exception ex) {
                throw new IllegalStateException(ex);
            }
            locks.commit(ledger, () -> Files.writeString(ledger, "mine"));
            return null;
        }));
        assertEquals(ErrorCode.LOCK_LOST, e.code());
        assertEquals(4, e.code().exitCode(), "safe to retry, like LOCK_TIMEOUT");
        assertFalse(Files.exists(ledger), "nothing written");
        assertEquals("their-token", json.readValue(Files.readAllBytes(lockFile), LockInfo.class).token());
    }

    @Test
    void releaseLeavesALockThatIsNoLongerOurs() throws Exception {
        locks.withLock(ledger, "engineer", () -> {
            try {
                // another process took the lock over (as stale) while we were slow
                foreignLock("elsewhere", 7, clock.instant());
            } catch (Exception e) {
                throw new RuntimeException(e);
            }
            return null;
        });
        assertTrue(Files.exists(lockFile), "someone else's lock is not deleted");
        assertEquals("their-token", json.readValue(Files.readAllBytes(lockFile), LockInfo.class).token());
    }

    /**
     * A lock taken over (renamed away) and made again by someone else is not ours, even with our
     * very bytes in it: the holder goes by the file it made, not by what a file says.
     */
    @Test
    void aLockMadeAgainWithOurBytesIsNotOurs() throws Exception {
        byte[][] ours = new byte[1][];
        locks.withLock(ledger, "engineer", () -> {
            try {
                ours[0] = Files.readAllBytes(lockFile);
                Files.move(lockFile, lockFile.resolveSibling("taken-away"));
                Files.write(lockFile, ours[0]);
            } catch (Exception e) {
                throw new RuntimeException(e);
            }
            return null;
        });
        assertTrue(Files.exists(lockFile), "someone else's lock is not deleted");
        assertArrayEquals(ours[0], Files.readAllBytes(lockFile));
    }

    /** A lock with only the protocol's fields (pid, timestamp, agent), as another tool may write it. */
    @Test
    void aTimeoutNamesTheHolderOfALockWithOnlyTheProtocolsFields() throws Exception {
        Instant at = clock.instant().minusSeconds(1);
        Files.writeString(lockFile, "{\"pid\":4242,\"timestamp\":\"" + at + "\",\"agent\":\"architect\"}");
        Files.setLastModifiedTime(lockFile, FileTime.from(at));
        ClarifyException e = assertThrows(ClarifyException.class, () -> locks.withLock(ledger, "engineer", () -> null));
        assertEquals(ErrorCode.LOCK_TIMEOUT, e.code());
        assertTrue(e.getMessage().contains("It is held by 'architect' (pid 4242, since " + at + ")."), e.getMessage());
        assertFalse(e.getMessage().contains("null"), e.getMessage());
    }

    @Test
    void emptyLockFileIsJudgedByItsAge() throws Exception {
        Files.createFile(lockFile);
        Files.setLastModifiedTime(lockFile, FileTime.from(clock.instant().minusSeconds(5)));
        assertEquals(ErrorCode.LOCK_TIMEOUT, assertThrows(ClarifyException.class,
                () -> locks.withLock(ledger, "engineer", () -> null)).code());
        Files.setLastModifiedTime(lockFile, FileTime.from(clock.instant().minusSeconds(60)));
        sleeps.clear();
        locks.withLock(ledger, "engineer", () -> null);
        assertTrue(sleeps.isEmpty());
    }

    @Test
    void threadsOfOneProcessNeverOverlap() throws Exception {
        LockManager real = LockManager.standard(java.time.Clock.systemUTC());
        int[] counter = {0};
        int[] inside = {0};
        int[] maxInside = {0};
        ExecutorService pool = Executors.newFixedThreadPool(4);
        List<Future<?>> futures = new ArrayList<>();
        for (int i = 0; i < 200; i++) {
            futures.add(pool.submit(() -> real.withLock(ledger, "t", () -> {
                synchronized (counter) {
                    inside[0]++;
                    maxInside[0] = Math.max(maxInside[0], inside[0]);
                }
                int c = counter[0];
                Thread.yield();
                counter[0] = c + 1;
                synchronized (counter) {
                    inside[0]--;
                }
                return null;
            })));
        }
        for (Future<?> f : futures) {
            f.get(60, TimeUnit.SECONDS);
        }
        pool.shutdown();
        assertEquals(200, counter[0]);
        assertEquals(1, maxInside[0]);
        assertEquals(0, real.filesInUse(), "the last thread out removes the file's in-process lock");
    }

    @Test
    void withLockIfFreeRunsAtOnceWhenFreeAndNotAtAllWhileAnotherOfOursHoldsIt() throws Exception {
        LockManager real = LockManager.standard(java.time.Clock.systemUTC());
        LockManager other = LockManager.standard(java.time.Clock.systemUTC());
        int[] ran = {0};
        assertTrue(real.withLockIfFree(ledger, "a", () -> ran[0]++));
        java.util.concurrent.CountDownLatch held = new java.util.concurrent.CountDownLatch(1);
        java.util.concurrent.CountDownLatch release = new java.util.concurrent.CountDownLatch(1);
        ExecutorService pool = Executors.newSingleThreadExecutor();
        try {
            Future<?> holder = pool.submit(() -> other.withLock(ledger, "b", () -> {
                held.countDown();
                try {
                    return release.await(60, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    throw new IllegalStateException(e);
                }
            }));
            assertTrue(held.await(30, TimeUnit.SECONDS));
            assertFalse(real.withLockIfFree(ledger, "a", () -> ran[0]++), "held: not run, and no wait");
            release.countDown();
            holder.get(30, TimeUnit.SECONDS);
        } finally {
            release.countDown();
            pool.shutdownNow();
        }
        assertTrue(real.withLockIfFree(ledger, "a", () -> ran[0]++));
        assertEquals(2, ran[0]);
        assertFalse(Files.exists(lockFile));
        assertEquals(0, real.filesInUse());
    }

    @Test
    void noInProcessLockIsKeptForAFileNoThreadUses() throws Exception {
        for (int i = 0; i < 1000; i++) {
            locks.withLock(dir.resolve("issue-" + i + ".json"), "a", () -> null);
        }
        assertEquals(0, locks.filesInUse(), "a server touching many issues keeps no lock per file it ever locked");
        assertThrows(IllegalStateException.class, () -> locks.withLock(ledger, "a",
                () -> locks.withLock(ledger, "a", () -> null)));
        assertEquals(0, locks.filesInUse(), "nor after a nested lock was refused");

        // a thread waiting for the file keeps its lock alive while the holder leaves
        LockManager real = LockManager.standard(java.time.Clock.systemUTC());
        java.util.concurrent.CountDownLatch held = new java.util.concurrent.CountDownLatch(1);
        java.util.concurrent.CountDownLatch release = new java.util.concurrent.CountDownLatch(1);
        ExecutorService pool = Executors.newFixedThreadPool(2);
        Future<?> holder = pool.submit(() -> real.withLock(ledger, "h", () -> {
            held.countDown();
            try {
                release.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            return null;
        }));
        held.await();
        Future<String> waiter = pool.submit(() -> real.withLock(ledger, "w", () -> "got it"));
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!real.hasQueuedThreadsFor(ledger) && System.nanoTime() < deadline) {
            Thread.onSpinWait();
        }
        assertEquals(1, real.filesInUse());
        release.countDown();
        holder.get(10, TimeUnit.SECONDS);
        assertEquals("got it", waiter.get(10, TimeUnit.SECONDS));
        pool.shutdown();
        assertEquals(0, real.filesInUse());
    }

    @Test
    void nestedLockingInOneThreadIsAProgrammingError() {
        assertThrows(IllegalStateException.class, () -> locks.withLock(ledger, "a",
                () -> locks.withLock(ledger, "a", () -> null)));
        assertFalse(Files.exists(lockFile));
    }

    private List<Path> hiddenLockFiles() throws Exception {
        try (Stream<Path> files = Files.list(runtime)) {
            return files.filter(p -> p.getFileName().toString().matches("issue-\\d+\\.json\\.lock\\..*")).toList();
        }
    }

    private LockInfo lockInfo(Path lock) throws Exception {
        return json.readValue(Files.readAllBytes(lock), LockInfo.class);
    }

    @Test
    void aReleasedLocksContentFileIsWrittenAgainForTheNextLockInItsDirectory() throws Exception {
        FileLock fileLock = new FileLock(clock, LockSettings.defaults(), d -> clock.advance(d), ProcessIdentity.current());
        Object firstInode;
        try (FileLock.Held held = fileLock.acquire(ledger, "a-rather-long-agent-name", Duration.ofSeconds(5))) {
            firstInode = Files.readAttributes(lockFile, java.nio.file.attribute.BasicFileAttributes.class).fileKey();
            assertEquals("a-rather-long-agent-name", lockInfo(lockFile).agent());
        }
        assertFalse(Files.exists(lockFile), "released");
        assertEquals(1, hiddenLockFiles().size(), "its content file is kept, linked nowhere");

        Path other = dir.resolve("issue-43.json");
        Path otherLock = FileLock.lockPathOf(other);
        try (FileLock.Held held = fileLock.acquire(other, "pm", Duration.ofSeconds(5))) {
            assertEquals(firstInode, Files.readAttributes(otherLock,
                    java.nio.file.attribute.BasicFileAttributes.class).fileKey(), "no new inode");
            LockInfo info = lockInfo(otherLock); // shorter content than before: nothing of the old one left over
            assertEquals("pm", info.agent());
            assertEquals(held.info().token(), info.token());
            // written in place with one write, never cut shorter: the JSON, then only spaces
            String text = Files.readString(otherLock);
            String object = text.stripTrailing();
            assertTrue(object.endsWith("}"), text);
            assertTrue(text.substring(object.length()).chars().allMatch(c -> c == ' '), text);
            assertEquals("pm", json.readTree(text).get("agent").asText());
        }
        fileLock.deleteSpares(); // what the process does at exit
        assertEquals(List.of(), hiddenLockFiles());
    }

    @Test
    void aLockOfALedgerWhoseFolderIsNotMadeYetMakesTheFolder() throws Exception {
        // the runtime folder is the state folder's (made on entering it); clarifications/ is not
        Path deep = dir.resolve("state").resolve("clarifications").resolve("issue-7.json");
        try (FileLock.Held held = new FileLock(clock, LockSettings.defaults(), d -> clock.advance(d),
                ProcessIdentity.current()).acquire(deep, "engineer", Duration.ofSeconds(5))) {
            assertEquals(held.info().token(), lockInfo(FileLock.lockPathOf(deep)).token());
        }
        assertTrue(Files.isDirectory(deep.getParent()));
        assertFalse(Files.exists(FileLock.lockPathOf(deep)));
    }

    @Test
    void aContentFileSweptAwayWhileSpareIsReplacedByANewOne() throws Exception {
        FileLock fileLock = new FileLock(clock, LockSettings.defaults(), d -> clock.advance(d), ProcessIdentity.current());
        fileLock.acquire(ledger, "engineer", Duration.ofSeconds(5)).close();
        for (Path p : hiddenLockFiles()) {
            Files.delete(p); // as a takeover's sweep deletes a leftover older than the stale time
        }
        try (FileLock.Held held = fileLock.acquire(ledger, "engineer", Duration.ofSeconds(5))) {
            assertEquals(held.info().token(), lockInfo(lockFile).token());
        }
        assertFalse(Files.exists(lockFile));
        assertEquals(1, hiddenLockFiles().size());
        fileLock.deleteSpares();
    }

    @Test
    void aLockTakenOverWhileHeldLeavesNoContentFileToReuse() throws Exception {
        locks.withLock(ledger, "engineer", () -> {
            try {
                // taken over as stale: renamed away (our content file keeps its hidden name), a new lock made
                Files.move(lockFile, dir.resolve("issue-42.json.lock.stale-x"));
                Files.delete(dir.resolve("issue-42.json.lock.stale-x"));
                foreignLock("elsewhere", 7, clock.instant());
            } catch (Exception e) {
                throw new RuntimeException(e);
            }
            return null;
        });
        assertEquals("their-token", lockInfo(lockFile).token());
        assertEquals(List.of(), hiddenLockFiles(), "ours deleted, never written again while someone could read it");
    }

    @Test
    void tokensAreUniquePerAcquisition() throws Exception {
        String a = locks.withLock(ledger, "x", this::token);
        String b = locks.withLock(ledger, "x", this::token);
        assertNotEquals(a, b);
    }

    private String token() {
        try {
            return json.readValue(Files.readAllBytes(lockFile), LockInfo.class).token();
        } catch (Exception e) {
            throw new RuntimeException(e);
        }
    }
}
