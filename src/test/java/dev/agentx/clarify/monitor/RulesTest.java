package dev.agentx.clarify.monitor;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.agentx.clarify.protocol.ClarificationRecord;
import dev.agentx.clarify.protocol.EntryType;
import dev.agentx.clarify.protocol.Status;
import dev.agentx.clarify.protocol.ThreadEntry;
import dev.agentx.clarify.workflow.WorkflowCatalog;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The pure pieces: similarity, upstream order, cycle finding. */
class RulesTest {
    private static final Instant T = Instant.parse("2026-02-26T10:00:00Z");

    @Test
    void jaccardOfWordSets() {
        assertEquals(1.0, WordSimilarity.jaccard("Which auth method?", "which AUTH, method!"));
        assertEquals(1.0, WordSimilarity.jaccard("retry retry retry", "retry"), "a set: repetition does not count");
        assertEquals(5 / 7.0, WordSimilarity.jaccard("What is the limit for uploads", "What is the limit for downloads"));
        assertEquals(0.0, WordSimilarity.jaccard("alpha", "beta"));
        // 9 of 11 words: 0.818 is above the threshold, 8 of 10 (0.8 exactly) is not
        assertTrue(WordSimilarity.similar("a b c d e f g h i j", "a b c d e f g h i k"));
        assertFalse(WordSimilarity.similar("a b c d e f g h i", "a b c d e f g h x"));
        assertEquals(0.8, WordSimilarity.jaccard("a b c d e f g h", "a b c d e f g h x y"));
        assertTrue(WordSimilarity.similar("???", " ??? "), "no words: equal text is the same");
        assertFalse(WordSimilarity.similar("???", "!!!"));
        assertTrue(WordSimilarity.similar("Gr\u00f6\u00dfe der \u00dcbertragung", "gr\u00f6\u00dfe der \u00fcbertragung"), "letters beyond ASCII");
    }

    @Test
    void upstreamOrderBuiltInsThenWorkflowStepsThenUnknown(@TempDir Path dir) throws Exception {
        Files.writeString(dir.resolve("ops.toml"), """
                [[steps]]
                id = "qa"
                agent = "qa-lead"
                [[steps]]
                id = "deploy"
                agent = "devops"
                can_clarify = ["qa-lead"]
                """);
        UpstreamOrder order = UpstreamOrder.of("ops", new WorkflowCatalog(dir));
        List<String> agents = new ArrayList<>(List.of("zeta", "devops", "reviewer", "alpha", "qa-lead", "engineer",
                "ux-designer", "architect", "product-manager"));
        agents.sort(order.upstreamFirst());
        assertEquals(List.of("product-manager", "architect", "ux-designer", "engineer", "reviewer", "qa-lead", "devops",
                "alpha", "zeta"), agents);
    }

    private static WaitEdge edge(int issue, int seq, String from, String to) {
        ClarificationRecord r = new ClarificationRecord(String.format("CLR-%d-%03d", issue, seq), from, to, "t", true,
                Status.PENDING, 1, 5, T, T.plusSeconds(1800), null, List.of(),
                List.of(new ThreadEntry(1, from, EntryType.QUESTION, "q", T)));
        return new WaitEdge(issue, r);
    }

    @Test
    void everyCycleIsBrokenAtItsMostDownstreamAgent() {
        List<WaitEdge> edges = List.of(
                edge(1, 1, "engineer", "architect"), edge(1, 2, "architect", "product-manager"),
                edge(2, 1, "product-manager", "engineer"),                     // 3-cycle
                edge(3, 1, "reviewer", "engineer"), edge(3, 2, "engineer", "reviewer"), // 2-cycle sharing the engineer
                edge(4, 1, "ux-designer", "architect"));                       // no cycle
        List<Deadlock> d = WaitForGraph.breakCycles(edges, UpstreamOrder.builtIn());
        assertEquals(2, d.size(), d.toString());
        assertEquals(List.of("CLR-1-001", "CLR-3-001"), d.stream().map(x -> x.victim().id()).sorted().toList());
        Deadlock three = d.stream().filter(x -> x.cycle().size() == 3).findFirst().orElseThrow();
        assertEquals("engineer -> architect -> product-manager -> engineer", three.path());
        Deadlock two = d.stream().filter(x -> x.cycle().size() == 2).findFirst().orElseThrow();
        assertEquals("reviewer", two.victim().from());
        List<WaitEdge> reversed = new ArrayList<>(edges);
        java.util.Collections.reverse(reversed);
        assertEquals(d, WaitForGraph.breakCycles(reversed, UpstreamOrder.builtIn()),
                "the same answer whatever the input order");
    }

    @Test
    void parallelEdgesEachFormACycle() {
        List<WaitEdge> edges = List.of(edge(1, 1, "engineer", "architect"), edge(2, 1, "engineer", "architect"),
                edge(3, 1, "architect", "engineer"));
        List<Deadlock> d = WaitForGraph.breakCycles(edges, UpstreamOrder.builtIn());
        assertEquals(List.of("CLR-1-001", "CLR-2-001"), d.stream().map(x -> x.victim().id()).toList());
    }

    @Test
    void unknownAgentsAreMostDownstream() {
        List<Deadlock> d = WaitForGraph.breakCycles(List.of(edge(1, 1, "reviewer", "ghost"), edge(1, 2, "ghost", "reviewer")),
                UpstreamOrder.builtIn());
        assertEquals("ghost", d.get(0).victim().from());
    }
}
