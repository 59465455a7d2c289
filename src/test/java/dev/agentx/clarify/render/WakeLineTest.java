package dev.agentx.clarify.render;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.agentx.clarify.github.commands.CommandParser;
import dev.agentx.clarify.protocol.ClarificationRecord;
import dev.agentx.clarify.protocol.EntryType;
import dev.agentx.clarify.protocol.Status;
import dev.agentx.clarify.protocol.ThreadEntry;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/**
 * The wake line: on exactly the comments that settle the requester's question, never on the
 * requester's own, and written so that the mention pings while user text around it cannot.
 */
class WakeLineTest {
    private static final Instant T = Instant.parse("2026-02-26T10:00:00Z");
    private static final String WAKE = "@copilot";

    private static ClarificationRecord asked() {
        return new ClarificationRecord("CLR-7-001", "engineer", "architect", "Auth", true, Status.PENDING, 1, 5, T,
                T.plusSeconds(1800), null, List.of(), List.of(new ThreadEntry(1, "engineer", EntryType.QUESTION,
                "JWT or sessions? cc @copilot", T)));
    }

    private static ClarificationRecord answered() {
        return asked().with(Status.ANSWERED, ThreadEntry.answer(1, "architect", "JWT. @channel <b>", T, null));
    }

    private static Optional<String> line(ClarificationRecord r, int index) {
        return WakeLine.of(r, index, WAKE);
    }

    @Test
    void anAnswerWakesTheRequesterAndItsCommentEndsWithTheMention() {
        ClarificationRecord r = answered();
        assertEquals(Optional.of("@copilot CLR-7-001 was answered by **architect** (round 1): the answer is quoted "
                + "above; follow up or resolve it."), line(r, 1));
        String md = new MarkdownRenderer().entry(r, 1, List.of(), WAKE);
        String visible = md.substring(0, md.lastIndexOf(Marker.OPEN)).strip();
        String last = visible.substring(visible.lastIndexOf('\n') + 1);
        assertTrue(last.startsWith("@copilot CLR-7-001 was answered"), "the last line wakes: " + md);
        assertEquals(1, md.split("@copilot", -1).length - 1, "one mention, unescaped: " + md);
        assertTrue(md.contains("> JWT. @&#8203;channel &lt;b&gt;"), "user text stays neutralised: " + md);
        assertEquals(List.of(), CommandParser.parse(md), "the App's comment carries no command");
    }

    @Test
    void theQuestionTheProposalTheEscalationAndTheStaleNoticeWakeNobody() {
        ClarificationRecord r = asked();
        assertEquals(Optional.empty(), line(r, 0), "the asker's own question");
        ClarificationRecord proposed = r.with(Status.PENDING, ThreadEntry.proposal(1, "architect", "JWT?", T, null));
        assertEquals(Optional.empty(), line(proposed, 1), "a proposal waits for a person");
        ClarificationRecord escalated = answered().with(Status.ESCALATED, new ThreadEntry(1, "agentx",
                EntryType.ESCALATION, "Escalated: no agreement", T));
        assertEquals(Optional.empty(), line(escalated, 2), "escalated: the asker still waits");
        assertFalse(new MarkdownRenderer().stale(r, List.of()).contains(WAKE));
        assertFalse(new MarkdownRenderer().entry(escalated, 2, List.of(), WAKE).contains(WAKE));
    }

    @Test
    void anAcceptedProposalWakesUnlessTheMentionedLoginAcceptedIt() {
        ClarificationRecord r = asked().with(Status.PENDING, ThreadEntry.proposal(1, "architect", "JWT", T, null));
        ClarificationRecord accepted = r.with(Status.ANSWERED, r.thread().get(1).acceptedAt(T, "octocat"));
        assertTrue(line(accepted, 2).orElseThrow().contains("accepted by **octocat**"));
        ClarificationRecord own = r.with(Status.ANSWERED, r.thread().get(1).acceptedAt(T, "Copilot"));
        assertEquals(Optional.empty(), line(own, 2));
    }

    @Test
    void aResolutionWakesOnlyWhenSomeoneElseMadeIt() {
        ClarificationRecord own = answered().with(Status.RESOLVED, new ThreadEntry(1, "engineer", EntryType.RESOLUTION,
                "Thanks", T));
        assertEquals(Optional.empty(), line(own, 2), "the requester resolved it");
        ClarificationRecord byMaintainer = answered().with(Status.RESOLVED, new ThreadEntry(1, "boss",
                EntryType.RESOLUTION, "Use JWT", T));
        assertEquals(Optional.of("@copilot CLR-7-001 was resolved by **boss**: the resolution is quoted above."),
                line(byMaintainer, 2));
        ClarificationRecord decided = answered().with(Status.ESCALATED, new ThreadEntry(1, "agentx",
                EntryType.ESCALATION, "Escalated", T)).with(Status.RESOLVED, new ThreadEntry(1, "boss",
                EntryType.RESOLUTION, "Decision: JWT", T));
        assertEquals(Optional.of("@copilot CLR-7-001 was escalated and **boss** decided it: the decision is quoted "
                + "above."), line(decided, 3));
        ClarificationRecord abandoned = asked().with(Status.ABANDONED, new ThreadEntry(1, "octocat",
                EntryType.RESOLUTION, "Issue closed", T));
        assertEquals(Optional.of("@copilot CLR-7-001 was abandoned by **octocat**: no answer will come; the reason "
                + "is quoted above."), line(abandoned, 1));
        ClarificationRecord byTheMentioned = asked().with(Status.ABANDONED, new ThreadEntry(1, "copilot",
                EntryType.RESOLUTION, "Not needed", T));
        assertEquals(Optional.empty(), line(byTheMentioned, 1), "the mentioned login's own change");
    }

    @Test
    void aTeamMentionWakesAndNoMentionMeansNoLine() {
        assertTrue(WakeLine.of(answered(), 1, "@acme/engineers").orElseThrow().startsWith("@acme/engineers "));
        assertEquals(Optional.empty(), WakeLine.of(answered(), 1, null));
        assertFalse(new MarkdownRenderer().entry(answered(), 1, List.of()).contains("@copilot"));
    }

    @Test
    void aNameInTheLineIsNeutralised() {
        ClarificationRecord r = answered().with(Status.RESOLVED, new ThreadEntry(1, "ev@l<x>", EntryType.RESOLUTION,
                "x", T));
        String l = line(r, 2).orElseThrow();
        assertTrue(l.contains("ev@&#8203;l&lt;x&gt;"), l);
    }
}
