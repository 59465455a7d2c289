package dev.agentx.clarify.mcp;

import dev.agentx.clarify.ledger.LedgerStore;
import dev.agentx.clarify.ledger.LedgerWatcher;
import dev.agentx.clarify.protocol.ClarificationRecord;
import dev.agentx.clarify.protocol.Status;
import dev.agentx.clarify.protocol.ThreadEntry;
import dev.agentx.clarify.render.Ansi;
import dev.agentx.clarify.render.CliRenderer;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.BooleanSupplier;

/**
 * Waiting for the answer to a round a tool asked or names: without holding a lock, until the
 * round is answered or the record no longer waits (escalated, closed), the time is up, or the
 * call ends (the host cancelled it or closed the session). The ledger folder's watcher wakes the
 * wait when a ledger changes; the result says what the wait came to ({@code waited.outcome}:
 * {@code answered}, the record's status, {@code timeout} or {@code ended}) and how long it took.
 */
final class AnswerWait {
    private final LedgerStore ledgers;
    private final LedgerWatcher watcher;
    private final CliRenderer text = new CliRenderer(Ansi.OFF);

    AnswerWait(LedgerStore ledgers, LedgerWatcher watcher) {
        this.ledgers = ledgers;
        this.watcher = watcher;
    }

    /**
     * The result of a call that asked a round, or waits on one: with {@code wait} seconds, after
     * waiting for that round's answer (or for the record to be escalated or closed), or until
     * {@code ended}; {@code line} says what the call did.
     */
    ToolResult result(int issue, ClarificationRecord asked, int wait, String line, List<String> notes,
                      BooleanSupplier ended) throws InterruptedException {
        if (wait == 0) {
            return RecordResults.of(issue, asked, line, notes, Map.of());
        }
        long start = System.nanoTime();
        Optional<ClarificationRecord> settled = settled(issue, asked, wait, ended);
        Duration waited = Duration.ofNanos(System.nanoTime() - start);
        if (settled.isEmpty()) {
            ClarificationRecord now = ledgers.read(issue).flatMap(l -> l.find(asked.id())).orElse(asked);
            boolean cut = ended.getAsBoolean();
            return RecordResults.of(issue, now, line + (cut ? "\nThe wait ended early (the session is ending); "
                    : "\nNo answer within " + wait + " s; ") + now.id() + " still waits for " + now.to()
                    + ". Call clarify_wait with the id to wait again, or clarify_inbox later.",
                    notes, Map.of("waited", waited(cut ? "ended" : "timeout", waited)));
        }
        return answered(issue, asked.round(), settled.get(), line, notes, waited);
    }

    /**
     * The record once the round {@code asked} is on has been answered or the record waits no
     * more; empty when {@code wait} seconds passed first or the call ended.
     */
    private Optional<ClarificationRecord> settled(int issue, ClarificationRecord asked, int wait,
                                                  BooleanSupplier ended) throws InterruptedException {
        // settled already when the target's channel answered at once (command, http, auto) or escalated it
        if (!asked.status().awaitingAnswer()) {
            return Optional.of(asked);
        }
        int round = asked.round();
        return watcher.await(issue, Duration.ofSeconds(wait), () -> ledgers.read(issue)
                .flatMap(l -> l.find(asked.id())).filter(r -> r.round() != round || !r.status().awaitingAnswer()),
                ended);
    }

    /** What a settled wait came to: round {@code round}'s answer, or the record's status now. */
    private ToolResult answered(int issue, int round, ClarificationRecord r, String line, List<String> notes,
                                Duration waited) {
        StringBuilder b = new StringBuilder(line).append('\n');
        String outcome;
        if (r.status() == Status.ANSWERED || r.round() != round && r.status().awaitingAnswer()) {
            outcome = "answered";
            ThreadEntry answer = lastAnswer(r, round);
            b.append("Answer from ").append(r.to()).append(":\n");
            if (answer != null) {
                b.append(text.entry(r, answer));
            }
            b.append("Next: clarify_resolve if that settles it, or clarify_followup to ask the next round.");
        } else {
            outcome = r.status().wire();
            b.append(r.id()).append(" is ").append(outcome).append(" now:\n")
                    .append(text.entry(r, r.thread().get(r.thread().size() - 1)).stripTrailing());
        }
        return RecordResults.of(issue, r, b.toString(), notes, Map.of("waited", waited(outcome, waited)));
    }

    /** The {@code waited} of a result: what the wait came to and its seconds. */
    static Map<String, Object> waited(String outcome, Duration waited) {
        Map<String, Object> w = new LinkedHashMap<>();
        w.put("outcome", outcome);
        w.put("seconds", waited.toMillis() / 1000.0);
        return w;
    }

    private static ThreadEntry lastAnswer(ClarificationRecord r, int round) {
        ThreadEntry found = null;
        for (ThreadEntry e : r.thread()) {
            if (e.round() == round && e.isAnswer() && !e.isProposal()) {
                found = e;
            }
        }
        return found;
    }
}
