package dev.agentx.clarify.monitor;

import dev.agentx.clarify.channel.AnswerChannel;
import dev.agentx.clarify.channel.Delivery;
import dev.agentx.clarify.channel.QuestionRequest;
import dev.agentx.clarify.ledger.ActiveLedgers;
import dev.agentx.clarify.protocol.ClarificationRecord;
import dev.agentx.clarify.protocol.ClarifyException;
import dev.agentx.clarify.protocol.EntryType;
import dev.agentx.clarify.protocol.Ledger;
import dev.agentx.clarify.protocol.Status;
import dev.agentx.clarify.protocol.ThreadEntry;
import dev.agentx.clarify.routing.ClarificationEngine;
import dev.agentx.clarify.routing.ClarifyCommand;
import dev.agentx.clarify.routing.Outcome;
import java.io.UncheckedIOException;
import java.time.Clock;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.function.BiPredicate;
import java.util.function.Supplier;

/**
 * The event-driven monitor (docs/monitor.md): no daemon; a pass runs after
 * the commands and events that can change what it looks at. A pass reads the active ledgers,
 * applies the rules ({@link Detector}) and acts:
 * <ul>
 *   <li>stale, first timeout: {@code pending -> stale} (event clarification-stale) under the
 *       ledger's lock, then, outside any lock, the target is asked again through its answer
 *       channel; an immediate answer is recorded as the round's answer; a channel failure that
 *       reaches {@code escalate_after_failures} escalates it (cause channel). A record holding a
 *       proposal (autonomy approve) is not asked again: a person decides on the proposal;</li>
 *   <li>stale, second timeout (a full SLA after it went stale): escalated;</li>
 *   <li>stuck: escalated, with why;</li>
 *   <li>deadlock: the most downstream agent's request in each cycle is escalated.</li>
 * </ul>
 * Every change goes through the engine, which checks the condition again under the ledger's lock,
 * so each action is taken once however often, and by however many processes, the monitor runs.
 * A failed action is reported and left for the next pass.
 */
public final class ClarificationMonitor {
    private final Clock clock;
    private final ActiveLedgers ledgers;
    private final ClarificationEngine engine;
    private final AnswerChannel channel;
    private final Supplier<UpstreamOrder> order;

    public ClarificationMonitor(Clock clock, ActiveLedgers ledgers, ClarificationEngine engine, AnswerChannel channel,
                                Supplier<UpstreamOrder> order) {
        this.clock = clock;
        this.ledgers = ledgers;
        this.engine = engine;
        this.channel = channel;
        this.order = order;
    }

    private Instant now() {
        return clock.instant().truncatedTo(ChronoUnit.MILLIS);
    }

    /** Looks without acting: what a pass would act on now, and what it escalated before. */
    public Findings check() {
        return check(ledgers.scan());
    }

    /** {@link #check()} over a scan the caller has just made. */
    public Findings check(ActiveLedgers.Scan scan) {
        return check(scan, now());
    }

    private Findings check(ActiveLedgers.Scan scan, Instant now) {
        return Detector.detect(scan.active(), now, order, scan.problems());
    }

    /**
     * What {@link #run()} would do now, without doing it, for a reader that may not act (the
     * server's database, read from the CLI): the same walk over the findings, each action only
     * named. Whether the target's channel would answer at once cannot be known without asking it.
     */
    public MonitorReport plan() {
        Instant now = now();
        Findings f = check(ledgers.scan(), now);
        List<MonitorAction> actions = new ArrayList<>();
        walk(f, now, new Pass() {
            @Override
            public void markStale(Findings.Stale s) {
                ClarificationRecord r = s.record();
                actions.add(new MonitorAction.MarkedStale(s.issue(), r.id(), s.why(), r.pendingProposal().isPresent()
                        ? "would not ask " + r.to() + " again: its proposed answer waits for a person"
                        : "would ask " + r.to() + " again"));
            }

            @Override
            public void escalate(int issue, String id, Cause cause, String why,
                                 BiPredicate<Ledger, ClarificationRecord> still) {
                actions.add(new MonitorAction.Escalated(issue, id, cause, why));
            }
        });
        return new MonitorReport(f.active(), actions, f.warnings(), List.of());
    }

    /** One pass: look, then act. */
    public MonitorReport run() {
        Instant now = now();
        return run(ledgers.scan(), now);
    }

    /**
     * One pass over a scan the caller has just made, so that a command that has read the active
     * ledgers anyway (the list, {@code ready}) does not have them read again. It acts exactly as
     * {@link #run()} would on the same ledgers: every action is checked again under the ledger's
     * lock, so a scan a moment old never makes the pass act wrongly, only later.
     */
    public MonitorReport run(ActiveLedgers.Scan scan) {
        return run(scan, now());
    }

    private MonitorReport run(ActiveLedgers.Scan scan, Instant now) {
        Findings f = check(scan, now);
        List<MonitorAction> actions = new ArrayList<>();
        List<Outcome> outcomes = new ArrayList<>();
        walk(f, now, new Pass() {
            @Override
            public void markStale(Findings.Stale s) {
                ClarificationMonitor.this.markStale(s, actions, outcomes);
            }

            @Override
            public void escalate(int issue, String id, Cause cause, String why,
                                 BiPredicate<Ledger, ClarificationRecord> still) {
                ClarificationMonitor.this.escalate(issue, id, cause, why, still, actions, outcomes);
            }
        });
        return new MonitorReport(f.active(), actions, f.warnings(), outcomes);
    }

    /** What a pass does with each finding: act on it ({@link #run()}) or name it ({@link #plan()}). */
    private interface Pass {
        void markStale(Findings.Stale s);

        /** {@code still}: whether the record, read again under its ledger's lock, is still to escalate. */
        void escalate(int issue, String id, Cause cause, String why, BiPredicate<Ledger, ClarificationRecord> still);
    }

    /** The findings in the order a pass takes them: stale (by phase), stuck, then each deadlock's victim. */
    private static void walk(Findings f, Instant now, Pass pass) {
        for (Findings.Stale s : f.stale()) {
            switch (s.phase()) {
                case OVERDUE -> pass.markStale(s);
                case SECOND_TIMEOUT -> pass.escalate(s.issue(), s.record().id(), Cause.STALE, s.why(),
                        (ledger, r) -> Detector.secondTimeout(r, now));
                case WAITING -> {
                    // asked again already; the second timeout has not come
                }
                default -> throw new IllegalStateException("unknown phase " + s.phase());
            }
        }
        for (Findings.Stuck s : f.stuck()) {
            pass.escalate(s.issue(), s.record().id(), Cause.STUCK, s.why(),
                    (ledger, r) -> StuckRules.reason(ledger, r).isPresent());
        }
        for (Deadlock d : f.deadlocks()) {
            int round = d.victim().record().round();
            // The victim's edge must still be there: the same round, still waiting on the target.
            pass.escalate(d.victim().issue(), d.victim().id(), Cause.DEADLOCK, d.why(),
                    (ledger, r) -> WaitEdge.waits(r) && r.round() == round);
        }
    }

    private void markStale(Findings.Stale s, List<MonitorAction> actions, List<Outcome> outcomes) {
        String id = s.record().id();
        Outcome marked;
        try {
            marked = engine.markStale(id);
        } catch (ClarifyException | UncheckedIOException e) {
            actions.add(new MonitorAction.Failed(s.issue(), id, "marking stale", e.getMessage()));
            return;
        }
        if (marked == null) {
            return; // changed meanwhile, or another monitor did it
        }
        outcomes.add(marked);
        // the record as marked: its second timeout runs from when it was marked (reaskedAt), which
        // is what the printed time must say, not the time the pass found it
        ClarificationRecord r = marked.record();
        String why = s.why();
        if (r.pendingProposal().isPresent()) {
            // autonomy approve: the agent did answer, and a person decides on its proposal, so the
            // agent is not asked again; the second timeout still escalates it
            actions.add(new MonitorAction.MarkedStale(s.issue(), id, why, r.to() + " not asked again: its proposed "
                    + "answer waits for a person: 'agentx clarify accept " + id + "'; escalates after "
                    + r.escalatesAt() + " unless a person accepts or answers it"));
            return;
        }
        Delivery d;
        try {
            d = channel.ask(new QuestionRequest(r.id(), marked.issue(), r.from(), r.to(), r.topic(), r.round(),
                    r.lastQuestion().map(ThreadEntry::body).orElse(""), r.options(), r.thread()));
        } catch (RuntimeException e) {
            d = new Delivery.Failed(e.toString());
        }
        // Recorded as the engine records any channel's result: autonomy (a proposal under approve),
        // the chosen option, and failure counting that escalates a channel that keeps failing.
        Outcome after;
        try {
            after = engine.delivered(marked.issue(), r, d);
        } catch (ClarifyException | UncheckedIOException e) {
            actions.add(new MonitorAction.Failed(s.issue(), id, "recording what " + r.to() + " said", e.getMessage()));
            return;
        }
        if (!after.events().isEmpty()) {
            outcomes.add(after);
        }
        if (d instanceof Delivery.Answered a) {
            actions.add(new MonitorAction.MarkedStale(s.issue(), id, why, "asked " + r.to() + " again"));
            if (after.record().status() == Status.ANSWERED || after.record().pendingProposal().isPresent()) {
                actions.add(new MonitorAction.Answered(s.issue(), id, r.to(), a.channel()));
            } else {
                actions.add(new MonitorAction.Failed(s.issue(), id, "recording the " + a.channel() + " answer of "
                        + r.to(), String.join(" ", after.notes())));
            }
        } else if (d instanceof Delivery.Failed failed) {
            String reask = "no answer from " + r.to() + " when asked again: " + failed.error();
            if (after.record().status() != Status.ESCALATED) {
                actions.add(new MonitorAction.MarkedStale(s.issue(), id, why, reask + "; escalates after "
                        + r.escalatesAt() + " without an answer"));
                return;
            }
            // the failure reached escalate_after_failures and the channel escalated the record
            actions.add(new MonitorAction.MarkedStale(s.issue(), id, why, reask));
            Optional<ThreadEntry> escalation = after.record().lastOf(EntryType.ESCALATION);
            Optional<Cause> cause = escalation.flatMap(Cause::of);
            if (cause.isPresent()) {
                actions.add(new MonitorAction.Escalated(s.issue(), id, cause.get(), Cause.why(escalation.get(),
                        cause.get())));
            }
        } else if (d instanceof Delivery.Deferred later) {
            // the channel took the question and the answer comes later; its note says from whom (a
            // person who runs 'agentx clarify answer', an agent that will call back)
            actions.add(new MonitorAction.MarkedStale(s.issue(), id, why, "asked " + r.to() + " again ("
                    + later.note() + "); escalates after " + r.escalatesAt() + " without an answer"));
        }
    }

    private void escalate(int issue, String id, Cause cause, String why,
                          BiPredicate<Ledger, ClarificationRecord> still, List<MonitorAction> actions,
                          List<Outcome> outcomes) {
        try {
            Outcome o = engine.escalateByHub(id, cause.reason(why), still);
            if (o != null) {
                outcomes.add(o);
                actions.add(new MonitorAction.Escalated(issue, id, cause, why));
            }
        } catch (ClarifyException | UncheckedIOException e) {
            actions.add(new MonitorAction.Failed(issue, id, "escalation (" + cause.wire() + ")", e.getMessage()));
        }
    }
}
