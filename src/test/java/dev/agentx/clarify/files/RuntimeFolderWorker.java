package dev.agentx.clarify.files;

import dev.agentx.clarify.lock.LockManager;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Clock;

/**
 * A process of the runtime folder's tests.
 * <ul>
 *   <li>{@code present FOLDER}: holds a shared lock on the folder's {@code in-use}, as a process
 *   that entered it does, prints {@code held}, and keeps it until its input ends (or it is killed);</li>
 *   <li>{@code count STATE N}: N times, adds one to {@code STATE/counter} under the file's lock (its
 *   new content written through the runtime folder), then leaves the runtime folder; prints
 *   {@code DONE missing=M again=A}: the times it found the folder missing before it entered it,
 *   and the times it found it cleared under it and made it again;</li>
 *   <li>{@code churn STATE N}: N times, enters the runtime folder, makes a file in it and leaves
 *   it, so that it is often the last one out; prints {@code DONE missing=M again=A} as above.</li>
 * </ul>
 */
public final class RuntimeFolderWorker {
    private RuntimeFolderWorker() {
    }

    public static void main(String[] args) throws Exception {
        switch (args[0]) {
            case "present" -> present(Path.of(args[1]));
            case "count" -> count(Path.of(args[1]), Integer.parseInt(args[2]));
            case "churn" -> churn(Path.of(args[1]), Integer.parseInt(args[2]));
            default -> throw new IllegalArgumentException(args[0]);
        }
    }

    private static void present(Path folder) throws Exception {
        Files.createDirectories(folder);
        try (FileChannel ch = FileChannel.open(folder.resolve("in-use"), StandardOpenOption.CREATE,
                StandardOpenOption.READ, StandardOpenOption.WRITE)) {
            ch.lock(0, Long.MAX_VALUE, true);
            System.out.println("held");
            System.out.flush();
            while (System.in.read() >= 0) {
                // until the test closes our input
            }
        }
    }

    private static void churn(Path state, int n) throws Exception {
        Path runtime = RuntimeFolder.in(state);
        Path mine = runtime.resolve("churn-" + ProcessHandle.current().pid());
        int missing = 0;
        for (int i = 0; i < n; i++) {
            if (!Files.exists(runtime)) {
                missing++;
            }
            RuntimeFolder.enter(runtime);
            Files.writeString(mine, Integer.toString(i)); // fails if the folder went while this process was in it
            RuntimeFolder.leave(runtime);
        }
        System.out.println("DONE missing=" + missing + " again=" + RuntimeFolder.enteredAgain());
    }

    private static void count(Path state, int n) throws Exception {
        LockManager locks = LockManager.standard(Clock.systemUTC());
        Path runtime = RuntimeFolder.in(state);
        Path counter = state.resolve("counter");
        int missing = 0;
        for (int i = 0; i < n; i++) {
            if (!Files.exists(runtime)) {
                missing++;
            }
            locks.withLock(counter, "counter", () -> {
                int value;
                try {
                    value = Integer.parseInt(Files.readString(counter, StandardCharsets.UTF_8).strip());
                } catch (NoSuchFileException e) {
                    value = 0;
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
                byte[] next = (value + 1 + "\n").getBytes(StandardCharsets.UTF_8);
                Path temp = AtomicFiles.prepare(counter, RuntimeFolder.enter(runtime), next, false);
                locks.commit(counter, () -> AtomicFiles.commit(temp, counter, false));
                return null;
            });
            RuntimeFolder.leave(runtime);
        }
        System.out.println("DONE missing=" + missing + " again=" + RuntimeFolder.enteredAgain());
    }
}
