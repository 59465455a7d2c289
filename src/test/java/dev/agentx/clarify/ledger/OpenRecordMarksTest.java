package dev.agentx.clarify.ledger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.agentx.clarify.app.LocalMode;
import dev.agentx.clarify.protocol.Ledger;
import dev.agentx.clarify.routing.ClarifyCommand;
import dev.agentx.clarify.status.AgentState;
import dev.agentx.clarify.status.AgentStatus;
import dev.agentx.clarify.support.OnlyDocumentedState;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

@ExtendWith(OnlyDocumentedState.class)
class OpenRecordMarksTest {
    @TempDir
    Path root;

    private static ClarifyCommand.Ask ask(int issue, String from, String to, boolean blocking) {
        return new ClarifyCommand.Ask(issue, from, to, "Topic", "Which one?", blocking, List.of(), null, null);
    }

    private static List<Integer> issues(List<Ledger> ledgers) {
        return ledgers.stream().map(Ledger::issueNumber).sorted().toList();
    }

    @Test
    void theMarksFollowWhatEachLedgerHoldsOpenForWhom() {
        LocalMode local = LocalMode.open(root, Clock.systemUTC());
        FileLedgerStore ledgers = local.files().ledgers();
        String onSeven = local.engine().execute(ask(7, "engineer", "architect", true)).record().id();
        String onNine = local.engine().execute(ask(9, "engineer", "product-manager", false)).record().id();
        assertEquals(List.of(7), issues(ledgers.openFor("engineer")), "a question that does not block holds its asker to nothing");
        assertEquals(List.of(7), issues(ledgers.openFor("architect")));
        assertEquals(List.of(9), issues(ledgers.openFor("product-manager")));

        local.engine().execute(new ClarifyCommand.Answer(onSeven, "architect", "JWT."));
        assertEquals(List.of(), ledgers.openFor("engineer"), "answered: nothing open for the asker");
        assertEquals(List.of(), ledgers.openFor("architect"));
        assertFalse(Files.exists(root.resolve(".agentx/state/open-records/architect/7")));
        local.engine().execute(new ClarifyCommand.Answer(onNine, "product-manager", "Yes."));
        assertEquals(List.of(), ledgers.openFor("product-manager"));
    }

    @Test
    void theLookUpReadsNoLedgerButTheAgentsOwn() throws Exception {
        LocalMode local = LocalMode.open(root, Clock.systemUTC());
        local.engine().execute(ask(7, "engineer", "architect", true));
        String asked = local.engine().execute(ask(20, "reviewer", "engineer", true)).record().id();
        // another issue's ledger that the look-up must not read: damaged, it would fail any read
        local.engine().execute(ask(30, "architect", "product-manager", true));
        Files.writeString(local.files().ledgers().fileOf(30), "{ not a ledger");

        local.engine().execute(new ClarifyCommand.Answer(asked, "engineer", "Added one."));
        AgentStatus engineer = local.statuses().read().get("engineer");
        assertEquals(AgentState.BLOCKED_CLARIFICATION, engineer.status(), engineer.toString());
        assertEquals(7, engineer.issue());
        assertTrue(Files.exists(root.resolve(".agentx/state/open-records/engineer/7")));
        assertFalse(Files.exists(root.resolve(".agentx/state/monitor-index.json")), "no scan of the ledgers");
    }

    @Test
    void anAgentsFolderNameKeepsItInItsFolderAndApartFromNamesDifferentInCase() {
        assertEquals("engineer", OpenRecordMarks.folderOf("engineer"));
        assertEquals("qa.lead_2-x", OpenRecordMarks.folderOf("qa.lead_2-x"));
        assertEquals("%2E.", OpenRecordMarks.folderOf(".."));
        assertEquals("a%2Fb", OpenRecordMarks.folderOf("a/b"));
        assertEquals("%45ngineer", OpenRecordMarks.folderOf("Engineer"));
        assertEquals("%25", OpenRecordMarks.folderOf("%"));
        assertEquals("%C3%A9", OpenRecordMarks.folderOf("\u00e9"));
        assertEquals("%", OpenRecordMarks.folderOf(""));
    }
}
