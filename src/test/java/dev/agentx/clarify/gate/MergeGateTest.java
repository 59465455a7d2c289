package dev.agentx.clarify.gate;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.agentx.clarify.protocol.ClarificationRecord;
import dev.agentx.clarify.protocol.Ledger;
import dev.agentx.clarify.protocol.Status;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;

/** What the gate concludes from the ledgers of a pull request and the issues it closes. */
class MergeGateTest {
    private static final String HTML = "https://github.com/Codertocat/Hello-World";
    private static final Instant T = Instant.parse("2026-02-26T10:00:00Z");

    private static ClarificationRecord record(String id, boolean blocking, Status status) {
        return new ClarificationRecord(id, "engineer", "architect", "Which auth method?", blocking, status, 1, 3, T,
                T.plusSeconds(3600), status.terminal() ? T : null, List.of(), List.of());
    }

    private static MergeGate.Verdict verdict(int pull, List<Integer> closes, Map<Integer, Ledger> ledgers) {
        return MergeGate.evaluate(pull, new TreeSet<>(closes), n -> Optional.ofNullable(ledgers.get(n)), HTML);
    }

    @Test
    void anOpenBlockingClarificationOfAClosedIssueHoldsTheMerge() {
        MergeGate.Verdict v = verdict(7, List.of(42), Map.of(42, new Ledger(42, List.of(
                record("CLR-42-001", true, Status.PENDING)))));
        assertEquals(MergeGate.Conclusion.ACTION_REQUIRED, v.conclusion());
        assertEquals("1 blocking clarification open", v.title());
        assertTrue(v.summary().contains("[CLR-42-001](" + HTML + "/issues/42) on #42 (pending): engineer waits on "
                + "architect: *Which auth method?*"), v.summary());
        assertEquals(HTML + "/issues/42", v.detailsUrl());
    }

    @Test
    void everyOpenStatusHoldsAndSaysWhoWaitsOnWhom() {
        Ledger own = new Ledger(7, List.of(record("CLR-7-001", true, Status.ANSWERED),
                record("CLR-7-002", true, Status.ESCALATED), record("CLR-7-003", true, Status.STALE)));
        MergeGate.Verdict v = verdict(7, List.of(), Map.of(7, own));
        assertEquals(3, v.holds().size());
        assertTrue(v.summary().contains("architect answered; waits on engineer to resolve it"), v.summary());
        assertTrue(v.summary().contains("engineer waits on a maintainer (escalated from architect)"), v.summary());
        assertTrue(v.summary().contains("engineer waits on architect (asked again, no answer yet)"), v.summary());
        assertEquals("3 blocking clarifications open", v.title());
    }

    @Test
    void resolvedAbandonedAndNonBlockingClarificationsNeverHoldIt() {
        Ledger l = new Ledger(42, List.of(record("CLR-42-001", true, Status.RESOLVED),
                record("CLR-42-002", true, Status.ABANDONED), record("CLR-42-003", false, Status.PENDING)));
        MergeGate.Verdict v = verdict(7, List.of(42), Map.of(42, l));
        assertEquals(MergeGate.Conclusion.SUCCESS, v.conclusion());
        assertEquals(List.of(), v.holds());
        assertEquals("success", v.conclusion().wire());
        assertEquals("action_required", MergeGate.Conclusion.ACTION_REQUIRED.wire());
    }

    @Test
    void userTextInTheSummaryCannotMentionOrHideAnything() {
        ClarificationRecord r = new ClarificationRecord("CLR-42-001", "engineer", "architect",
                "ping @everyone <!-- hidden -->", true, Status.PENDING, 1, 3, T, T.plusSeconds(60), null, List.of(),
                List.of());
        MergeGate.Verdict v = verdict(7, List.of(42), Map.of(42, new Ledger(42, List.of(r))));
        assertTrue(!v.summary().contains("@everyone") && !v.summary().contains("<!--"), v.summary());
    }
}
