package dev.agentx.clarify.ledger;

import dev.agentx.clarify.app.LocalMode;
import dev.agentx.clarify.protocol.ClarifyException;
import dev.agentx.clarify.protocol.ErrorCode;
import dev.agentx.clarify.protocol.Ledger;
import dev.agentx.clarify.routing.ClarifyCommand;
import dev.agentx.clarify.routing.Outcome;
import java.nio.file.Path;
import java.time.Clock;
import java.util.List;
import java.util.function.Supplier;

/**
 * A separate process for the multi-process tests. Modes:
 * <ul>
 *   <li>{@code pairs ROOT ISSUE WORKER N}: N asks and answers on one issue; prints "ACK id" after each answer</li>
 *   <li>{@code pairs-behind ROOT ISSUE WORKER N}: the same with the statuses written behind, as {@code agentx mcp}
 *   runs</li>
 *   <li>{@code loop ROOT ISSUE WORKER}: asks until killed, printing "ACK id" after each write</li>
 *   <li>{@code hold ROOT ISSUE}: takes the issue's lock, prints "LOCKED" and waits to be killed</li>
 * </ul>
 * A LOCK_TIMEOUT changes nothing on disk, so the worker retries it and counts the retries.
 */
public final class LedgerWorker {
    private LedgerWorker() {
    }

    public static void main(String[] args) throws Exception {
        String mode = args[0];
        Path root = Path.of(args[1]);
        int issue = Integer.parseInt(args[2]);
        LocalMode local = LocalMode.open(root, Clock.systemUTC());
        switch (mode) {
            case "pairs", "pairs-behind" -> {
                if (mode.equals("pairs-behind")) {
                    local.statuses().writeBehind();
                }
                String worker = args[3];
                int n = Integer.parseInt(args[4]);
                int[] retries = {0};
                for (int i = 0; i < n; i++) {
                    String q = worker + "-q" + i;
                    Outcome asked = retry(retries, () -> local.engine().execute(new ClarifyCommand.Ask(issue, "engineer",
                            "architect", null, q, true, List.of(), null)));
                    String id = asked.record().id();
                    retry(retries, () -> local.engine().execute(new ClarifyCommand.Answer(id, null, "a-" + q)));
                    System.out.println("ACK " + id);
                    System.out.flush();
                }
                System.out.println("DONE retries=" + retries[0]);
            }
            case "loop" -> {
                String worker = args[3];
                int[] retries = {0};
                for (int i = 0; ; i++) {
                    String q = worker + "-q" + i;
                    Outcome asked = retry(retries, () -> local.engine().execute(new ClarifyCommand.Ask(issue, "engineer",
                            "architect", null, q, false, List.of(), null)));
                    System.out.println("ACK " + asked.record().id() + " " + q);
                    System.out.flush();
                }
            }
            case "hold" -> local.ledgers().update(issue, "holder", (Ledger l) -> {
                System.out.println("LOCKED");
                System.out.flush();
                try {
                    Thread.sleep(600_000);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
                return LedgerStore.Mutation.none(null);
            });
            default -> throw new IllegalArgumentException(mode);
        }
    }

    private static <T> T retry(int[] retries, Supplier<T> op) {
        while (true) {
            try {
                return op.get();
            } catch (ClarifyException e) {
                if (e.code() != ErrorCode.LOCK_TIMEOUT) {
                    throw e;
                }
                retries[0]++;
            }
        }
    }
}
