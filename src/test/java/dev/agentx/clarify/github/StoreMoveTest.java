package dev.agentx.clarify.github;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.agentx.clarify.github.support.GitHubRig;
import dev.agentx.clarify.store.DeliveryQueue;
import dev.agentx.clarify.store.copy.Location;
import dev.agentx.clarify.store.copy.StoreCopy;
import dev.agentx.clarify.store.files.FileDeliveryQueue;
import dev.agentx.clarify.store.postgres.DatabaseUrl;
import dev.agentx.clarify.store.postgres.PostgresDatabase;
import dev.agentx.clarify.support.MutableClock;
import dev.agentx.clarify.support.TestPostgres;
import dev.agentx.clarify.support.TestRoot;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A server moved between files and PostgreSQL as docs/storage.md says carries on where it was, on
 * its own data dir or as replicas with new ones: what it had posted on GitHub is not posted again,
 * however long ago that was (past what the outbox remembers of its effects).
 */
@Tag("postgres")
class StoreMoveTest {
    @TempDir
    Path dir;

    /** Asks the architect on issue 1 and checks that the question was posted. */
    private static void ask(GitHubRig rig) {
        assertEquals(202, rig.deliver("issue_comment", rig.comment("eng", 1, "/clarify @architect Which DB?"))
                .status());
        assertEquals(1, rig.comments(1).size());
    }

    /** The architect answers on issue 1 in delivery {@code id}; the comments on issue 1 then, the answer last. */
    private static List<String> answer(GitHubRig rig, String id) {
        assertEquals(202, rig.deliver("issue_comment", rig.comment("arch", 1, "/clarify answer Postgres."), id)
                .status());
        List<String> comments = rig.comments(1);
        assertTrue(comments.get(comments.size() - 1).contains("> Postgres."), comments.toString());
        return comments;
    }

    @Test
    void aServerMovedToPostgresPostsNothingAgain() {
        MutableClock clock = MutableClock.at("2026-11-25T09:00:00Z");
        TestPostgres.Database db = TestPostgres.newDatabase();
        try (GitHubRig rig = new GitHubRig(dir.resolve("data"), clock)) {
            rig.start();
            ask(rig);
            // long enough for the outbox to have forgotten the keys of what it sent
            clock.advance(Duration.ofDays(60));
            rig.mode().drain();

            List<StoreCopy.Copied> copied = new StoreCopy(rig.locks()).copy(
                    Location.parse("files:" + rig.data, Map.of()), Location.parse(db.url(), Map.of()),
                    Optional.empty(), c -> { }).repositories();
            assertTrue(copied.stream().allMatch(StoreCopy.Copied::same), copied.toString());
            rig.database(db.url()).start();

            List<String> comments = answer(rig, rig.nextDeliveryId());
            assertEquals(2, comments.size(), "the question once, then the answer: " + comments);
        }
    }

    @Test
    void replicasWithNewDataDirsOnTheCopiedDatabasePostNothingAgain() throws Exception {
        MutableClock clock = MutableClock.at("2026-11-25T09:00:00Z");
        TestPostgres.Database db = TestPostgres.newDatabase();
        Path single = dir.resolve("single-server");
        try (GitHubRig onFiles = new GitHubRig(single, clock)) {
            onFiles.start();
            ask(onFiles);
        }
        // the command an operator runs, which also hands over what the data dir's outbox recorded,
        // reading the outbox's journal without changing it, even with a record half-written at its end
        Path journal = single.resolve("outbox/journal");
        byte[] halfWritten = {0, 0, 1, 0, 'x'};
        java.nio.file.Files.write(journal, halfWritten, java.nio.file.StandardOpenOption.APPEND);
        byte[] before = java.nio.file.Files.readAllBytes(journal);
        TestRoot.Run copy = new TestRoot(dir.resolve("cwd"), clock).cli("store", "copy", "--from", "files:" + single,
                "--to", db.url());
        assertEquals(0, copy.code(), copy.err());
        assertTrue(java.util.Arrays.equals(before, java.nio.file.Files.readAllBytes(journal)), "the journal as it was");
        assertTrue(copy.out().contains("GitHub state of 1 issue handed over"), copy.out());

        try (GitHubRig replica = new GitHubRig(dir.resolve("replica-data"), clock).database(db.url())) {
            replica.start(); // a data dir of its own, empty: its outbox knows nothing of what was posted
            // its own delivery id: rigs number theirs alike, and the question's id marks it done in the ledger
            List<String> comments = answer(replica, "replica-1");
            assertEquals(1, comments.size(), "only the answer: " + comments);
        }
    }

    /**
     * The auditor's case: the server on files acknowledged the architect's answer (GitHub has its
     * 202, so no recovery pass asks for it again), failed its first attempt and was stopped before
     * the retry. Moved to PostgreSQL, the server finds the answer at its start and carries it out;
     * the question's delivery, done with on files, is a duplicate there.
     */
    @Test
    void aDeliveryWaitingInTheFileInboxIsCarriedOutOnPostgres() throws Exception {
        MutableClock clock = MutableClock.at("2026-11-25T09:00:00Z");
        TestPostgres.Database db = TestPostgres.newDatabase();
        Path data = dir.resolve("data");
        byte[] question;
        byte[] answer;
        try (GitHubRig onFiles = new GitHubRig(data, clock)) {
            onFiles.start();
            question = onFiles.bytes(onFiles.comment("eng", 1, "/clarify @architect Which DB?"));
            assertEquals(202, onFiles.deliver("issue_comment", onFiles.comment("eng", 1, "/clarify @architect Which DB?"),
                    "question-1").status());
            assertEquals(1, onFiles.comments(1).size());
            answer = onFiles.bytes(onFiles.comment("arch", 1, "/clarify answer Postgres."));
        }
        FileDeliveryQueue inbox = new FileDeliveryQueue(data.resolve("inbox"), clock);
        inbox.accept("answer-2", "issue_comment", answer, "Codertocat/Hello-World#1");
        inbox.saveProgress(inbox.queued().get(0), new DeliveryQueue.Progress(0, false, 1,
                clock.instant().plusSeconds(10)));
        inbox.close();

        TestRoot.Run copy = new TestRoot(dir.resolve("cwd"), clock).cli("store", "copy", "--from", "files:" + data,
                "--to", db.url());
        assertEquals(0, copy.code(), copy.err());
        assertTrue(copy.out().contains("deliveries: 1 acknowledged and not done with, 1 id of deliveries done with"),
                copy.out());

        try (GitHubRig onPostgres = new GitHubRig(data, clock).database(db.url())) {
            onPostgres.start();
            assertEquals(1, onPostgres.mode().pendingDeliveries(), "the answer waits for its retry");
            clock.advance(Duration.ofSeconds(10));
            onPostgres.mode().drain();
            assertEquals(0, onPostgres.mode().pendingDeliveries());
            List<String> comments = onPostgres.comments(1);
            assertEquals(1, comments.size(), "the answer: " + comments);
            assertTrue(comments.get(0).contains("> Postgres."), comments.toString());
            assertEquals(200, redeliver(onPostgres, question, "question-1"), "a duplicate");
            assertEquals(1, onPostgres.comments(1).size(), "nothing done again: " + onPostgres.comments(1));
        }
    }

    /** The same the other way: a delivery waiting in the database is carried out on files after the move back. */
    @Test
    void aDeliveryWaitingInTheDatabaseIsCarriedOutOnFiles() throws Exception {
        MutableClock clock = MutableClock.at("2026-11-25T09:00:00Z");
        TestPostgres.Database db = TestPostgres.newDatabase();
        Path data = dir.resolve("data");
        byte[] question;
        byte[] answer;
        try (GitHubRig onPostgres = new GitHubRig(data, clock).database(db.url())) {
            onPostgres.start();
            question = onPostgres.bytes(onPostgres.comment("eng", 1, "/clarify @architect Which DB?"));
            assertEquals(202, onPostgres.deliver("issue_comment", onPostgres.comment("eng", 1,
                    "/clarify @architect Which DB?"), "question-1").status());
            assertEquals(1, onPostgres.comments(1).size());
            answer = onPostgres.bytes(onPostgres.comment("arch", 1, "/clarify answer Postgres."));
        }
        try (PostgresDatabase replica = PostgresDatabase.open(DatabaseUrl.parse(db.url(), Map.of()), 2)) {
            DeliveryQueue queue = replica.deliveries("host-b-4d5e6f", clock);
            queue.accept("answer-2", "issue_comment", answer, "Codertocat/Hello-World#1");
            queue.saveProgress(queue.queued().get(0), new DeliveryQueue.Progress(0, false, 1,
                    clock.instant().plusSeconds(10)));
        }

        Path back = dir.resolve("back");
        TestRoot.Run copy = new TestRoot(dir.resolve("cwd"), clock).cli("store", "copy", "--from", db.url(), "--to",
                "files:" + back);
        assertEquals(0, copy.code(), copy.err());
        assertTrue(copy.out().contains("deliveries: 1 acknowledged and not done with, 1 id of deliveries done with"),
                copy.out());
        // as docs/storage.md says: the state folders and the inbox go into the data dir
        Path state = Path.of("repos/186853002/.agentx/state");
        java.nio.file.Files.createDirectories(data.resolve(state).getParent());
        java.nio.file.Files.move(back.resolve(state), data.resolve(state));
        java.nio.file.Files.move(back.resolve("inbox"), data.resolve("inbox"));

        try (GitHubRig onFiles = new GitHubRig(data, clock)) {
            onFiles.start();
            assertEquals(1, onFiles.mode().pendingDeliveries(), "the answer waits for its retry");
            clock.advance(Duration.ofSeconds(10));
            onFiles.mode().drain();
            assertEquals(0, onFiles.mode().pendingDeliveries());
            List<String> comments = onFiles.comments(1);
            assertEquals(1, comments.size(), "the answer: " + comments);
            assertTrue(comments.get(0).contains("> Postgres."), comments.toString());
            assertEquals(200, redeliver(onFiles, question, "question-1"), "a duplicate");
            assertEquals(1, onFiles.comments(1).size(), "nothing done again: " + onFiles.comments(1));
        }
    }

    /** Sends {@code body} again as GitHub redelivers it, with its delivery id; the status answered. */
    private static int redeliver(GitHubRig rig, byte[] body, String id) throws Exception {
        return rig.deliver("issue_comment", rig.json.readTree(body), id).status();
    }

    @Test
    void aServerMovedBackToFilesPostsNothingAgain() throws Exception {
        MutableClock clock = MutableClock.at("2026-11-25T09:00:00Z");
        TestPostgres.Database db = TestPostgres.newDatabase();
        Path data = dir.resolve("data");
        try (GitHubRig onPostgres = new GitHubRig(data, clock).database(db.url())) {
            onPostgres.start();
            ask(onPostgres);
            clock.advance(Duration.ofDays(60)); // the outbox has forgotten the keys of what it sent
            onPostgres.mode().drain();
        }
        // as docs/storage.md says: copy to an empty folder, move its state folders into the data dir
        Path back = dir.resolve("back");
        List<StoreCopy.Copied> copied = new StoreCopy(dev.agentx.clarify.lock.LockManager.standard(clock)).copy(
                Location.parse(db.url(), Map.of()), Location.parse("files:" + back, Map.of()),
                Optional.empty(), c -> { }).repositories();
        assertEquals(1, copied.get(0).issueStates(), copied.toString());
        Path state = Path.of("repos/186853002/.agentx/state");
        java.nio.file.Files.createDirectories(data.resolve(state).getParent());
        java.nio.file.Files.move(back.resolve(state), data.resolve(state));

        try (GitHubRig onFiles = new GitHubRig(data, clock)) {
            onFiles.start();
            // its own delivery id: a new rig numbers its deliveries from 1, which the data dir's inbox has seen
            List<String> comments = answer(onFiles, "after-the-move-1");
            assertEquals(1, comments.size(), "only the answer: " + comments);
        }
    }

    static final String HEAD = "ec26c3e57ca3a959ca5aad62de7213c562f8c821";

    /** Opens pull request 2 closing issue 42 and asks a blocking question on 42: the gate's run on its head fails. */
    private static void gatedPullRequest(GitHubRig rig) {
        assertEquals(202, rig.deliver("pull_request", rig.pullRequest("opened", 2, "Fixes #42", HEAD)).status());
        assertEquals(202, rig.deliver("issue_comment", rig.comment("eng", 42, "/clarify @architect Which auth?"))
                .status());
        assertEquals("action_required", gateRun(rig).path("conclusion").asText());
    }

    /** Resolves the question on 42: the gate's run on the pull request's head turns green. */
    private static void resolveAndSeeTheGateGoGreen(GitHubRig rig) {
        assertEquals(202, rig.deliver("issue_comment", rig.comment("eng", 42, "/clarify resolve CLR-42-001 JWT"),
                rig.nextDeliveryId() + "-after-the-move").status());
        assertEquals("success", gateRun(rig).path("conclusion").asText(),
                "the gate knew the pull request after the move");
        assertEquals(1, rig.checkRuns.runs.size(), "one run, changed: " + rig.checkRuns.runs);
    }

    private static com.fasterxml.jackson.databind.node.ObjectNode gateRun(GitHubRig rig) {
        List<com.fasterxml.jackson.databind.node.ObjectNode> runs = rig.checkRuns.on(HEAD);
        assertEquals(1, runs.size(), runs.toString());
        return runs.get(0);
    }

    /**
     * The merge gate's record of pull requests (which are open, their heads, the issues they
     * close) goes with the copy: on PostgreSQL a question resolved on an issue an open pull
     * request closes turns its failing check green, with no pull_request event since the move.
     */
    @Test
    void theMergeGateKnowsItsPullRequestsAfterAMoveToPostgres() {
        MutableClock clock = MutableClock.at("2026-11-25T09:00:00Z");
        TestPostgres.Database db = TestPostgres.newDatabase();
        try (GitHubRig rig = new GitHubRig(dir.resolve("data"), clock)) {
            rig.start();
            gatedPullRequest(rig);
            rig.mode().drain();

            TestRoot.Run copy = new TestRoot(dir.resolve("cwd"), clock).cli("store", "copy", "--from",
                    "files:" + rig.data, "--to", db.url());
            assertEquals(0, copy.code(), copy.err());
            // the pull request's record, and which pull requests issues 2 and 42 are gated by
            assertTrue(copy.out().contains("3 notes of the merge gate handed over"), copy.out());
            rig.database(db.url()).start();

            resolveAndSeeTheGateGoGreen(rig);
        }
    }

    /**
     * Back to files as docs/storage.md says (only the copy's state folders move into the data dir):
     * the gate's record, handed over beside the ledgers, is taken into the outbox at the start.
     */
    @Test
    void theMergeGateKnowsItsPullRequestsAfterAMoveBackToFiles() throws Exception {
        MutableClock clock = MutableClock.at("2026-11-25T09:00:00Z");
        TestPostgres.Database db = TestPostgres.newDatabase();
        Path data = dir.resolve("data");
        try (GitHubRig rig = new GitHubRig(data, clock).database(db.url())) {
            rig.start();
            gatedPullRequest(rig);
            rig.mode().drain();
            rig.mode().close(); // stopped, as the copy requires of a database's servers

            Path back = dir.resolve("back");
            StoreCopy.Copied copied = new StoreCopy(rig.locks(), dir2 -> dev.agentx.clarify.store.copy.IssueStates.NONE,
                    dev.agentx.clarify.github.gate.PullRequestGate::notePrefixes).copy(
                    Location.parse(db.url(), Map.of()), Location.parse("files:" + back, Map.of()),
                    Optional.empty(), c -> { }).repositories().get(0);
            assertTrue(copied.same(), copied.toString());
            assertEquals(3, copied.notes().count(), copied.toString());
            Path state = Path.of("repos/186853002/.agentx/state");
            Path notes = dev.agentx.clarify.store.copy.HandedOverNotes.fileIn(data.resolve(state));
            if (java.nio.file.Files.exists(data.resolve(state))) {
                java.nio.file.Files.move(data.resolve(state), dir.resolve("aside"));
            }
            java.nio.file.Files.createDirectories(data.resolve(state).getParent());
            java.nio.file.Files.move(back.resolve(state), data.resolve(state));
            assertTrue(java.nio.file.Files.exists(notes), "handed over beside the ledgers");

            rig.files().start();
            assertTrue(!java.nio.file.Files.exists(notes), "taken into the outbox at the start");
            resolveAndSeeTheGateGoGreen(rig);
            // and kept there: a restart does not need the file
            rig.start();
            assertEquals(3, dev.agentx.clarify.github.outbox.Outbox.notesIn(data.resolve("outbox"), "gate/").size()
                    + dev.agentx.clarify.github.outbox.Outbox.notesIn(data.resolve("outbox"), "gated-by/").size());
        }
    }
}
