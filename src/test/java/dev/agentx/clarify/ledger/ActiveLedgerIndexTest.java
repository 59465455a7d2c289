package dev.agentx.clarify.ledger;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.agentx.clarify.app.LocalMode;
import dev.agentx.clarify.protocol.Ledger;
import dev.agentx.clarify.routing.ClarifyCommand;
import dev.agentx.clarify.support.MutableClock;
import dev.agentx.clarify.support.TestRoot;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.FileTime;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ActiveLedgerIndexTest {
    @TempDir
    Path dir;
    TestRoot root;
    LocalMode local;

    @BeforeEach
    void setUp() {
        root = new TestRoot(dir, MutableClock.at("2026-02-26T10:00:00Z"));
        local = root.local();
    }

    private void ask(int issue) {
        local.engine().execute(new ClarifyCommand.Ask(issue, "engineer", "architect", null, "Q" + issue, true, List.of(),
                null));
    }

    private void closedLedger(int issue) {
        ask(issue);
        local.engine().execute(new ClarifyCommand.Resolve("CLR-" + issue + "-001", null, "done"));
    }

    /** A fresh index, as a new process opens it: only the file on disk carries over. */
    private ActiveLedgers.Scan scan() {
        return new ActiveLedgerIndex(local.files().ledgers(), index()).scan();
    }

    private Path index() {
        return root.state().resolve("monitor-index.json");
    }

    private static List<Integer> issues(ActiveLedgers.Scan s) {
        return s.active().stream().map(Ledger::issueNumber).toList();
    }

    @Test
    void noLedgersNoIndexNoFiles() {
        ActiveLedgers.Scan s = scan();
        assertTrue(s.active().isEmpty());
        assertFalse(Files.exists(root.state()), "a scan of nothing writes nothing");
    }

    @Test
    void closedLedgersAreNotReadAgainUntilTheirFileChanges() throws Exception {
        closedLedger(1);
        ask(2);
        ActiveLedgers.Scan first = scan();
        assertEquals(List.of(2), issues(first));
        String idx = Files.readString(index(), StandardCharsets.UTF_8);
        assertTrue(idx.contains("[1,\"closed\",") && idx.contains("[2,\"active\""), "both known: " + idx);

        // Replace issue 1's content in place (same inode, same size) and put its mtime back:
        // its signature is unchanged, so a scan must not read it (reading it would find it damaged).
        Path file = local.files().ledgers().fileOf(1);
        BasicFileAttributes before = Files.readAttributes(file, BasicFileAttributes.class);
        byte[] garbage = new byte[(int) before.size()];
        Arrays.fill(garbage, (byte) 'x');
        Files.write(file, garbage);
        Files.setLastModifiedTime(file, before.lastModifiedTime());
        BasicFileAttributes after = Files.readAttributes(file, BasicFileAttributes.class);
        assertEquals(before.fileKey(), after.fileKey());
        assertEquals(before.lastModifiedTime(), after.lastModifiedTime(), "the file system keeps the mtime we set");

        ActiveLedgers.Scan second = scan();
        assertEquals(List.of(2), issues(second));
        assertTrue(second.problems().isEmpty(), "issue 1 was not read: " + second.problems());

        // Any real change alters the signature, and the next full check judges the ledger again.
        Files.setLastModifiedTime(file, FileTime.fromMillis(before.lastModifiedTime().toMillis() + 1000));
        assertTrue(scan().problems().isEmpty(), "between full checks only the marked ledgers are read");
        root.clock.advance(ActiveLedgerIndex.FULL_CHECK_EVERY);
        ActiveLedgers.Scan third = scan();
        assertEquals(1, third.problems().size());
        assertTrue(third.problems().get(0).contains("issue-1.json is damaged"), third.problems().get(0));
        assertArrayEquals(garbage, Files.readAllBytes(file), "a damaged ledger is reported, never written");
        assertEquals(third.problems(), scan().problems(), "and reported again on every scan: it is marked");
        assertTrue(Files.exists(root.state().resolve("monitor-active/1")), "the full check marked the damaged ledger");
    }

    @Test
    void aClosedLedgerThatGetsANewQuestionIsActiveAgain() {
        closedLedger(1);
        assertTrue(scan().active().isEmpty());
        ask(1);
        assertEquals(List.of(1), issues(scan()));
    }

    @Test
    void aLedgerClosedSinceTheLastScanDropsOut() {
        ask(1);
        assertEquals(List.of(1), issues(scan()));
        local.engine().execute(new ClarifyCommand.Abandon("CLR-1-001", null, null));
        assertTrue(scan().active().isEmpty());
    }

    @Test
    void aMissingOrDamagedIndexIsRebuiltFromTheLedgers() throws Exception {
        closedLedger(1);
        ask(2);
        closedLedger(3);
        scan();
        String good = Files.readString(index());
        assertTrue(good.contains("\"version\":1"), good);
        // what a scan writes, the next full check reads back as it was written
        assertEquals(Set.of(1, 2, 3), ActiveLedgerIndex.parse(good.getBytes(StandardCharsets.UTF_8)).keySet());

        Files.delete(index());
        assertEquals(List.of(2), issues(scan()));
        assertEquals(good, Files.readString(index()));

        for (String broken : new String[] {"{\"version\":1,\"ledgers\":[[1,\"clo", "[]", "", "{}",
                "{\"version\":99,\"ledgers\":[]}", "{\"version\":1,\"ledgers\":[[1,\"closed\",1,2,\"k\",\"extra\"]]}",
                "{\"version\":1,\"ledgers\":[[1,\"bogus\"]]}", "{\"version\":1,\"ledgers\":[[1,\"closed\"]]}",
                "{\"version\":1,\"ledgers\":[[2,\"active\"],[2,\"active\"]]}", "{\"version\":1,\"ledgers\":[null]}",
                "{\"version\":1,\"ledgers\":[]} trailing", "{\"version\":1,\"ledgers\":[],\"more\":1}"}) {
            Files.writeString(index(), broken);
            ActiveLedgers.Scan s = scan();
            assertEquals(List.of(2), issues(s), broken);
            assertEquals(good, Files.readString(index()), "rebuilt after: " + broken);
            new ObjectMapper().readTree(Files.readString(index()));
        }
    }

    @Test
    void anUnchangedStateLeavesTheIndexFileAlone() throws Exception {
        closedLedger(1);
        ask(2);
        scan();
        byte[] bytes = Files.readAllBytes(index());
        BasicFileAttributes a = Files.readAttributes(index(), BasicFileAttributes.class);
        scan();
        local.engine().execute(new ClarifyCommand.Escalate("CLR-2-001", null, null));
        scan();
        assertArrayEquals(bytes, Files.readAllBytes(index()));
        BasicFileAttributes b = Files.readAttributes(index(), BasicFileAttributes.class);
        assertEquals(a.fileKey(), b.fileKey(), "not rewritten: a change of an active ledger is no change of the index");
        assertEquals(a.lastModifiedTime(), b.lastModifiedTime());
    }

    @Test
    void removedLedgersLeaveTheIndex() throws Exception {
        closedLedger(1);
        closedLedger(2);
        scan();
        Files.delete(local.files().ledgers().fileOf(2));
        root.clock.advance(ActiveLedgerIndex.FULL_CHECK_EVERY);
        scan();
        String idx = Files.readString(index(), StandardCharsets.UTF_8);
        assertTrue(idx.contains("\n[1,\"closed\",") && !idx.contains("[2,"), idx);
    }

    @Test
    void aPassReadsTheMarkedLedgersOnlyAndTheWritesKeepTheMarks() {
        for (int issue = 1; issue <= 20; issue++) {
            closedLedger(issue);
        }
        ask(21);
        ask(22);
        scan(); // the first: a full check
        Path marks = root.state().resolve("monitor-active");
        assertEquals(List.of("21", "22"), names(marks), "marked by the writes: the active ledgers only");
        ActiveLedgerIndex index = new ActiveLedgerIndex(local.files().ledgers(), index());
        assertEquals(List.of(21, 22), issues(index.scan()));
        assertEquals(2, index.ledgersRead(), "the 20 closed ledgers are not looked at");

        local.engine().execute(new ClarifyCommand.Resolve("CLR-21-001", null, "done"));
        assertEquals(List.of("22"), names(marks), "a write that closes the ledger removes its mark");
        ask(5);
        assertEquals(List.of("22", "5"), names(marks), "a write that opens one again marks it");
        assertEquals(List.of(5, 22), issues(scan()));
    }

    @Test
    void aLedgerPutInPlaceByOtherMeansIsFoundAtTheNextFullCheckAndMarked() throws Exception {
        ask(1);
        closedLedger(2);
        scan();
        // a restore from a backup: issue 1's active ledger copied in as issue 3 (no write of ours, no mark)
        byte[] copy = Files.readString(local.files().ledgers().fileOf(1)).replace("\"issueNumber\" : 1", "\"issueNumber\" : 3")
                .replace("CLR-1-", "CLR-3-").getBytes(StandardCharsets.UTF_8);
        Files.write(local.files().ledgers().fileOf(3), copy);
        assertEquals(List.of(1), issues(scan()), "not seen before the next full check");
        root.clock.advance(ActiveLedgerIndex.FULL_CHECK_EVERY);
        assertEquals(List.of(1, 3), issues(scan()));
        assertTrue(Files.exists(root.state().resolve("monitor-active/3")), "marked by the full check");
        assertEquals(List.of(1, 3), issues(scan()), "and read by every pass after it");

        // deleting the index has the next pass make a full check at once, also in a process that made one
        ActiveLedgerIndex kept = new ActiveLedgerIndex(local.files().ledgers(), index());
        assertEquals(List.of(1, 3), issues(kept.scan()));
        String three = Files.readString(local.files().ledgers().fileOf(3));
        Files.write(local.files().ledgers().fileOf(4), three.replace("\"issueNumber\" : 3", "\"issueNumber\" : 4")
                .replace("CLR-3-", "CLR-4-").getBytes(StandardCharsets.UTF_8));
        assertEquals(List.of(1, 3), issues(kept.scan()));
        Files.delete(index());
        assertEquals(List.of(1, 3, 4), issues(kept.scan()));
    }

    private static List<String> names(Path dir) {
        String[] names = dir.toFile().list();
        return names == null ? List.of() : Arrays.stream(names).sorted().toList();
    }
}
