package dev.agentx.clarify.github;

import static com.github.tomakehurst.wiremock.client.WireMock.aResponse;
import static com.github.tomakehurst.wiremock.client.WireMock.post;
import static com.github.tomakehurst.wiremock.client.WireMock.urlPathMatching;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.agentx.clarify.github.support.GitHubRig;
import dev.agentx.clarify.protocol.Status;
import dev.agentx.clarify.store.postgres.DatabaseUrl;
import dev.agentx.clarify.store.postgres.PostgresDatabase;
import dev.agentx.clarify.support.TestPostgres;
import java.nio.file.Files;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Every GitHub Mode end-to-end test again, with the repositories' ledgers, statuses and events in
 * a real PostgreSQL database (AGENTX_DATABASE_URL) instead of files under the data dir.
 */
@Tag("postgres")
class GitHubModeOnPostgresTest extends GitHubModeTest {
    private TestPostgres.Database db;

    @Override
    GitHubRig configure(GitHubRig rig) {
        db = TestPostgres.newDatabase();
        return rig.database(db.url());
    }

    @Override
    void assertNoDeliveryRecorded() {
        try (PostgresDatabase direct = PostgresDatabase.open(DatabaseUrl.parse(db.url(), Map.of()), 1)) {
            assertEquals(0, direct.deliveries("test", clock).recent(10).total(), "no delivery row");
        }
        assertFalse(Files.exists(rig.data.resolve("inbox")), "no inbox in the data dir");
    }

    /**
     * The question applied on this replica, its answer on another: the answer's comment is posted
     * only after the question's, though this replica's first attempt at the question failed and
     * its retry comes after the other replica is done with the answer.
     */
    @Test
    void theNextEntryOfAThreadAppliedOnAnotherReplicaIsPostedAfterTheEntryBefore() {
        rig.wiremock.stubFor(post(urlPathMatching(GitHubRig.API_REPO + "/issues/1/comments")).atPriority(1)
                .withRequestBody(com.github.tomakehurst.wiremock.client.WireMock.containing("Which DB?"))
                .inScenario("question").whenScenarioStateIs(com.github.tomakehurst.wiremock.stubbing.Scenario.STARTED)
                .willSetStateTo("failed once").willReturn(aResponse().withStatus(502)));
        GitHubMode other = rig.startReplica(dir.resolve("data-other"));
        assertEquals(202, rig.deliver("issue_comment", rig.comment("eng", 1, "/clarify @architect Which DB?"), "q-1")
                .status());
        assertEquals(1, rig.comments(1).size(), "the question's first attempt, which failed");
        assertEquals(202, rig.deliverTo(other, "issue_comment", rig.comment("arch", 1, "/clarify answer Postgres."),
                "a-1").status());
        assertEquals(2, rig.ledger(1).clarifications().get(0).thread().size(), "answered");
        assertEquals(1, rig.comments(1).size(), "the answer waits for the question");

        clock.advance(Duration.ofSeconds(11)); // the question's retry is due
        assertEquals(202, rig.deliver("issue_comment", rig.comment("rev", 2, "unrelated"), "u-1").status());
        assertEquals(202, rig.deliverTo(other, "issue_comment", rig.comment("rev", 2, "unrelated too"), "u-2")
                .status());
        List<String> comments = rig.comments(1);
        assertEquals(3, comments.size(), comments.toString());
        assertTrue(comments.get(1).contains("\"kind\":\"question\""), comments.get(1));
        assertTrue(comments.get(2).contains("\"kind\":\"answer\""), comments.get(2));
    }

    @Test
    void aMonitorPassThatDiesAfterMarkingAQuestionStaleLeavesItToTheNextPassWithItsNotice() {
        rig.close();
        java.util.concurrent.atomic.AtomicBoolean die = new java.util.concurrent.atomic.AtomicBoolean();
        rig = configure(new GitHubRig(dir.resolve("data-monitor"), clock)).monitor(repo -> {
            List<dev.agentx.clarify.routing.Outcome> outcomes = RepositoryMonitor.STANDARD.run(repo);
            if (!outcomes.isEmpty() && die.getAndSet(false)) {
                // as a process killed here: after the pass wrote its stale mark, before its notice was queued
                throw new IllegalStateException("killed");
            }
            return outcomes;
        });
        rig.start();
        assertEquals(202, rig.deliver("issue_comment", rig.comment("eng", 1, "/clarify @architect Which DB?"), "m-1")
                .status());
        assertEquals(1, rig.comments(1).size());

        die.set(true);
        clock.advance(Duration.ofMinutes(31)); // past the SLA: the next delivery's pass marks it stale
        assertEquals(202, rig.deliver("issue_comment", rig.comment("rev", 2, "unrelated"), "m-2").status());
        assertEquals(Status.PENDING, rig.ledger(1).clarifications().get(0).status(),
                "the mark went with the pass: marked without its notice, no later pass would post one");
        assertEquals(1, rig.comments(1).size());

        assertEquals(202, rig.deliver("issue_comment", rig.comment("rev", 2, "again"), "m-3").status());
        assertEquals(Status.STALE, rig.ledger(1).clarifications().get(0).status());
        assertEquals(202, rig.deliver("issue_comment", rig.comment("rev", 2, "and again"), "m-4").status());
        List<String> comments = rig.comments(1);
        assertEquals(2, comments.size(), comments.toString());
        assertTrue(comments.get(1).contains("\"kind\":\"stale\""), comments.get(1));
    }

    @Test
    void aDeliveryIsARowOfTheDatabaseAndNoFile() {
        assertEquals(202, rig.deliver("issue_comment", rig.comment("eng", 1, "/clarify @architect Which DB?"), "row-1")
                .status());
        try (PostgresDatabase direct = PostgresDatabase.open(DatabaseUrl.parse(db.url(), Map.of()), 1)) {
            var listing = direct.deliveries("test", clock).recent(10);
            assertEquals(1, listing.total());
            assertEquals("row-1", listing.rows().get(0).id());
            assertEquals("processed", listing.rows().get(0).state());
        }
        assertFalse(Files.exists(rig.data.resolve("inbox")), "the acknowledgement is the row: no inbox on disk");

        // agentx deliveries reads the table when the server's AGENTX_DATABASE_URL is set
        java.io.StringWriter out = new java.io.StringWriter();
        java.io.StringWriter err = new java.io.StringWriter();
        int code = dev.agentx.clarify.cli.Main.run(new String[] {"--json", "deliveries"}, new java.io.PrintWriter(out),
                new java.io.PrintWriter(err), Map.of("AGENTX_DATA_DIR", rig.data.toString(), "AGENTX_DATABASE_URL",
                        db.url()), dir, clock, false, c -> null);
        assertEquals(0, code, err.toString());
        assertTrue(out.toString().contains("\"total\" : 1") || out.toString().contains("\"total\":1"), out.toString());
        assertTrue(out.toString().contains("row-1") && out.toString().contains("processed"), out.toString());
        java.io.StringWriter text = new java.io.StringWriter();
        code = dev.agentx.clarify.cli.Main.run(new String[] {"deliveries", "--database-url", db.url()},
                new java.io.PrintWriter(text), new java.io.PrintWriter(err), Map.of(), dir, clock, false, c -> null);
        assertEquals(0, code, err.toString());
        assertTrue(text.toString().contains("row-1") && text.toString().contains("issue_comment"), text.toString());
    }

    @Test
    void aCommentAReplicaThatIsGoneClaimedAndDidNotPostIsPostedByAnother() {
        GitHubRig gone = new GitHubRig(dir.resolve("data-a"), clock).database(db.url());
        try {
            gone.start();
            gone.wiremock.stubFor(post(urlPathMatching(GitHubRig.API_REPO + "/issues/\\d+/comments")).atPriority(1)
                    .willReturn(aResponse().withStatus(502)));
            assertEquals(202, gone.deliver("issue_comment", gone.comment("eng", 1, "/clarify @architect Which DB?"),
                    "gone-1").status());
            assertEquals(1, gone.requests("POST", GitHubRig.API_REPO + "/issues/1/comments").size(),
                    "tried once, failed: claimed and not posted");
        } finally {
            gone.close(); // stops for good: its heartbeat goes with it
        }
        rig.mode().drain(); // the other replica's tick
        List<String> posted = rig.comments(1);
        assertEquals(1, posted.size(), posted.toString());
        assertTrue(posted.get(0).contains("Which DB?"), posted.get(0));
        assertEquals(2, rig.requests("GET", GitHubRig.API_REPO + "/issues/1/comments").size(),
                "looked for its tag first (the gone replica's attempt may have landed), and for a second copy after");
        rig.mode().drain();
        assertEquals(1, rig.comments(1).size(), "once");
    }

    /**
     * One transaction per delivery: the database fails the delivery's done mark once (as a crash
     * there would end it), after both commands of the comment ran. Nothing of that attempt
     * counts (no clarification, no status, no comment posted); the retry carries out each
     * command once and posts each question once.
     */
    /**
     * A transaction whose COMMIT reached the database while its answer did not (the connection
     * broke as the database stopped) claimed its effects for good, and this side, told it failed,
     * queued none of them; no other replica takes them over, this one being alive. After a failed
     * attempt the outbox looks for such claims of its own and posts each once, looking for its
     * comment on the issue first (it may have landed).
     */
    @Test
    void effectsClaimedHereByACommitThisSideSawFailArePostedOnce() throws Exception {
        String replica = Files.readString(rig.data.resolve("replica")).strip();
        String key = "Codertocat/Hello-World#7/CLR-7-001/0";
        String hash = java.util.HexFormat.of().formatHex(java.security.MessageDigest.getInstance("SHA-256")
                .digest(key.getBytes(java.nio.charset.StandardCharsets.UTF_8)), 0, 16);
        String effect = "{\"type\":\"comment\",\"key\":\"" + key + "\",\"installation\":"
                + 1 + ",\"repo\":{\"owner\":\"Codertocat\",\"name\":\"Hello-World\"},"
                + "\"issue\":7,\"body\":\"**Clarification CLR-7-001** committed, never queued\"}";
        try (PostgresDatabase direct = PostgresDatabase.open(DatabaseUrl.parse(db.url(), Map.of()), 1)) {
            direct.autoCommit(c -> {
                try (java.sql.PreparedStatement st = c.prepareStatement("INSERT INTO effect_claims (hash, replica, "
                        + "claimed_at, done, effect) VALUES (?, ?, now(), false, ?)")) {
                    st.setString(1, hash);
                    st.setString(2, replica);
                    st.setString(3, effect);
                    st.executeUpdate();
                }
                return null;
            });
            rig.mode().drain();
            assertEquals(0, rig.comments(7).size(), "claimed here while this replica runs: in no queue");

            // an attempt that fails in its transaction (here: before its done mark)
            direct.autoCommit(c -> {
                try (java.sql.Statement st = c.createStatement()) {
                    st.execute("CREATE FUNCTION fail_done_mark() RETURNS trigger AS $$ BEGIN "
                            + "IF NEW.state = 'processed' THEN RAISE EXCEPTION 'injected'; END IF; RETURN NEW; END $$ "
                            + "LANGUAGE plpgsql");
                    st.execute("CREATE TRIGGER fail_done_mark BEFORE UPDATE ON deliveries FOR EACH ROW "
                            + "EXECUTE FUNCTION fail_done_mark()");
                }
                return null;
            });
            assertEquals(202, rig.deliver("issue_comment", rig.comment("rev", 2, "unrelated")).status());
            rig.mode().drain();
        }
        List<String> posted = rig.comments(7);
        assertEquals(1, posted.size(), posted.toString());
        assertTrue(posted.get(0).contains("committed, never queued"), posted.get(0));
        assertTrue(rig.requests("GET", GitHubRig.API_REPO + "/issues/7/comments").size() >= 1,
                "looked for on the issue first: it may have landed");
        rig.mode().drain();
        assertEquals(1, rig.comments(7).size(), "once");
    }

    @Test
    void aDeliveryThatFailsBeforeItsDoneMarkCommitsNothingAndItsRetryCarriesOutEachCommandOnce() {
        try (PostgresDatabase direct = PostgresDatabase.open(DatabaseUrl.parse(db.url(), Map.of()), 1)) {
            direct.autoCommit(c -> {
                try (java.sql.Statement s = c.createStatement()) {
                    s.execute("CREATE SEQUENCE injected_failures");
                    s.execute("CREATE FUNCTION fail_first_done_mark() RETURNS trigger AS $$ BEGIN "
                            + "IF NEW.state = 'processed' AND nextval('injected_failures') = 1 THEN "
                            + "RAISE EXCEPTION 'injected: the delivery ends before its done mark'; END IF; "
                            + "RETURN NEW; END $$ LANGUAGE plpgsql");
                    s.execute("CREATE TRIGGER fail_first_done_mark BEFORE UPDATE ON deliveries FOR EACH ROW "
                            + "EXECUTE FUNCTION fail_first_done_mark()");
                }
                return null;
            });
            com.fasterxml.jackson.databind.node.ObjectNode twoAsks = rig.comment("eng", 1, """
                    /clarify @architect Which DB?
                    /clarify @architect Which cache?
                    """);
            long commentId = twoAsks.path("comment").path("id").asLong();
            assertEquals(202, rig.deliver("issue_comment", twoAsks, "tx-1").status());
            assertFalse(rig.hasLedger(1), "the failed attempt's clarifications were rolled back");
            assertFalse(direct.repository(GitHubRig.REPO.stateKey()).statuses().read().containsKey("engineer"),
                    "and the statuses they changed");
            assertEquals(0, rig.requests("POST", GitHubRig.API_REPO + "/issues/1/comments").size(),
                    "nothing posted for changes that did not commit");

            clock.advance(Duration.ofMinutes(2)); // past the retry's backoff
            rig.mode().drain();
            List<dev.agentx.clarify.protocol.ClarificationRecord> records = rig.ledger(1).clarifications();
            assertEquals(List.of("Which DB?", "Which cache?"), records.stream()
                    .map(r -> r.thread().get(0).body()).toList());
            assertEquals(List.of("comment/" + commentId + "/0", "comment/" + commentId + "/1"), records.stream()
                    .map(r -> r.thread().get(0).request()).toList());
            List<String> posted = rig.comments(1);
            assertEquals(2, posted.size(), posted.toString());
            assertTrue(posted.get(0).contains("Which DB?") && posted.get(1).contains("Which cache?"), posted.toString());
            assertEquals("processed", direct.deliveries("test", clock).recent(10).rows().get(0).state());
        }
    }

    @Test
    void theLedgerIsARowOfTheDatabaseAndNoFile() {
        assertEquals(202, rig.deliver("issue_comment", rig.comment("eng", 1, "/clarify @architect Which DB?")).status());
        assertEquals(Status.PENDING, rig.ledger(1).clarifications().get(0).status());
        assertFalse(Files.exists(dir.resolve("data/repos/186853002/.agentx/state/clarifications")),
                "no ledger file");
        try (PostgresDatabase direct = PostgresDatabase.open(DatabaseUrl.parse(db.url(), Map.of()), 1)) {
            assertEquals(java.util.List.of(GitHubRig.REPO.stateKey()), direct.repositories(), "kept by its id");
            assertEquals(Status.PENDING, direct.repository(GitHubRig.REPO.stateKey()).ledgers().read(1).orElseThrow()
                    .clarifications().get(0).status());
            assertTrue(direct.repository(GitHubRig.REPO.stateKey()).statuses().read().containsKey("engineer"));
        }
    }

    @Test
    void aRateLimitOneReplicaMetHoldsBackTheOtherReplicasEffectsForTheSameInstallation() {
        rig.wiremock.stubFor(post(urlPathMatching(GitHubRig.API_REPO + "/issues/\\d+/comments")).atPriority(1)
                .willReturn(aResponse().withStatus(429).withHeader("Retry-After", "120")));
        assertEquals(202, rig.deliver("issue_comment", rig.comment("eng", 1, "/clarify @architect Which DB?")).status());
        assertEquals(1, rig.requests("POST", GitHubRig.API_REPO + "/issues/1/comments").size(), "rate-limited");
        try (GitHubRig other = new GitHubRig(dir.resolve("data-b"), clock).database(db.url())) {
            other.start(); // a second replica on the same database, with a GitHub that would answer
            // its own delivery id: the rigs number theirs alike, and a repeated id is dropped as the other's
            assertEquals(202, other.deliver("issue_comment", other.comment("eng", 2, "/clarify @architect Which "
                    + "queue?"), "replica-b-1").status());
            other.mode().drain();
            assertEquals(List.of(), other.comments(2), "the installation's budget is spent for every replica");
            clock.advance(Duration.ofSeconds(110));
            other.mode().drain();
            assertEquals(List.of(), other.comments(2), "GitHub's Retry-After is not over yet");
            for (int i = 0; i < 3 && other.mode().pendingEffects() > 0; i++) {
                clock.advance(Duration.ofMinutes(11));
                other.mode().drain();
            }
            assertEquals(1, other.comments(2).size(), "posted once the limit is over");
        }
    }
}
