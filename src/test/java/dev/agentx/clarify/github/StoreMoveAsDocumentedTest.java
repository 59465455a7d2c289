package dev.agentx.clarify.github;

import static com.github.tomakehurst.wiremock.client.WireMock.get;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.agentx.clarify.github.support.GitHubRig;
import dev.agentx.clarify.github.support.Keys;
import dev.agentx.clarify.protocol.Status;
import dev.agentx.clarify.support.MutableClock;
import dev.agentx.clarify.support.TestPostgres;
import dev.agentx.clarify.support.TestRoot;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A server moved from files to PostgreSQL and back on one data dir, step by step as
 * docs/storage.md says (moving a server between stores): after the copy to PostgreSQL the data
 * dir's state folders are moved aside, and on the way back the folders the data dir holds then
 * go aside before the copy's are moved in. What the issue shows on GitHub goes along each way,
 * also when it was last recorded by {@code agentx sync --write} (an outbox journal lost and the
 * ledgers rebuilt, as docs/operations.md says), so nothing is posted again.
 */
@Tag("postgres")
class StoreMoveAsDocumentedTest {
    static final String STATE = "repos/186853002/.agentx/state";

    @TempDir
    Path dir;

    /**
     * Moves each {@code repos/OWNER/NAME/.agentx/state} folder of {@code from} to the same place
     * under {@code to}, as the shell loops of docs/storage.md do: refused where {@code to} has one
     * already ({@code mv}'s "Directory not empty").
     */
    private static void moveStateFolders(Path from, Path to) throws IOException {
        Path repos = from.resolve("repos");
        if (!Files.isDirectory(repos)) {
            return;
        }
        List<Path> folders;
        try (Stream<Path> found = Files.walk(repos, 4)) {
            folders = found.filter(p -> p.getFileName().toString().equals("state")
                    && p.getParent().getFileName().toString().equals(".agentx") && Files.isDirectory(p)).toList();
        }
        for (Path state : folders) {
            Path target = to.resolve(from.relativize(state));
            Files.createDirectories(target.getParent());
            Files.move(state, target); // refused where the destination has one: mv's "Directory not empty"
        }
    }

    private static void deleteTree(Path p) throws IOException {
        try (Stream<Path> all = Files.walk(p)) {
            for (Path f : all.sorted(Comparator.reverseOrder()).toList()) {
                Files.delete(f);
            }
        }
    }

    @Test
    void aServerMovedToPostgresAndBackOnItsDataDirPostsNothingAgain() throws Exception {
        MutableClock clock = MutableClock.at("2026-11-25T09:00:00Z");
        TestPostgres.Database db = TestPostgres.newDatabase();
        Path data = dir.resolve("data");
        TestRoot cli = new TestRoot(dir.resolve("cwd"), clock);
        try (GitHubRig onFiles = new GitHubRig(data, clock)) {
            onFiles.start();
            assertEquals(202, onFiles.deliver("issue_comment", onFiles.comment("eng", 1, "/clarify @architect "
                    + "Which DB?")).status());
            List<String> posted = onFiles.comments(1);
            assertEquals(1, posted.size(), posted.toString());
            onFiles.mode().close();

            // the outbox journal lost: the ledgers moved away and rebuilt from GitHub (operations.md)
            deleteTree(data.resolve("outbox"));
            deleteTree(data.resolve(STATE).resolve("clarifications"));
            onFiles.serveToSync(Map.of(1, posted));
            TestRoot.Run sync = cli.cli(Map.of("GITHUB_APP_ID", String.valueOf(GitHubRig.APP_ID),
                    "GITHUB_APP_PRIVATE_KEY", Keys.pkcs1Pem(), "GITHUB_API_URL", onFiles.wiremock.baseUrl(),
                    "AGENTX_DATA_DIR", data.toString()), "sync", "--repo", "Codertocat/Hello-World", "--issue", "1", "--write");
            assertEquals(0, sync.code(), sync.out() + sync.err());
            assertTrue(Files.exists(data.resolve(STATE).resolve("github/issue-1.json")), "sync's record of what is posted");

            // to PostgreSQL: copy, set the state folders aside, set the URL, start
            TestRoot.Run copy = cli.cli("store", "copy", "--from", "files:" + data, "--to", db.url());
            assertEquals(0, copy.code(), copy.out() + copy.err());
            assertTrue(copy.out().contains("GitHub state of 1 issue handed over"), copy.out());
            moveStateFolders(data, dir.resolve("files-store"));
            assertFalse(Files.exists(data.resolve(STATE)), "no old ledgers left to look current");

            onFiles.database(db.url()).start();
            assertEquals(202, onFiles.deliver("issue_comment", onFiles.comment("arch", 1, "/clarify answer Postgres."))
                    .status());
            List<String> comments = onFiles.comments(1);
            assertEquals(2, comments.size(), "the question once, then the answer: " + comments);
            onFiles.mode().close();
        }

        // what a server on PostgreSQL keeps in the data dir's state folder: answer channels' failure counts
        Files.createDirectories(data.resolve(STATE));
        Files.writeString(data.resolve(STATE).resolve("channel-failures.json"), "{}\n");

        // back to files: copy to an empty folder, set the data dir's state folders aside, move the copy's in
        Path back = dir.resolve("back");
        TestRoot.Run copy = cli.cli("store", "copy", "--from", db.url(), "--to", "files:" + back);
        assertEquals(0, copy.code(), copy.out() + copy.err());
        moveStateFolders(data, dir.resolve("postgres-aside"));
        moveStateFolders(back, data);
        if (Files.isDirectory(back.resolve("inbox"))) { // the copy's inbox in place of the data dir's
            if (Files.isDirectory(data.resolve("inbox"))) {
                Files.move(data.resolve("inbox"), dir.resolve("postgres-aside").resolve("inbox"));
            }
            Files.move(back.resolve("inbox"), data.resolve("inbox"));
        }
        if (Files.exists(back.resolve("recovery.json"))) {
            Files.move(back.resolve("recovery.json"), data.resolve("recovery.json"));
        }

        try (GitHubRig onFilesAgain = new GitHubRig(data, clock)) {
            onFilesAgain.start();
            assertEquals(Status.ANSWERED, onFilesAgain.ledger(1).clarifications().get(0).status(),
                    "the answer given on PostgreSQL");
            // its own delivery id: a new rig numbers its deliveries from 1, which the data dir's inbox has seen
            assertEquals(202, onFilesAgain.deliver("issue_comment", onFilesAgain.comment("eng", 1,
                    "/clarify resolve CLR-1-001 Postgres it is."), "after-the-move-back-1").status());
            List<String> comments = onFilesAgain.comments(1);
            assertEquals(1, comments.size(), "only the resolution: " + comments);
            assertEquals(Status.RESOLVED, onFilesAgain.ledger(1).clarifications().get(0).status());
        }
    }
}
