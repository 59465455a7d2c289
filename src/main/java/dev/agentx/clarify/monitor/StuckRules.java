package dev.agentx.clarify.monitor;

import dev.agentx.clarify.protocol.ClarificationRecord;
import dev.agentx.clarify.protocol.EntryType;
import dev.agentx.clarify.protocol.Ledger;
import dev.agentx.clarify.protocol.Status;
import dev.agentx.clarify.protocol.ThreadEntry;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;

/**
 * The stuck rule (docs/monitor.md, "circular answers"). A record is stuck when
 * <ul>
 *   <li>its newest question repeats an earlier question of its thread, or its newest answer an
 *       earlier answer ({@link WordSimilarity#similar}: word-set Jaccard above 0.8); or</li>
 *   <li>another open record of the same issue has a topic the same by that measure, with from and
 *       to swapped: the two agents pass the question back and forth. Both records are stuck (the
 *       partner counts while it is open, escalated included, so that escalating one of the pair
 *       does not clear the other).</li>
 * </ul>
 * Only records still between the agents can be stuck: escalated ones already wait for a human,
 * and closed ones are done. The rule needs nothing but the ledger, so the monitor checks
 * it once to find candidates and again under the ledger's lock before it escalates.
 */
public final class StuckRules {
    private StuckRules() {
    }

    /** Why {@code r}, a record of {@code ledger}, is stuck; empty if it is not. */
    public static Optional<String> reason(Ledger ledger, ClarificationRecord r) {
        if (!between(r)) {
            return Optional.empty();
        }
        Optional<String> repeat = repeat(r, EntryType.QUESTION);
        if (repeat.isEmpty()) {
            repeat = repeat(r, EntryType.ANSWER);
        }
        if (repeat.isPresent()) {
            return repeat;
        }
        for (ClarificationRecord other : ledger.clarifications()) {
            if (!other.id().equals(r.id()) && other.status().active() && other.from().equals(r.to())
                    && other.to().equals(r.from()) && WordSimilarity.similar(other.topic(), r.topic())) {
                return Optional.of("the topic \"" + r.topic() + "\" is also asked the other way round in "
                        + other.id() + " (" + other.from() + " -> " + other.to()
                        + "): the two agents pass the question back and forth");
            }
        }
        return Optional.empty();
    }

    /** Open and still with the agents: not escalated to a human, not closed. */
    private static boolean between(ClarificationRecord r) {
        return r.status().active() && r.status() != Status.ESCALATED;
    }

    private static Optional<String> repeat(ClarificationRecord r, EntryType type) {
        // A proposal (autonomy approve) is not an answer: its accepted copy must not count as a repeat.
        List<ThreadEntry> entries = new ArrayList<>();
        for (ThreadEntry e : r.thread()) {
            if (e.type() == type && !e.isProposal()) {
                entries.add(e);
            }
        }
        if (entries.size() < 2) {
            return Optional.empty();
        }
        ThreadEntry newest = entries.get(entries.size() - 1);
        for (int i = entries.size() - 2; i >= 0; i--) {
            ThreadEntry earlier = entries.get(i);
            double s = WordSimilarity.jaccard(newest.body(), earlier.body());
            if (s > WordSimilarity.THRESHOLD) {
                return Optional.of(String.format(Locale.ROOT,
                        "the %s of round %d repeats the %s of round %d (word-set similarity %.2f, above %.1f)",
                        type.wire(), newest.round(), type.wire(), earlier.round(), s, WordSimilarity.THRESHOLD));
            }
        }
        return Optional.empty();
    }
}
