package dev.agentx.clarify.reliability;

import dev.agentx.clarify.channel.HumanChannel;
import dev.agentx.clarify.app.LocalMode;
import dev.agentx.clarify.lock.LockManager;
import dev.agentx.clarify.protocol.ClarifyException;
import dev.agentx.clarify.protocol.ErrorCode;
import dev.agentx.clarify.routing.ClarifyCommand;
import dev.agentx.clarify.routing.Outcome;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Clock;
import java.util.List;

/**
 * A process that asks N questions on issue 1 of a root through the engine, as the CLI does, and
 * prints {@code ACK <id> <question>} for each one acknowledged. A LOCK_TIMEOUT or LOCK_LOST is
 * retried (nothing was written). With a holds log, every second step is instead a bare hold of the
 * ledger's lock, recorded as {@code <pid> <start> <end>} (System.nanoTime) for the overlap check.
 */
public final class AskWorker {
    private AskWorker() {
    }

    public static void main(String[] args) throws Exception {
        Path root = Path.of(args[0]);
        String name = args[1];
        int n = Integer.parseInt(args[2]);
        Path holds = args.length > 3 ? Path.of(args[3]) : null;
        long pid = ProcessHandle.current().pid();
        LockManager locks = LockManager.standard(Clock.systemUTC());
        LocalMode local = new LocalMode(root, Clock.systemUTC(), locks, new HumanChannel());
        Path ledger = local.files().ledgers().fileOf(1);
        int retries = 0;
        for (int i = 0; i < n; i++) {
            String q = name + " question " + i;
            while (true) {
                try {
                    Outcome o = local.engine().execute(new ClarifyCommand.Ask(1, "engineer", "architect", null, q,
                            false, List.of(), null));
                    System.out.println("ACK " + o.record().id() + " " + q);
                    System.out.flush();
                    if (holds != null) {
                        locks.withLock(ledger, name, () -> {
                            long start = System.nanoTime();
                            sleep(1 + (int) (Math.random() * 5));
                            append(holds, pid + " " + start + " " + System.nanoTime() + "\n");
                            return null;
                        });
                    }
                    break;
                } catch (ClarifyException e) {
                    if (e.code() != ErrorCode.LOCK_TIMEOUT && e.code() != ErrorCode.LOCK_LOST) {
                        throw e;
                    }
                    retries++;
                }
            }
        }
        System.out.println("DONE retries=" + retries);
    }

    static void append(Path log, String line) {
        try {
            Files.write(log, line.getBytes(StandardCharsets.UTF_8), StandardOpenOption.CREATE,
                    StandardOpenOption.APPEND, StandardOpenOption.WRITE);
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    static void sleep(int ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
