package dev.agentx.clarify.routing;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.agentx.clarify.ledger.LedgerStore.Mutation;
import dev.agentx.clarify.protocol.ClarificationRecord;
import dev.agentx.clarify.protocol.Ledger;
import dev.agentx.clarify.protocol.ThreadEntry;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Changes waiting for an issue's lock are carried out one after another, each stamped with the
 * time it was asked: one asked a moment before another and carried out after it is stamped no
 * earlier than what the ledger holds, so threads and records read oldest first.
 */
class LedgerChangeTimeTest {
    private static final Instant T = Instant.parse("2026-11-28T21:45:09.600Z");

    private static Ledger asked() {
        return new LedgerChange.Ask(7, "engineer", "architect", "Cache", false, 6, T, T.plus(Duration.ofHours(4)),
                List.of(), "Which cache?", null, null, List.of(), "k-ask").apply(Ledger.empty(7)).ledger();
    }

    @Test
    void anEntryCarriedOutAfterALaterOneIsStampedNoEarlier() {
        Ledger ledger = new LedgerChange.Answer("CLR-7-001", null, "Redis.", null, T.plusMillis(5), "k-a")
                .apply(asked()).ledger();
        // asked 434 ms before the answer was written, carried out after it
        Mutation<Outcome> m = new LedgerChange.FollowUp("CLR-7-001", "engineer", "Which version?", T.minusMillis(429),
                "k-f").apply(ledger);
        ClarificationRecord r = m.result().record();
        List<Instant> times = r.thread().stream().map(ThreadEntry::timestamp).toList();
        assertEquals(List.of(T, T.plusMillis(5), T.plusMillis(5)), times);
        assertEquals(T.plusMillis(5), m.result().events().get(0).timestamp(), "the event as the entry");
        assertEquals(T.plusMillis(5).plus(r.sla()), r.staleAfter(), "the round's deadline from the same time");

        // one asked after everything in the ledger keeps its own time
        Instant later = T.plusSeconds(3);
        ClarificationRecord answered = new LedgerChange.Answer("CLR-7-001", null, "16.", null, later, "k-a2")
                .apply(m.ledger()).result().record();
        assertEquals(later, answered.thread().get(3).timestamp());
    }

    @Test
    void aRecordCarriedOutAfterALaterOneIsCreatedNoEarlierWithItsDeadlineMovedAlike() {
        Instant asked = T.minusMillis(75);
        Mutation<Outcome> m = new LedgerChange.Ask(7, "engineer", "architect", "Queue", true, 5, asked,
                asked.plus(Duration.ofHours(4)), List.of(), "Which queue?", null, null, List.of(), "k-ask-2")
                .apply(asked());
        ClarificationRecord second = m.result().record();
        assertEquals("CLR-7-002", second.id());
        assertEquals(T, second.created());
        assertEquals(T, second.thread().get(0).timestamp());
        assertEquals(T.plus(Duration.ofHours(4)), second.staleAfter());
        assertEquals(T, m.result().events().get(0).timestamp());
    }
}
