package dev.agentx.clarify.dashboard;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.agentx.clarify.app.LocalMode;
import dev.agentx.clarify.protocol.Ledger;
import dev.agentx.clarify.routing.ClarifyCommand;
import dev.agentx.clarify.support.MutableClock;
import dev.agentx.clarify.support.TestRoot;
import dev.agentx.clarify.support.Workflows;
import gg.jte.ContentType;
import gg.jte.TemplateEngine;
import gg.jte.output.StringOutput;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** What the page shows, computed on a test clock, and the templates' escaping of what people wrote. */
class DashboardTest {
    @TempDir
    Path dir;

    private Dashboard.Snapshot snapshot(TestRoot root) {
        LocalMode local = root.local();
        List<Ledger> all = new ArrayList<>();
        local.ledgers().issues().forEach(i -> local.ledgers().read(i).ifPresent(all::add));
        return Dashboard.build("t", root.clock.instant(), local.statuses().read(), all,
                local.activeLedgers().scan().active(), List.of(), local::upstreamOrder, List.of());
    }

    @Test
    void aDeadlockIsNamedAndMarkedAndNothingIsChanged() {
        TestRoot root = new TestRoot(dir, MutableClock.at("2026-03-02T09:00:00Z"));
        Workflows.mesh(root);
        LocalMode local = root.local();
        local.engine().execute(new ClarifyCommand.Ask(1, "engineer", "architect", null, "A?", true, List.of(), null));
        local.engine().execute(new ClarifyCommand.Ask(1, "architect", "engineer", null, "B?", true, List.of(), null));
        root.clock.advance(Duration.ofMinutes(45));
        Dashboard.Snapshot s = snapshot(root);
        assertEquals(1, s.graph().cycles().size());
        Dashboard.Cycle c = s.graph().cycles().get(0);
        assertEquals("engineer -> architect -> engineer", c.path());
        assertEquals("CLR-1-001", c.victim());
        assertTrue(s.graph().edges().stream().allMatch(Dashboard.Edge::inCycle));
        assertTrue(s.agents().stream().filter(a -> a.name().equals("engineer")).findFirst().orElseThrow().deadlocked());
        Dashboard.ThreadView t = s.open().get(0);
        assertEquals("overdue 15m", t.slaLeft());
        assertTrue(t.overdue());
        // read-only: both questions still pending
        assertTrue(local.ledgers().read(1).orElseThrow().clarifications().stream()
                .allMatch(r -> r.status().wire().equals("pending")));
    }

    @Test
    void theDigestCountsRequestsPerDayAndRounds() {
        TestRoot root = new TestRoot(dir, MutableClock.at("2026-03-02T09:00:00Z"));
        Workflows.mesh(root);
        LocalMode local = root.local();
        local.engine().execute(new ClarifyCommand.Ask(1, "engineer", "architect", "Auth", "A?", false, List.of(), null));
        local.engine().execute(new ClarifyCommand.Answer("CLR-1-001", "architect", "a"));
        local.engine().execute(new ClarifyCommand.Resolve("CLR-1-001", null, "done"));
        root.clock.advance(Duration.ofDays(1));
        local.engine().execute(new ClarifyCommand.Ask(2, "engineer", "architect", "Auth", "B?", false, List.of(), null));
        Dashboard.DigestView d = snapshot(root).digest();
        assertEquals(2, d.total());
        assertEquals(Dashboard.DAYS, d.perDay().size());
        assertEquals("03-03", d.perDay().get(Dashboard.DAYS - 1).label());
        assertEquals(1, d.perDay().get(Dashboard.DAYS - 1).value());
        assertEquals(1, d.autoPerDay().get(Dashboard.DAYS - 2).value());
        assertEquals(100, d.perDay().get(Dashboard.DAYS - 2).percent());
        assertEquals("auth", d.topics().get(0).label());
        assertEquals("50 %", d.autoRate());
    }

    @Test
    void whatPeopleWroteIsEscapedOnThePage() {
        TestRoot root = new TestRoot(dir, MutableClock.at("2026-03-02T09:00:00Z"));
        Workflows.mesh(root);
        root.local().engine().execute(new ClarifyCommand.Ask(1, "engineer", "architect", "<script>alert(1)</script>",
                "Is <b>this</b> & \"that\" safe?", true, List.of(), null));
        StringOutput out = new StringOutput();
        TemplateEngine.createPrecompiled(ContentType.Html).render("dashboard/page.jte", snapshot(root), out);
        String html = out.toString();
        assertFalse(html.contains("<script>alert(1)"), "a topic cannot inject a script");
        assertTrue(html.contains("&lt;script&gt;alert(1)&lt;/script&gt;"), html);
        assertTrue(html.contains("Is &lt;b&gt;this&lt;/b&gt; &amp; \"that\" safe?"), html); // text: quotes need no escape
    }
}
