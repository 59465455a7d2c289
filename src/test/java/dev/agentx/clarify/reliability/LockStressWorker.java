package dev.agentx.clarify.reliability;

import dev.agentx.clarify.lock.LockManager;
import dev.agentx.clarify.protocol.ClarifyException;
import dev.agentx.clarify.protocol.ErrorCode;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Clock;
import java.util.concurrent.ThreadLocalRandom;

/**
 * One process of the lock stress test: N times, take the lock, hold it for a random time, release.
 * Inside, it records the hold in an independent log (O_APPEND lines with System.nanoTime, which on
 * Linux is CLOCK_MONOTONIC, shared by all processes) and creates a marker file with CREATE_NEW,
 * which fails if another holder is inside at the same time.
 */
public final class LockStressWorker {
    private LockStressWorker() {
    }

    public static void main(String[] args) throws Exception {
        Path dir = Path.of(args[0]);
        int n = Integer.parseInt(args[1]);
        int maxHoldMs = Integer.parseInt(args[2]);
        long pid = ProcessHandle.current().pid();
        LockManager locks = LockManager.standard(Clock.systemUTC());
        Path file = dir.resolve("issue-1.json");
        Path marker = dir.resolve("inside.marker");
        Path log = dir.resolve("holds.log");
        int timeouts = 0;
        int violations = 0;
        for (int i = 0; i < n; ) {
            try {
                int[] v = {0};
                locks.withLock(file, "stress", () -> {
                    long start = System.nanoTime();
                    try {
                        Files.createFile(marker);
                    } catch (FileAlreadyExistsException e) {
                        v[0]++;
                    } catch (Exception e) {
                        throw new RuntimeException(e);
                    }
                    sleep(ThreadLocalRandom.current().nextInt(maxHoldMs + 1));
                    try {
                        Files.deleteIfExists(marker);
                    } catch (Exception e) {
                        throw new RuntimeException(e);
                    }
                    long end = System.nanoTime();
                    append(log, pid + " " + start + " " + end + "\n");
                    return null;
                });
                violations += v[0];
                i++;
            } catch (ClarifyException e) {
                if (e.code() != ErrorCode.LOCK_TIMEOUT) {
                    throw e;
                }
                timeouts++;
            }
        }
        System.out.println("DONE timeouts=" + timeouts + " violations=" + violations);
    }

    private static void sleep(int ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static void append(Path log, String line) {
        try (FileChannel ch = FileChannel.open(log, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
                StandardOpenOption.APPEND)) {
            ch.write(ByteBuffer.wrap(line.getBytes(StandardCharsets.US_ASCII)));
        } catch (Exception e) {
            throw new RuntimeException(e);
        }
    }
}
