package dev.agentx.clarify.mcp;

import dev.agentx.clarify.ledger.LedgerStore;
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
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Waiting for the answer to a round a tool asked or names, as a subscription, not a thread: the
 * wait is an entry in {@link IssueChanges} and a timer task until the round is answered or the
 * record no longer waits (escalated, closed), the time is up, or the call ends (the host
 * cancelled it or closed the session). Each change of the issue's ledger reads the record again,
 * holding no lock; the result says what the wait came to ({@code waited.outcome}: {@code
 * answered}, the record's status, {@code timeout} or {@code ended}) and how long it took.
 */
final class AnswerWait {
    private static final Logger LOG = LoggerFactory.getLogger(AnswerWait.class);
    private final LedgerStore ledgers;
    private final Waits waits;
    private final CliRenderer text = new CliRenderer(Ansi.OFF);

    AnswerWait(LedgerStore ledgers, Waits waits) {
        this.ledgers = ledgers;
        this.waits = waits;
    }

    /**
     * The result of a call that asked a round, or waits on one: with {@code wait} seconds, once
     * that round is answered (or the record escalated or closed), the time is up, or {@code ended}
     * completes; {@code line} says what the call did.
     */
    CompletableFuture<ToolResult> result(int issue, ClarificationRecord asked, int wait, String line,
                                         List<String> notes, CompletableFuture<?> ended) {
        if (wait == 0) {
            return CompletableFuture.completedFuture(RecordResults.of(issue, asked, line, notes, Map.of()));
        }
        // settled already when the target's channel answered at once (command, http, auto) or escalated it
        if (!asked.status().awaitingAnswer()) {
            return CompletableFuture.completedFuture(answered(issue, asked.round(), asked, line, notes, Duration.ZERO));
        }
        return new Waiting(issue, asked, wait, line, notes, ended).start();
    }

    /** One waiting call: its subscription, its timer, its result. */
    private final class Waiting {
        private final int issue;
        private final ClarificationRecord asked;
        private final int wait;
        private final String line;
        private final List<String> notes;
        private final CompletableFuture<?> ended;
        private final long start = System.nanoTime();
        private final CompletableFuture<ToolResult> result = new CompletableFuture<>();
        private final AtomicBoolean finishing = new AtomicBoolean();
        private volatile IssueChanges.Subscription subscription;
        private volatile ScheduledFuture<?> timeout;

        Waiting(int issue, ClarificationRecord asked, int wait, String line, List<String> notes,
                CompletableFuture<?> ended) {
            this.issue = issue;
            this.asked = asked;
            this.wait = wait;
            this.line = line;
            this.notes = notes;
            this.ended = ended;
        }

        CompletableFuture<ToolResult> start() {
            subscription = waits.changes().subscribe(issue, this::look);
            try {
                timeout = waits.timer().schedule(() -> offTimer("timeout"), wait, TimeUnit.SECONDS);
            } catch (RejectedExecutionException e) {
                finishWithout("ended"); // the server is stopping
                return result;
            }
            ended.whenComplete((v, e) -> offTimer("ended"));
            look(); // a change between the command and the subscription is seen now
            return result;
        }

        /** Reads the record again (off the thread that told of the change); done once it settled. */
        private void look() {
            if (result.isDone()) {
                return;
            }
            try {
                waits.readers().execute(() -> {
                    if (result.isDone()) {
                        return;
                    }
                    Optional<ClarificationRecord> settled;
                    try {
                        settled = ledgers.read(issue).flatMap(l -> l.find(asked.id()))
                                .filter(r -> r.round() != asked.round() || !r.status().awaitingAnswer());
                    } catch (RuntimeException e) {
                        LOG.debug("a wait for {} could not read its ledger now: {}", asked.id(), e.toString());
                        return; // the next change, the next look or the time ends it
                    }
                    settled.ifPresent(r -> finish(answered(issue, asked.round(), r, line, notes, waited())));
                });
            } catch (RejectedExecutionException e) {
                finishWithout("ended");
            }
        }

        /** {@link #finishWithout}, which reads the ledger, on a reader's thread. */
        private void offTimer(String outcome) {
            try {
                waits.readers().execute(() -> finishWithout(outcome));
            } catch (RejectedExecutionException e) {
                finishWithout(outcome);
            }
        }

        /** Ends the wait without an answer: the time is up ({@code timeout}) or the call ended ({@code ended}). */
        private void finishWithout(String outcome) {
            if (result.isDone() || !finishing.compareAndSet(false, true)) {
                return;
            }
            ClarificationRecord now = asked;
            try {
                now = ledgers.read(issue).flatMap(l -> l.find(asked.id())).orElse(asked);
            } catch (RuntimeException e) {
                LOG.debug("the record {} could not be read for its wait's result: {}", asked.id(), e.toString());
            }
            if (now.round() != asked.round() || !now.status().awaitingAnswer()) {
                finish(answered(issue, asked.round(), now, line, notes, waited())); // settled meanwhile
                return;
            }
            boolean cut = outcome.equals("ended");
            finish(RecordResults.of(issue, now, line + (cut ? "\nThe wait ended early (the session is ending); "
                    : "\nNo answer within " + wait + " s; ") + now.id() + " still waits for " + now.to()
                    + ". Call clarify_wait with the id to wait again, or clarify_inbox later.",
                    notes, Map.of("waited", AnswerWait.waited(outcome, waited()))));
        }

        private void finish(ToolResult r) {
            IssueChanges.Subscription s = subscription;
            if (s != null) {
                s.close();
            }
            ScheduledFuture<?> t = timeout;
            if (t != null) {
                t.cancel(false);
            }
            result.complete(r);
        }

        private Duration waited() {
            return Duration.ofNanos(System.nanoTime() - start);
        }
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
