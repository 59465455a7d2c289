package dev.agentx.clarify.monitor;

import dev.agentx.clarify.protocol.EntryType;
import dev.agentx.clarify.protocol.ThreadEntry;
import dev.agentx.clarify.routing.ClarificationEngine;
import java.util.Locale;
import java.util.Optional;

/**
 * Why the monitor escalated a record, or the hub a record whose answer channel kept failing. The
 * escalation summary written for it starts {@code Escalated: <cause>: <why>}, which is how
 * {@code clarify stale} and the digest recognise these escalations in the ledger later.
 */
public enum Cause {
    /**
     * No answer within the SLA, asked again (or, holding a proposal, left to a person), and still
     * no answer within another SLA.
     */
    STALE,
    /** The thread repeats itself, or two records pass one topic back and forth. */
    STUCK,
    /** A cycle of blocking requests; the most downstream agent's request was escalated. */
    DEADLOCK,
    /**
     * The target's answer channel failed {@code escalate_after_failures} times in a row on one
     * round: when the question was asked, or when the monitor asked a stale question again.
     */
    CHANNEL;

    public String wire() {
        return name().toLowerCase(Locale.ROOT);
    }

    /** The reason passed to the escalation summary. */
    public String reason(String why) {
        return wire() + ": " + why;
    }

    /** The cause written in one escalation entry, if the hub wrote it for one. */
    public static Optional<Cause> of(ThreadEntry escalation) {
        if (escalation.type() != EntryType.ESCALATION || !ClarificationEngine.HUB.equals(escalation.from())) {
            return Optional.empty();
        }
        for (Cause c : values()) {
            if (escalation.body().startsWith("Escalated: " + c.wire() + ": ")) {
                return Optional.of(c);
            }
        }
        return Optional.empty();
    }

    /** The "why" of one of the monitor's escalation entries: its first line, after the cause. */
    public static String why(ThreadEntry escalation, Cause cause) {
        String first = escalation.body().lines().findFirst().orElse("");
        String prefix = "Escalated: " + cause.wire() + ": ";
        return first.startsWith(prefix) ? first.substring(prefix.length()) : first;
    }
}
