package dev.agentx.clarify.github;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.agentx.clarify.github.support.GitHubRig;
import dev.agentx.clarify.ledger.LedgerCodec;
import dev.agentx.clarify.protocol.ClarificationRecord;
import dev.agentx.clarify.protocol.Ledger;
import dev.agentx.clarify.protocol.ThreadEntry;
import dev.agentx.clarify.support.MutableClock;
import dev.agentx.clarify.support.TestRoot;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The same operations through the CLI and through webhooks, at the same times, give the same ledger. */
class ModeParityTest {
    private static final Instant T0 = Instant.parse("2026-02-26T10:00:00Z");

    @TempDir
    Path dir;

    private void at(MutableClock clock, int minute) {
        clock.set(T0.plusSeconds(60L * minute));
    }

    @Test
    void cliAndWebhooksWriteTheSameLedger() throws Exception {
        MutableClock cliClock = MutableClock.at(T0.toString());
        TestRoot cli = new TestRoot(dir.resolve("local"), cliClock);
        Files.createDirectories(cli.root.resolve(".agentx"));
        String[][] steps = {
                {"clarify", "ask", "--issue", "1", "--from", "engineer", "--to", "architect", "--topic", "Storage",
                        "Which database?"},
                {"clarify", "answer", "CLR-1-001", "Postgres."},
                {"clarify", "followup", "CLR-1-001", "Which version?"},
                {"clarify", "answer", "CLR-1-001", "16."},
                {"clarify", "resolve", "CLR-1-001", "-m", "Postgres 16."},
                {"clarify", "ask", "--issue", "1", "--from", "reviewer", "--to", "engineer", "--non-blocking",
                        "Why no index?"},
                {"clarify", "escalate", "CLR-1-002", "--by", "boss", "-m", "needs a decision"},
                {"clarify", "resolve", "CLR-1-002", "--by", "boss", "-m", "Add the index."},
                {"clarify", "ask", "--issue", "1", "--from", "engineer", "--to", "product-manager", "Scope?"},
                {"clarify", "abandon", "CLR-1-003", "--by", "eng", "-m", "dropped"},
        };
        for (int i = 0; i < steps.length; i++) {
            at(cliClock, i);
            TestRoot.Run r = cli.cli(steps[i]);
            assertEquals(0, r.code(), String.join(" ", steps[i]) + ": " + r.err());
        }

        MutableClock ghClock = MutableClock.at(T0.toString());
        try (GitHubRig rig = new GitHubRig(dir.resolve("data"), ghClock)) {
            rig.start();
            String[][] comments = {
                    {"eng", "/clarify @architect --topic \"Storage\" Which database?"},
                    {"arch", "/clarify answer Postgres."},
                    {"eng", "/clarify followup CLR-1-001 Which version?"},
                    {"arch", "/clarify answer CLR-1-001 16."},
                    {"eng", "/clarify resolve CLR-1-001 Postgres 16."},
                    {"rev", "/clarify @engineer --non-blocking Why no index?"},
                    {"boss", "/clarify escalate CLR-1-002 needs a decision"},
                    {"boss", "/clarify resolve CLR-1-002 Add the index."},
                    {"eng", "/clarify @product-manager Scope?"},
                    {"eng", "/clarify abandon CLR-1-003 dropped"},
            };
            for (int i = 0; i < comments.length; i++) {
                at(ghClock, i);
                assertEquals(202, rig.deliver("issue_comment", rig.comment(comments[i][0], 1, comments[i][1])).status());
            }
            LedgerCodec codec = new LedgerCodec();
            Ledger viaCli = codec.decode(Files.readAllBytes(cli.state().resolve("clarifications/issue-1.json")));
            Ledger viaGitHub = rig.ledger(1);
            // GitHub Mode keys each entry with the comment's command that wrote it (for re-runs after a
            // crash and replays); every entry of this conversation was written by one, and nothing else differs
            for (ClarificationRecord r : viaGitHub.clarifications()) {
                for (ThreadEntry e : r.thread()) {
                    assertTrue(e.request() == null || e.request().startsWith("comment/"), e.toString());
                }
            }
            assertEquals(new String(codec.encode(viaCli), StandardCharsets.UTF_8),
                    new String(codec.encode(withoutRequests(viaGitHub)), StandardCharsets.UTF_8));
            assertEquals(3, viaGitHub.clarifications().size());
        }
    }

    private static Ledger withoutRequests(Ledger l) {
        List<ClarificationRecord> records = new ArrayList<>();
        for (ClarificationRecord r : l.clarifications()) {
            records.add(r.withThread(r.thread().stream().map(e -> e.withRequest(null)).toList()));
        }
        return new Ledger(l.issueNumber(), records);
    }
}
