package dev.agentx.clarify.github.sync;

import static com.github.tomakehurst.wiremock.client.WireMock.aResponse;
import static com.github.tomakehurst.wiremock.client.WireMock.get;
import static com.github.tomakehurst.wiremock.client.WireMock.okJson;
import static com.github.tomakehurst.wiremock.client.WireMock.post;
import static com.github.tomakehurst.wiremock.client.WireMock.urlPathEqualTo;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.agentx.clarify.cli.Main;
import dev.agentx.clarify.github.support.GitHubRig;
import dev.agentx.clarify.github.support.Keys;
import dev.agentx.clarify.ledger.LedgerCodec;
import dev.agentx.clarify.protocol.ClarificationRecord;
import dev.agentx.clarify.protocol.Ledger;
import dev.agentx.clarify.store.files.DataDirectory;
import dev.agentx.clarify.support.MutableClock;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code agentx sync} end to end: a flow runs through the real server while WireMock records the
 * comments the app posts; those comments are then served back as the issue's comments (authored
 * by the app's bot user), the ledger is deleted, and sync rebuilds it byte for byte.
 */
class SyncCommandTest {
    static final String BOT = "agentx-test[bot]";
    static final Instant T0 = Instant.parse("2026-02-26T10:00:00Z");

    @TempDir
    Path dir;
    MutableClock clock;
    GitHubRig rig;
    Path ledgerFile;
    byte[] original;
    List<String> posted;

    @BeforeEach
    void runAFlowThroughTheServer() throws Exception {
        clock = MutableClock.at(T0.toString());
        rig = new GitHubRig(dir.resolve("data"), clock);
        rig.start();
        String[][] comments = {
                {"eng", "/clarify @architect --topic \"Storage --> <b>\" Which database?\nCaf\u00e9 --!> ok"},
                {"arch", "/clarify answer Postgres. -->"},
                {"eng", "/clarify followup CLR-1-001 Which version?"},
                {"arch", "/clarify answer CLR-1-001 16."},
                {"eng", "/clarify resolve CLR-1-001 Postgres 16."},
                {"rev", "/clarify @engineer --non-blocking Why no index?"},
                {"boss", "/clarify escalate CLR-1-002 needs a decision"},
                {"eng", "/clarify @product-manager Scope? \u2603"},
        };
        for (int i = 0; i < comments.length; i++) {
            clock.set(T0.plusSeconds(61L * i + 7));
            assertEquals(202, rig.deliver("issue_comment", rig.comment(comments[i][0], 1, comments[i][1])).status());
        }
        posted = rig.comments(1);
        assertEquals(8, posted.size(), posted.toString());
        ledgerFile = rig.data.resolve("repos/186853002/.agentx/state/clarifications/issue-1.json");
        original = Files.readAllBytes(ledgerFile);
        rig.mode().close();
    }

    @AfterEach
    void tearDown() {
        rig.close();
    }

    /** GitHub as sync sees it: the app, its installation, the repository, the issue and its comments. */
    private void serveComments(List<ObjectNode> extra) {
        rig.wiremock.stubFor(get(urlPathEqualTo("/app")).willReturn(okJson(
                "{\"id\":" + GitHubRig.APP_ID + ",\"slug\":\"agentx-test\",\"name\":\"AgentX test\"}")));
        rig.wiremock.stubFor(get(urlPathEqualTo(GitHubRig.API_REPO + "/installation")).willReturn(okJson(
                "{\"id\":1,\"app_id\":" + GitHubRig.APP_ID + ",\"account\":{\"login\":\"Codertocat\"}}")));
        rig.wiremock.stubFor(get(urlPathEqualTo(GitHubRig.API_REPO)).willReturn(okJson(
                "{\"id\":" + GitHubRig.REPO.id() + ",\"name\":\"Hello-World\",\"full_name\":\"Codertocat/Hello-World\","
                        + "\"owner\":{\"login\":\"Codertocat\"},\"url\":\"" + rig.wiremock.baseUrl() + GitHubRig.API_REPO
                        + "\"}")));
        rig.wiremock.stubFor(get(urlPathEqualTo(GitHubRig.API_REPO + "/issues/1")).willReturn(okJson(
                "{\"id\":11,\"number\":1,\"title\":\"Spitting Hello\",\"comments\":" + posted.size() + "}")));
        rig.wiremock.stubFor(get(urlPathEqualTo(GitHubRig.API_REPO + "/issues")).willReturn(okJson(
                "[{\"id\":11,\"number\":1,\"comments\":" + posted.size() + "},{\"id\":12,\"number\":2,\"comments\":0}]")));
        ArrayNode list = rig.json.createArrayNode();
        long id = 9000;
        for (String body : posted) {
            ObjectNode c = list.addObject();
            c.put("id", id++);
            c.put("body", body);
            c.putObject("user").put("login", BOT).put("type", "Bot");
        }
        extra.forEach(list::add);
        rig.wiremock.stubFor(get(urlPathEqualTo(GitHubRig.API_REPO + "/issues/1/comments")).atPriority(1)
                .willReturn(okJson(list.toString())));
    }

    /** GitHub as sync sees it for {@code issue}: the app, its installation and {@code shown} as its comments. */
    private void serveIssue(int issue, List<String> shown) {
        serveComments(List.of());
        rig.wiremock.stubFor(get(urlPathEqualTo(GitHubRig.API_REPO + "/issues/" + issue)).willReturn(okJson(
                "{\"id\":" + (10 + issue) + ",\"number\":" + issue + ",\"comments\":" + shown.size() + "}")));
        ArrayNode list = rig.json.createArrayNode();
        long id = 8000;
        for (String body : shown) {
            ObjectNode c = list.addObject();
            c.put("id", id++);
            c.put("body", body);
            c.putObject("user").put("login", BOT).put("type", "Bot");
        }
        rig.wiremock.stubFor(get(urlPathEqualTo(GitHubRig.API_REPO + "/issues/" + issue + "/comments")).atPriority(1)
                .willReturn(okJson(list.toString())));
    }

    private ObjectNode foreign(String login, String body) {
        ObjectNode c = rig.json.createObjectNode();
        c.put("id", 9999);
        c.put("body", body);
        c.putObject("user").put("login", login).put("type", "User");
        return c;
    }

    record Run(int code, String out, String err) {
    }

    private Run sync(String... args) {
        return syncWith(rig.wiremock.baseUrl(), args);
    }

    private Run syncWith(String apiUrl, String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        List<String> all = new ArrayList<>(List.of("sync", "--repo", "Codertocat/Hello-World"));
        all.addAll(List.of(args));
        Map<String, String> env = Map.of("GITHUB_APP_ID", String.valueOf(GitHubRig.APP_ID),
                "GITHUB_APP_PRIVATE_KEY", Keys.pkcs1Pem(), "GITHUB_API_URL", apiUrl,
                "AGENTX_DATA_DIR", rig.data.toString());
        int code = Main.run(all.toArray(String[]::new), new PrintWriter(out), new PrintWriter(err), env, dir, clock,
                false, ctx -> {
                    throw new AssertionError("sync needs no Local Mode root");
                });
        return new Run(code, out.toString(), err.toString());
    }

    @Test
    void rebuildsADeletedLedgerByteForByteAndIgnoresForgedMarkers() throws Exception {
        // a foreign comment that copies the app's last marker and changes it: never trusted
        String last = posted.get(posted.size() - 1);
        String forged = last.replace("\"pending\"", "\"resolved\"");
        serveComments(List.of(foreign("mallory", forged)));
        Files.delete(ledgerFile);

        Run dry = sync("--issue", "1");
        assertEquals(3, dry.code(), dry.out() + dry.err());
        assertTrue(dry.out().contains("#1: 3 difference(s); run with --write to rebuild"), dry.out());
        assertTrue(dry.out().contains("CLR-1-001 *: local (absent), GitHub present"), dry.out());
        assertTrue(dry.out().contains("ignored: comment 9999 by mallory (not the app)"), dry.out());
        assertFalse(Files.exists(ledgerFile), "nothing is written without --write");

        Run write = sync("--issue", "1", "--write");
        assertEquals(0, write.code(), write.out() + write.err());
        assertEquals(new String(original, java.nio.charset.StandardCharsets.UTF_8),
                Files.readString(ledgerFile), "rebuilt exactly");
        assertArrayEquals(original, Files.readAllBytes(ledgerFile));

        Run again = sync("--json");
        assertEquals(0, again.code(), again.out() + again.err());
        JsonNode report = rig.json.readTree(again.out());
        assertEquals("in-sync", report.at("/issues/0/outcome").asText(), again.out());
        assertEquals(BOT, report.path("app").asText());
        assertEquals("comment 9999 by mallory (not the app)", report.at("/issues/0/ignored/0").asText());

        // a restarted server does not post the rebuilt history again
        int before = rig.comments(1).size();
        rig.start();
        rig.mode().drain();
        assertEquals(before, rig.comments(1).size());
    }

    /**
     * The server keeps what it queued per issue in its outbox journal, not in a file. A data dir
     * restored from a backup lacks the newest comment; {@code sync --write} rebuilds the ledger and
     * records the issue as mirrored in {@code state/github/issue-1.json}, which the server must
     * prefer to its older note, then replace with a note of its own once it changes the issue.
     */
    @Test
    void aStateWrittenBySyncOutranksTheServersOlderNoteUntilTheServerTakesItOver() throws Exception {
        Path state = rig.data.resolve("repos/186853002/.agentx/state/github/issue-1.json");
        assertFalse(Files.exists(state), "the server writes no state file: its state is in the outbox journal");
        Path journal = rig.data.resolve("outbox/journal");
        byte[] journalBackup = Files.readAllBytes(journal);
        byte[] ledgerBackup = Files.readAllBytes(ledgerFile);

        clock.set(T0.plusSeconds(3600));
        rig.start();
        assertEquals(202, rig.deliver("issue_comment", rig.comment("eng", 1, "/clarify @architect Which cache?"))
                .status());
        posted = rig.comments(1);
        assertEquals(9, posted.size(), posted.toString());
        rig.mode().close();

        // the backup: the journal's note and the ledger know eight comments
        Files.write(journal, journalBackup);
        Files.write(ledgerFile, ledgerBackup);
        serveComments(List.of());
        Run write = sync("--issue", "1", "--write");
        assertEquals(0, write.code(), write.out() + write.err());
        assertTrue(Files.exists(state), "sync records the rebuilt issue as mirrored");

        rig.start();
        rig.mode().drain();
        assertEquals(9, rig.comments(1).size(), "the ninth comment is not posted again: the file outranks the note");

        clock.set(T0.plusSeconds(7200));
        assertEquals(202, rig.deliver("issue_comment", rig.comment("eng", 1, "/clarify @architect Which queue?"))
                .status());
        rig.mode().drain();
        assertEquals(10, rig.comments(1).size(), "the new question is posted once");
        assertFalse(Files.exists(state), "a note of the server replaced the file");

        rig.start();
        rig.mode().drain();
        assertEquals(10, rig.comments(1).size(), "after a restart the note says what was queued");
    }

    /**
     * GitHub fails the resolution's comment, so the server stops with it (and the labels behind it)
     * still in its outbox: the ledger says resolved, GitHub shows the question answered. A rebuild
     * would set the ledger back to answered while the outbox, at the next start, posts the
     * resolution; so sync leaves the issue alone until the server has posted it.
     */
    @Test
    void anIssueWithEffectsStillInTheOutboxIsNotRebuiltUntilTheServerPostedThem() throws Exception {
        clock.set(T0.plusSeconds(3600));
        rig.start();
        assertEquals(202, rig.deliver("issue_comment", rig.comment("eng", 8, "/clarify @architect Which queue?"))
                .status());
        assertEquals(202, rig.deliver("issue_comment", rig.comment("arch", 8, "/clarify answer Kafka or NATS."))
                .status());
        List<String> shown = rig.comments(8);
        assertEquals(2, shown.size(), shown.toString());
        var failing = rig.wiremock.stubFor(post(urlPathEqualTo(GitHubRig.API_REPO + "/issues/8/comments")).atPriority(1)
                .willReturn(aResponse().withStatus(502).withBody("{\"message\":\"Bad Gateway\"}")));
        assertEquals(202, rig.deliver("issue_comment", rig.comment("eng", 8,
                "/clarify resolve CLR-8-001 going with option 2")).status());
        rig.mode().close();
        Path ledger8 = rig.data.resolve("repos/186853002/.agentx/state/clarifications/issue-8.json");
        byte[] resolved = Files.readAllBytes(ledger8);
        assertEquals("resolved", new LedgerCodec().decode(resolved).clarifications().get(0).status().toString()
                .toLowerCase(java.util.Locale.ROOT));

        serveIssue(8, shown);
        Run dry = sync("--issue", "8");
        assertEquals(3, dry.code(), dry.out() + dry.err());
        assertTrue(dry.out().contains("#8: the server's outbox still has 2 effects for this issue that GitHub does "
                + "not show yet; ledger left alone: start agentx serve"), dry.out());
        Run write = sync("--issue", "8", "--write", "--json");
        assertEquals(3, write.code(), write.out() + write.err());
        JsonNode report = rig.json.readTree(write.out());
        assertEquals("unsent", report.at("/issues/0/outcome").asText(), write.out());
        assertFalse(report.path("clean").asBoolean(), write.out());
        assertArrayEquals(resolved, Files.readAllBytes(ledger8), "the ledger is left as it is");
        assertFalse(Files.exists(rig.data.resolve("repos/186853002/.agentx/state/github/issue-8.json")),
                "nothing recorded as posted");

        // the server starts again, GitHub takes the comment: the resolution is posted, and then in sync
        rig.wiremock.removeStub(failing);
        clock.advance(java.time.Duration.ofHours(1));
        rig.start();
        rig.mode().drain();
        assertEquals(0, rig.mode().pendingEffects());
        rig.mode().close();
        List<String> now = new ArrayList<>(new java.util.LinkedHashSet<>(rig.comments(8)));
        assertEquals(3, now.size(), now.toString());
        assertTrue(now.get(2).contains("going with option 2"), now.get(2));
        serveIssue(8, now);
        Run after = sync("--issue", "8", "--write");
        assertEquals(0, after.code(), after.out() + after.err());
        assertTrue(after.out().contains("#8: in sync"), after.out());
        assertArrayEquals(resolved, Files.readAllBytes(ledger8));
    }

    /**
     * Someone deleted two of the app's comments on GitHub: CLR-1-001's resolution (its last thread
     * entry) and the only comment of CLR-1-003. The ledger is ahead of GitHub: reported with what
     * GitHub lacks, and left as it is by --write.
     */
    @Test
    void aLedgerAheadOfGitHubIsReportedAndLeftAloneByWrite() throws Exception {
        assertTrue(posted.get(4).contains("Postgres 16."), posted.get(4));
        List<String> shown = new ArrayList<>(posted);
        shown.remove(7);
        shown.remove(4);
        posted = shown;
        serveComments(List.of());

        Run dry = sync("--issue", "1");
        assertEquals(3, dry.code(), dry.out() + dry.err());
        assertTrue(dry.out().contains("#1: the local ledger has entries GitHub does not show; left alone"), dry.out());
        assertTrue(dry.out().contains("not on GitHub: CLR-1-001: thread entry 4 not on GitHub"), dry.out());
        assertTrue(dry.out().contains("not on GitHub: CLR-1-003: the whole record (1 thread entry) is not on GitHub"),
                dry.out());
        assertTrue(dry.out().contains("CLR-1-001 thread[4].body: local"), dry.out());

        Run write = sync("--issue", "1", "--write", "--json");
        assertEquals(3, write.code(), write.out() + write.err());
        assertEquals("ahead", rig.json.readTree(write.out()).at("/issues/0/outcome").asText(), write.out());
        assertArrayEquals(original, Files.readAllBytes(ledgerFile), "the ledger is left as it is");
    }

    @Test
    void aDifferenceIsReportedPerFieldAndNotWrittenWithoutWrite() throws Exception {
        serveComments(List.of());
        LedgerCodec codec = new LedgerCodec();
        Ledger ledger = codec.decode(original);
        ClarificationRecord r = ledger.clarifications().get(1);
        Ledger changed = ledger.replace(new ClarificationRecord(r.id(), r.from(), r.to(), "Changed topic",
                r.blocking(), r.status(), r.round(), r.maxRounds(), r.created(), r.staleAfter(), r.resolvedAt(),
                r.options(), r.thread(), r.autonomy()));
        byte[] local = codec.encode(changed);
        Files.write(ledgerFile, local);

        Run run = sync("--issue", "1", "--json");
        assertEquals(3, run.code(), run.out() + run.err());
        JsonNode d = rig.json.readTree(run.out()).at("/issues/0/differences");
        assertEquals(1, d.size(), run.out());
        assertEquals("CLR-1-002", d.get(0).path("record").asText());
        assertEquals("topic", d.get(0).path("field").asText());
        assertEquals("\"Changed topic\"", d.get(0).path("local").asText());
        assertArrayEquals(local, Files.readAllBytes(ledgerFile), "nothing written");

        assertEquals(0, sync("--issue", "1", "--write").code());
        assertArrayEquals(original, Files.readAllBytes(ledgerFile));
    }

    /**
     * A running server may still have comments to post that GitHub does not show yet: replacing its
     * ledgers under it would lose them. Comparing is allowed; writing is refused while it holds the
     * data dir, and nothing is written.
     */
    @Test
    void writingIsRefusedWhileAServerHoldsTheDataDir() throws Exception {
        serveComments(List.of());
        Files.delete(ledgerFile);
        AutoCloseable server = DataDirectory.lockForServer(rig.data);
        try {
            Run dry = sync("--issue", "1");
            assertEquals(3, dry.code(), dry.out() + dry.err());
            Run refused = sync("--issue", "1", "--write");
            assertEquals(2, refused.code(), refused.out() + refused.err());
            assertTrue(refused.err().contains("is in use by agentx serve (pid " + ProcessHandle.current().pid() + ")")
                    && refused.err().contains("nothing was written"), refused.err());
            assertFalse(Files.exists(ledgerFile), "nothing written");
        } finally {
            server.close();
        }
        Run write = sync("--issue", "1", "--write");
        assertEquals(0, write.code(), write.out() + write.err());
        assertArrayEquals(original, Files.readAllBytes(ledgerFile));
        assertTrue(write.out().contains("State: files under " + rig.data.resolve(
                "repos/186853002/.agentx/state")), write.out());
    }

    @Test
    void badInputIsAUsageError() {
        Run r = sync("--issue", "0");
        assertEquals(2, r.code());
        assertTrue(r.err().contains("--issue must be a positive issue number"), r.err());
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int code = Main.run(new String[] {"sync", "--repo", "nope"}, new PrintWriter(out), new PrintWriter(err),
                Map.of(), dir, clock, false, ctx -> null);
        assertEquals(2, code);
        assertTrue(err.toString().contains("--repo must be OWNER/NAME"), err.toString());
        code = Main.run(new String[] {"sync", "--repo", "a/b"}, new PrintWriter(out), new PrintWriter(err),
                Map.of(), dir, clock, false, ctx -> null);
        assertEquals(2, code);
        assertTrue(err.toString().contains("agentx sync cannot start"), err.toString());
        assertFalse(err.toString().contains("GITHUB_WEBHOOK_SECRET"), err.toString());

        // the app is not installed there (nothing stubbed: 404)
        Run missing = sync("--issue", "1");
        assertEquals(1, missing.code(), missing.err());
        assertTrue(missing.err().contains("HTTP 404") && missing.err().contains("Is the app installed on "
                + "Codertocat/Hello-World"), missing.err());

        // installed, but the issue is gone (deleted, moved): the failure names the issue's request
        serveComments(List.of());
        rig.wiremock.stubFor(get(urlPathEqualTo(GitHubRig.API_REPO + "/issues/400")).atPriority(1)
                .willReturn(aResponse().withStatus(404).withBody("{\"message\":\"Not Found\"}")));
        Run gone = sync("--issue", "400");
        assertEquals(1, gone.code(), gone.err());
        assertTrue(gone.err().contains("read issue Codertocat/Hello-World#400: HTTP 404")
                && gone.err().contains("Does issue #400 still exist there"), gone.err());
    }

    /** GitHub's API does not answer: the environment's failure, said as such, with where the URL comes from. */
    @Test
    void anApiThatDoesNotAnswerIsUnavailableNotAnInternalError() {
        Run r = syncWith("http://127.0.0.1:1", "--issue", "1");
        assertEquals(1, r.code(), r.err());
        assertTrue(r.err().startsWith("UNAVAILABLE: GET /app: no response: "), r.err());
        assertTrue(r.err().contains("Is GITHUB_API_URL (http://127.0.0.1:1) right, and GitHub reachable from here?"),
                r.err());
        assertFalse(r.err().contains("HTTP -1"), r.err());
    }
}
