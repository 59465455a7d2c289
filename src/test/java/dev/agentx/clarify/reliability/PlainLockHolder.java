package dev.agentx.clarify.reliability;

import java.nio.charset.StandardCharsets;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.time.Instant;
import java.util.Arrays;
import java.util.concurrent.ThreadLocalRandom;

/**
 * A process that knows only the documented lock-file protocol, as the AgentX PowerShell scripts
 * do: create {@code issue-1.json.lock} exclusively holding {@code {pid, timestamp, agent}}; if it
 * exists, wait a little and try again (taking it over by renaming it away only when older than
 * 30 s); while holding it, read the ledger, write it back whole through a temp file and a rename,
 * and delete the lock. It never looks at our queue or guard files. Each hold is recorded as
 * {@code <pid> <start> <end>}; the ledger changing under it during a hold is printed as a violation.
 */
public final class PlainLockHolder {
    private PlainLockHolder() {
    }

    public static void main(String[] args) throws Exception {
        Path dir = Path.of(args[0]);
        int n = Integer.parseInt(args[1]);
        Path holds = Path.of(args[2]);
        Path ledger = dir.resolve("issue-1.json");
        Path lock = dir.resolve("issue-1.json.lock");
        long pid = ProcessHandle.current().pid();
        int violations = 0;
        for (int i = 0; i < n; i++) {
            String content = "{\"pid\": " + pid + ", \"timestamp\": \"" + Instant.now() + "\", \"agent\": \"script\"}";
            while (true) {
                try {
                    Files.write(lock, content.getBytes(StandardCharsets.UTF_8), StandardOpenOption.CREATE_NEW,
                            StandardOpenOption.WRITE);
                    break;
                } catch (FileAlreadyExistsException e) {
                    try {
                        Instant modified = Files.getLastModifiedTime(lock).toInstant();
                        if (Duration.between(modified, Instant.now()).getSeconds() > 30) {
                            Files.move(lock, dir.resolve("issue-1.json.lock.stale-" + pid + "-" + i),
                                    StandardCopyOption.ATOMIC_MOVE);
                            continue;
                        }
                    } catch (NoSuchFileException gone) {
                        continue;
                    }
                    AskWorker.sleep(5 + ThreadLocalRandom.current().nextInt(15));
                }
            }
            long start = System.nanoTime();
            byte[] before = Files.exists(ledger) ? Files.readAllBytes(ledger) : null;
            AskWorker.sleep(2 + ThreadLocalRandom.current().nextInt(8));
            if (before != null) {
                if (!Arrays.equals(before, Files.readAllBytes(ledger))) {
                    violations++;
                }
                Path temp = dir.resolve(".issue-1.json.script-" + pid);
                Files.write(temp, before);
                Files.move(temp, ledger, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
            }
            AskWorker.append(holds, pid + " " + start + " " + System.nanoTime() + "\n");
            Files.delete(lock);
            AskWorker.sleep(ThreadLocalRandom.current().nextInt(10));
        }
        System.out.println("DONE violations=" + violations);
    }
}
