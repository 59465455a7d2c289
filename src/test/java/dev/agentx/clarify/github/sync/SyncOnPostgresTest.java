package dev.agentx.clarify.github.sync;

import static com.github.tomakehurst.wiremock.client.WireMock.get;
import static com.github.tomakehurst.wiremock.client.WireMock.urlPathEqualTo;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.agentx.clarify.cli.Main;
import dev.agentx.clarify.github.support.GitHubRig;
import dev.agentx.clarify.github.support.Keys;
import dev.agentx.clarify.protocol.Status;
import dev.agentx.clarify.support.MutableClock;
import dev.agentx.clarify.support.TestPostgres;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code agentx sync} against a server on PostgreSQL, end to end: the real server on an embedded
 * database, WireMock as GitHub serving back the comments the app posted (authored by its bot
 * user). The database is backed up, two more deliveries follow, the backup is restored, and sync
 * with the server's environment must bring the database's ledgers and its record of what was
 * posted in line with GitHub, as docs/operations.md says, writing nothing of the file store.
 */
@Tag("postgres")
class SyncOnPostgresTest {

    @TempDir
    Path dir;
    MutableClock clock;
    GitHubRig rig;
    TestPostgres.Database db;

    @BeforeEach
    void setUp() {
        clock = MutableClock.at("2026-03-02T09:00:00Z");
        db = TestPostgres.newDatabase();
        rig = new GitHubRig(dir.resolve("data"), clock).database(db.url());
    }

    @AfterEach
    void tearDown() {
        rig.close();
    }

    private void deliver(String login, int issue, String body) {
        clock.advance(Duration.ofMinutes(1));
        assertEquals(202, rig.deliver("issue_comment", rig.comment(login, issue, body)).status());
    }

    /**
     * A copy of the database {@code from} as it is now, as a dump restored into a new database
     * would be (nothing may be connected to {@code from}: stop the server first).
     */
    private static TestPostgres.Database copyOf(TestPostgres.Database from, String suffix) {
        String name = from.name() + "_" + suffix;
        try (Connection c = TestPostgres.server().getPostgresDatabase().getConnection();
             Statement s = c.createStatement()) {
            s.execute("CREATE DATABASE " + name + " TEMPLATE " + from.name() + " OWNER " + TestPostgres.OWNER);
        } catch (SQLException e) {
            throw new IllegalStateException("cannot copy " + from.name() + ": " + e.getMessage(), e);
        }
        return new TestPostgres.Database(name, from.port());
    }

    record Run(int code, String out, String err) {
    }

    /** {@code agentx sync --repo Codertocat/Hello-World ARGS} with the server's environment and {@code extra}. */
    private Run sync(Map<String, String> extra, String... args) {
        return syncAs("Codertocat/Hello-World", extra, args);
    }

    /** {@code agentx sync --repo REPO ARGS} with the server's environment and {@code extra}. */
    private Run syncAs(String repo, Map<String, String> extra, String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        List<String> all = new ArrayList<>(List.of("sync", "--repo", repo));
        all.addAll(List.of(args));
        Map<String, String> env = new HashMap<>(Map.of("GITHUB_APP_ID", String.valueOf(GitHubRig.APP_ID),
                "GITHUB_APP_PRIVATE_KEY", Keys.pkcs1Pem(), "GITHUB_API_URL", rig.wiremock.baseUrl(),
                "AGENTX_DATA_DIR", rig.data.toString()));
        env.putAll(extra);
        int code = Main.run(all.toArray(String[]::new), new PrintWriter(out), new PrintWriter(err), env, dir, clock,
                false, ctx -> {
                    throw new AssertionError("sync needs no Local Mode root");
                });
        return new Run(code, out.toString(), err.toString());
    }

    /** Every file under the data dir's {@code repos/}: the file store's state, which a server on PostgreSQL never reads. */
    private List<String> fileStoreState() throws Exception {
        Path repos = rig.data.resolve("repos");
        if (!Files.isDirectory(repos)) {
            return List.of();
        }
        try (Stream<Path> files = Files.walk(repos)) {
            return files.filter(Files::isRegularFile).map(p -> rig.data.relativize(p).toString())
                    .filter(p -> p.contains("/clarifications/") || p.contains("/github/")).sorted().toList();
        }
    }

    /**
     * On PostgreSQL the ledgers are in the database, but the outbox is still the data dir's: an
     * issue whose resolution GitHub refused (502) is left alone by --write until the server, started
     * again, has posted it.
     */
    @Test
    void anIssueWithEffectsStillInTheDataDirsOutboxIsLeftAloneOnTheDatabase() throws Exception {
        rig.start();
        deliver("eng", 48, "/clarify @architect Which queue?");
        deliver("arch", 48, "/clarify answer Kafka or NATS.");
        List<String> shown = rig.comments(48);
        assertEquals(2, shown.size(), shown.toString());
        var failing = rig.wiremock.stubFor(com.github.tomakehurst.wiremock.client.WireMock.post(
                        urlPathEqualTo(GitHubRig.API_REPO + "/issues/48/comments")).atPriority(1)
                .willReturn(com.github.tomakehurst.wiremock.client.WireMock.aResponse().withStatus(502)));
        deliver("eng", 48, "/clarify resolve CLR-48-001 going with option 2");
        rig.mode().close();

        rig.serveToSync(Map.of(48, shown));
        Map<String, String> server = Map.of("AGENTX_DATABASE_URL", db.url());
        Run write = sync(server, "--issue", "48", "--write", "--json");
        assertEquals(3, write.code(), write.out() + write.err());
        JsonNode report = rig.json.readTree(write.out());
        assertEquals("unsent", report.at("/issues/0/outcome").asText(), write.out());
        assertTrue(report.at("/issues/0/problems/0").asText().contains("outbox still has 2 effects"), write.out());

        rig.wiremock.removeStub(failing);
        clock.advance(Duration.ofHours(1));
        rig.start();
        rig.mode().drain();
        assertEquals(Status.RESOLVED, rig.ledger(48).clarifications().get(0).status(), "the resolution kept");
        rig.mode().close();
        List<String> now = new ArrayList<>(new java.util.LinkedHashSet<>(rig.comments(48)));
        assertEquals(3, now.size(), now.toString());
        rig.serveToSync(Map.of(48, now));
        Run after = sync(server, "--issue", "48");
        assertEquals(0, after.code(), after.out() + after.err());
        assertTrue(after.out().contains("#48: in sync"), after.out());
    }

    @Test
    void aRestoredDatabaseIsBroughtInLineWithGitHubAndTheServerGoesOnFromIt() throws Exception {
        rig.start();
        deliver("eng", 46, "/clarify @architect Which database?");
        rig.mode().close();
        TestPostgres.Database backup = copyOf(db, "backup");

        rig.start();
        deliver("arch", 46, "/clarify answer CLR-46-001 Postgres.");
        deliver("eng", 47, "/clarify @architect Which cache?");
        List<String> on46 = rig.comments(46);
        List<String> on47 = rig.comments(47);
        assertEquals(2, on46.size(), on46.toString());
        assertEquals(1, on47.size(), on47.toString());
        rig.mode().close();

        // the database restored from the backup: CLR-46-001 still pending, nothing of #47
        TestPostgres.Database restored = copyOf(backup, "restored");
        rig.serveToSync(new java.util.TreeMap<>(Map.of(46, on46, 47, on47)));
        Map<String, String> server = Map.of("AGENTX_DATABASE_URL", restored.url());

        Run dry = sync(server, "--json");
        assertEquals(3, dry.code(), dry.out() + dry.err());
        JsonNode report = rig.json.readTree(dry.out());
        assertEquals("differs", report.at("/issues/0/outcome").asText(), dry.out());
        assertEquals("differs", report.at("/issues/1/outcome").asText(), dry.out());

        // what a sync on the file store leaves: a state that the server, reading the data dir, would
        // prefer to the database's note of the issue
        Path stale = rig.data.resolve("repos/186853002/.agentx/state/github/issue-46.json");
        Files.createDirectories(stale.getParent());
        Files.writeString(stale, "{\"installation\":1,\"posted\":{\"CLR-46-001\":1},\"labels\":[],\"generation\":0}");

        Run write = sync(server, "--write");
        assertEquals(0, write.code(), write.out() + write.err());
        assertTrue(write.out().contains("#46: rebuilt from GitHub") && write.out().contains("#47: rebuilt from GitHub"),
                write.out());
        assertEquals(List.of(), fileStoreState(), "nothing written to the file store, which the server does not read, "
                + "and the state file that would outrank the database's note removed");

        Run again = sync(server, "--json");
        assertEquals(0, again.code(), again.out() + again.err());
        report = rig.json.readTree(again.out());
        assertEquals("in-sync", report.at("/issues/0/outcome").asText(), again.out());
        assertEquals("in-sync", report.at("/issues/1/outcome").asText(), again.out());
        assertTrue(report.path("store").asText().contains(restored.name()), again.out());

        // the server on the restored database goes on from what sync wrote, posting nothing again
        rig.database(restored.url()).start();
        rig.mode().drain();
        assertEquals(Status.ANSWERED, rig.ledger(46).clarifications().get(0).status());
        deliver("arch", 47, "/clarify answer CLR-47-001 Redis.");
        rig.mode().drain();
        assertEquals(Status.ANSWERED, rig.ledger(47).clarifications().get(0).status(),
                "the question asked after the backup is known again");
        List<String> now47 = rig.comments(47);
        assertEquals(2, now47.size(), "the answer only: " + now47);
        assertTrue(now47.get(1).contains("> Redis."), now47.toString());
        assertEquals(on46, rig.comments(46), "nothing on #46 posted again");
    }

    /** With no backup at all, an empty database is given its schema and the ledgers from GitHub. */
    @Test
    void anEmptyDatabaseIsFilledFromGitHub() throws Exception {
        rig.start();
        deliver("eng", 46, "/clarify @architect Which database?");
        List<String> on46 = rig.comments(46);
        rig.mode().close();

        TestPostgres.Database empty = TestPostgres.newDatabase();
        rig.serveToSync(new java.util.TreeMap<>(Map.of(46, on46)));
        Run write = sync(Map.of("AGENTX_DATABASE_URL", empty.url()), "--write");
        assertEquals(0, write.code(), write.out() + write.err());
        assertTrue(write.out().contains("#46: rebuilt from GitHub"), write.out());

        rig.database(empty.url()).start();
        rig.mode().drain();
        assertEquals(Status.PENDING, rig.ledger(46).clarifications().get(0).status());
        assertEquals(on46, rig.comments(46), "nothing posted again");
    }

    @Test
    void theDatabaseNamedInTheDataDirsEnvFileIsTheOneSynced() throws Exception {
        rig.start();
        deliver("eng", 46, "/clarify @architect Which database?");
        List<String> on46 = rig.comments(46);
        rig.mode().close();
        // the server's URL in the data dir's agentx.env, where agentx serve also reads it
        Files.writeString(rig.data.resolve("agentx.env"), "AGENTX_DATABASE_URL=" + db.url() + "\n");
        rig.serveToSync(new java.util.TreeMap<>(Map.of(46, on46, 47, List.of())));

        Run checked = sync(Map.of());
        assertEquals(0, checked.code(), checked.out() + checked.err());
        assertTrue(checked.out().contains("State: Codertocat/Hello-World in ") && checked.out().contains(db.name())
                && checked.out().contains("#46: in sync"), checked.out());

        // GitHub's names are not case sensitive: the repository as the server's rows name it
        rig.serveToSync("/repos/codertocat/hello-world", new java.util.TreeMap<>(Map.of(46, on46, 47, List.of())));
        Run otherCase = syncAs("codertocat/hello-world", Map.of());
        assertEquals(0, otherCase.code(), otherCase.out() + otherCase.err());
        assertTrue(otherCase.out().contains("State: Codertocat/Hello-World in ")
                && otherCase.out().contains("#46: in sync"), otherCase.out());
    }

    /**
     * A running server may still have comments to post that GitHub does not show yet: replacing its
     * ledgers under it would lose them. Comparing is allowed; writing is refused while a replica
     * beats on the database, and goes ahead once it stopped.
     */
    @Test
    void writingIsRefusedWhileAServerRunsOnTheDatabase() throws Exception {
        rig.start();
        deliver("eng", 46, "/clarify @architect Which database?");
        deliver("arch", 46, "/clarify answer CLR-46-001 Postgres.");
        List<String> on46 = rig.comments(46);
        assertEquals(2, on46.size(), on46.toString());
        // GitHub does not show the answer yet, as while the server's outbox is still sending it
        rig.serveToSync(new java.util.TreeMap<>(Map.of(46, on46.subList(0, 1), 47, List.of())));
        Map<String, String> server = Map.of("AGENTX_DATABASE_URL", db.url());

        Run checked = sync(server);
        assertEquals(3, checked.code(), checked.out() + checked.err());
        assertTrue(checked.out().contains("#46: the local ledger has entries GitHub does not show"), checked.out());
        Run refused = sync(server, "--write");
        assertEquals(2, refused.code(), refused.out() + refused.err());
        assertTrue(refused.err().contains("is in use by running agentx serve replica")
                && refused.err().contains("nothing was written"), refused.err());
        assertEquals(Status.ANSWERED, rig.ledger(46).clarifications().get(0).status(), "the answer kept");

        rig.mode().close();
        rig.serveToSync(new java.util.TreeMap<>(Map.of(46, on46, 47, List.of())));
        Run written = sync(server, "--write");
        assertEquals(0, written.code(), written.out() + written.err());
        assertTrue(written.out().contains("#46: in sync"), written.out());
    }
}
