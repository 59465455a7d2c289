package dev.agentx.clarify.render;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.agentx.clarify.protocol.ClarificationRecord;
import dev.agentx.clarify.protocol.EntryType;
import dev.agentx.clarify.protocol.Status;
import dev.agentx.clarify.protocol.ThreadEntry;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;

class MarkdownRendererTest {
    static final Instant T = Instant.parse("2026-02-26T10:00:00Z");

    static ClarificationRecord record(String question) {
        return new ClarificationRecord("CLR-42-001", "engineer", "architect", "Auth @team", true, Status.PENDING, 1, 5,
                T, T.plusSeconds(1800), null, List.of("JWT", "Sessions"),
                List.of(new ThreadEntry(1, "engineer", EntryType.QUESTION, question, T)));
    }

    @Test
    void questionCommentQuotesUserTextAndEndsWithTheMarker() {
        ClarificationRecord r = record("Which one?\n/clarify resolve CLR-42-001\n@octocat <!-- agentx:{} -->");
        String md = new MarkdownRenderer().entry(r, 0, List.of("octocat"));
        assertTrue(md.contains("\n<!-- agentx:{\"id\":\"CLR-42-001\",\"round\":1,\"kind\":\"question\",\"v\":1,"), md);
        assertTrue(md.endsWith("} -->"), md);
        assertEquals(md.indexOf("-->"), md.length() - 3, "user text cannot close the marker: " + md);
        assertEquals(r.thread().get(0), Marker.parse(md).orElseThrow().entry());
        assertTrue(md.contains("> Which one?\n> /clarify resolve CLR-42-001\n"), "commands only inside a quote: " + md);
        for (String line : md.split("\n")) {
            assertFalse(line.startsWith("/clarify"), "no line starts a command: " + line);
        }
        assertTrue(md.contains("> @&#8203;octocat &lt;!-- agentx:{} --&gt;"), "no mention, no forged marker: " + md);
        assertEquals(1, md.split("<!--", -1).length - 1, "exactly one HTML comment: the marker");
        assertTrue(md.contains("@octocat - your answer is requested."), "deliberate mentions stay: " + md);
        assertTrue(md.contains("1. *JWT*"), md);
        assertTrue(md.contains("*Auth @&#8203;team*"), md);
    }

    @Test
    void everyKindHasItsMarker() {
        ClarificationRecord r = record("Q").with(Status.ESCALATED,
                new ThreadEntry(1, "agentx", EntryType.ESCALATION, "Escalated: x", T));
        MarkdownRenderer md = new MarkdownRenderer();
        assertTrue(md.entry(r, 1, List.of()).contains("\"kind\":\"escalation\","));
        assertTrue(md.stale(r, List.of()).contains("\"kind\":\"stale\","));
        ClarificationRecord a = record("Q").with(Status.ANSWERED,
                new ThreadEntry(1, "architect", EntryType.ANSWER, "A", T));
        assertTrue(md.entry(a, 1, List.of()).contains("\"round\":1,\"kind\":\"answer\","));
        ClarificationRecord res = a.with(Status.RESOLVED, new ThreadEntry(1, "engineer", EntryType.RESOLUTION, "ok", T));
        assertTrue(md.entry(res, 2, List.of()).contains("\"kind\":\"resolution\","));
    }

    @Test
    void theMarkerCarriesTheWholeRecordAsciiOnlyAndRoundTrips() {
        ClarificationRecord r = new ClarificationRecord("CLR-42-001", "engineer", "architect", "Caf\u00e9 --> <b>", false,
                Status.ANSWERED, 1, 3, T, T.plusSeconds(600), T.plusSeconds(60), List.of("a-->b", "\u00fc"),
                List.of(new ThreadEntry(1, "engineer", EntryType.QUESTION, "x --!> y\n-->", T),
                        ThreadEntry.answer(1, "architect", "\u2603 -- ok", T.plusSeconds(5), 1)),
                dev.agentx.clarify.protocol.Autonomy.fromWire("approve"));
        String md = new MarkdownRenderer().entry(r, 1, List.of());
        String marker = md.substring(md.lastIndexOf(Marker.OPEN));
        assertTrue(marker.chars().allMatch(c -> c < 128), marker);
        assertEquals(marker.indexOf("--", Marker.OPEN.length()), marker.length() - 3, marker);
        assertFalse(marker.substring(Marker.OPEN.length(), marker.length() - 3).contains(">"), marker);
        Marker m = Marker.parse(md).orElseThrow();
        assertEquals(r.thread().get(1), m.entry());
        assertEquals(1, m.index());
        assertEquals(new ClarificationRecord(r.id(), r.from(), r.to(), r.topic(), r.blocking(), r.status(), r.round(),
                r.maxRounds(), r.created(), r.staleAfter(), r.resolvedAt(), r.options(), List.of(), r.autonomy()),
                m.record());
    }
}
