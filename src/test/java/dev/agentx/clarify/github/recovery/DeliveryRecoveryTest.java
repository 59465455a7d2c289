package dev.agentx.clarify.github.recovery;

import static com.github.tomakehurst.wiremock.client.WireMock.aResponse;
import static com.github.tomakehurst.wiremock.client.WireMock.get;
import static com.github.tomakehurst.wiremock.client.WireMock.getRequestedFor;
import static com.github.tomakehurst.wiremock.client.WireMock.post;
import static com.github.tomakehurst.wiremock.client.WireMock.postRequestedFor;
import static com.github.tomakehurst.wiremock.client.WireMock.urlPathEqualTo;
import static com.github.tomakehurst.wiremock.client.WireMock.urlPathMatching;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.github.tomakehurst.wiremock.client.WireMock;
import dev.agentx.clarify.github.api.Hub4jGateway;
import dev.agentx.clarify.github.auth.AppJwt;
import dev.agentx.clarify.github.support.GitHubRig;
import dev.agentx.clarify.github.support.Keys;
import dev.agentx.clarify.metrics.ServerMetrics;
import dev.agentx.clarify.support.MutableClock;
import dev.agentx.clarify.support.TestPostgres;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.interfaces.RSAPrivateKey;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The recovery pass against WireMock serving GitHub's deliveries API in its documented shape: what
 * failed while the server was down is redelivered once and processed once; what the server did
 * receive (though GitHub lists it failed) and events the App ignores are left alone; paging is
 * followed; a second pass and a restart ask for nothing again.
 */
@Tag("postgres")
class DeliveryRecoveryTest {
    static final Path API = Path.of(System.getProperty("agentx.fixtures", "src/test/resources/fixtures"), "github-api");
    static final String RECEIVED = "0b989ba4-242f-11e5-81e1-c7b6966d2501";
    static final String MISSED = "0b989ba4-242f-11e5-81e1-c7b6966d2502";
    static final String CURSOR = "v1_12345003";

    @TempDir
    Path dir;
    GitHubRig rig;

    @BeforeEach
    void setUp() throws Exception {
        rig = new GitHubRig(dir.resolve("data"), MutableClock.at("2026-02-26T10:00:00Z"));
        rig.start();
        rig.wiremock.stubFor(get(urlPathEqualTo("/app/hook/deliveries")).withQueryParam("cursor", WireMock.absent())
                .willReturn(aResponse().withHeader("Content-Type", "application/json")
                        .withHeader("Link", "<" + rig.wiremock.baseUrl() + "/app/hook/deliveries?per_page=100&cursor="
                                + CURSOR + ">; rel=\"next\"")
                        .withBody(Files.readString(API.resolve("app-hook-deliveries.page-1.json")))));
        rig.wiremock.stubFor(get(urlPathEqualTo("/app/hook/deliveries")).withQueryParam("cursor", WireMock.equalTo(CURSOR))
                .willReturn(aResponse().withHeader("Content-Type", "application/json")
                        .withBody(Files.readString(API.resolve("app-hook-deliveries.page-2.json")))));
        rig.wiremock.stubFor(post(urlPathMatching("/app/hook/deliveries/\\d+/attempts"))
                .willReturn(aResponse().withStatus(202).withHeader("Content-Type", "application/json").withBody("{}")));
    }

    @AfterEach
    void tearDown() {
        rig.close();
    }

    private int attempts(long id) {
        return rig.wiremock.findAll(postRequestedFor(urlPathEqualTo("/app/hook/deliveries/" + id + "/attempts"))).size();
    }

    private int secondPages() {
        return rig.wiremock.findAll(getRequestedFor(urlPathEqualTo("/app/hook/deliveries"))
                .withQueryParam("cursor", WireMock.equalTo(CURSOR))).size();
    }

    @Test
    void whatFailedWhileDownIsRedeliveredOnceAndNothingElse() throws Exception {
        // received at the time, though GitHub lists it as failed (the 202 came late)
        assertEquals(202, rig.deliver("issue_comment", rig.comment("eng", 1, "/clarify @architect Which DB?"), RECEIVED)
                .status());

        DeliveryRecovery.Report first = rig.mode().recoverDeliveries();
        assertTrue(first.complete(), first.toString());
        assertEquals(2, first.requested(), first.toString());
        assertEquals(0, attempts(12345001), "received here: not asked for");
        assertEquals(1, attempts(12345002), "never received: asked for");
        assertEquals(0, attempts(12345003), "an event the App does not handle: left alone");
        assertEquals(1, attempts(12344004), "on the second page: paging followed");
        assertEquals(0, attempts(12340005), "older than GitHub keeps deliveries: not asked for");

        // GitHub redelivers it with its GUID: processed once
        assertEquals(202, rig.deliver("issue_comment", rig.comment("eng", 2, "/clarify @architect Which cache?"), MISSED)
                .status());
        assertEquals(1, rig.ledger(2).clarifications().size());
        assertEquals(200, rig.deliver("issue_comment", rig.comment("eng", 2, "/clarify @architect Which cache?"), MISSED)
                .status(), "a second redelivery is a duplicate");
        assertEquals(1, rig.ledger(2).clarifications().size());

        DeliveryRecovery.Report second = rig.mode().recoverDeliveries();
        assertEquals(0, second.requested(), "a second pass right after asks for nothing: " + second);
        assertEquals(1, attempts(12345002));
        assertEquals(1, attempts(12344004));

        int pagesBefore = secondPages();
        rig.start(); // a restart: the position is kept in the data dir
        DeliveryRecovery.Report afterRestart = rig.mode().recoverDeliveries();
        assertEquals(0, afterRestart.requested(), afterRestart.toString());
        assertEquals(pagesBefore, secondPages(), "what was checked is not rescanned");
        assertTrue(rig.metrics().contains("agentx_redelivery_requested_total"), "counted");

        // agentx deliveries, beside the running server, tells what became of each
        java.io.StringWriter out = new java.io.StringWriter();
        java.io.StringWriter err = new java.io.StringWriter();
        int code = dev.agentx.clarify.cli.Main.run(new String[] {"--json", "deliveries"}, new java.io.PrintWriter(out),
                new java.io.PrintWriter(err), java.util.Map.of("AGENTX_DATA_DIR", rig.data.toString()), dir, rig.clock,
                false, c -> null);
        assertEquals(0, code, err.toString());
        com.fasterxml.jackson.databind.JsonNode listed = rig.json.readTree(out.toString());
        java.util.Map<String, com.fasterxml.jackson.databind.JsonNode> byId = new java.util.HashMap<>();
        listed.get("deliveries").forEach(d -> byId.put(d.get("id").asText(), d));
        assertEquals("processed", byId.get(RECEIVED).get("state").asText());
        assertEquals(false, byId.get(RECEIVED).get("recovered").asBoolean());
        assertEquals("processed", byId.get(MISSED).get("state").asText());
        assertEquals(true, byId.get(MISSED).get("recovered").asBoolean(), "asked for by the recovery pass");
        assertEquals("issue_comment", byId.get(MISSED).get("event").asText());
    }

    private DeliveryRecovery recovery(ServerMetrics metrics) {
        return new DeliveryRecovery(new Hub4jGateway(rig.wiremock.baseUrl(),
                new AppJwt(String.valueOf(GitHubRig.APP_ID), (RSAPrivateKey) Keys.PAIR.getPrivate(), rig.clock),
                rig.clock, metrics), guid -> false, dev.agentx.clarify.store.RecoveryPosition.file(dir.resolve("recovery.json")), rig.clock,
                metrics, attempt -> { });
    }

    @Test
    void aRedeliveryGitHubFailsIsRetriedABoundedNumberOfTimesThenCountedAndAskedForAgainByTheNextPass() {
        rig.wiremock.stubFor(post(urlPathEqualTo("/app/hook/deliveries/12345002/attempts")).atPriority(1)
                .willReturn(aResponse().withStatus(500).withBody("{\"message\":\"Server Error\"}")));
        DeliveryRecovery recovery = recovery(ServerMetrics.create());
        DeliveryRecovery.Report r = recovery.pass();
        assertEquals(DeliveryRecovery.ATTEMPTS, attempts(12345002), "tried, then given up");
        assertEquals(1, r.failed(), r.toString());
        assertEquals(2, r.requested(), "the others still asked for: " + r);

        rig.clock.advance(java.time.Duration.ofMinutes(10)); // the next pass, GitHub up again
        rig.wiremock.stubFor(post(urlPathEqualTo("/app/hook/deliveries/12345002/attempts")).atPriority(1)
                .willReturn(aResponse().withStatus(202).withBody("{}")));
        DeliveryRecovery.Report next = recovery.pass();
        assertEquals(1, next.requested(), "asked for again: " + next);
        assertEquals(DeliveryRecovery.ATTEMPTS + 1, attempts(12345002));
        assertEquals(1, attempts(12344004), "what was asked for is not asked for again within the hour");
    }

    @Test
    void aRedeliveryGitHubRefusesIsNotAskedForAgain() {
        rig.wiremock.stubFor(post(urlPathEqualTo("/app/hook/deliveries/12345002/attempts")).atPriority(1)
                .willReturn(aResponse().withStatus(422).withBody("{\"message\":\"Validation Failed\"}")));
        DeliveryRecovery recovery = recovery(ServerMetrics.create());
        assertEquals(1, recovery.pass().failed());
        assertEquals(1, attempts(12345002), "a refusal is not retried");
        rig.clock.advance(java.time.Duration.ofMinutes(10));
        DeliveryRecovery.Report next = recovery.pass();
        assertEquals(0, next.requested() + next.failed(), next.toString());
        assertEquals(1, attempts(12345002), "nor asked for by the next pass");
    }

    /**
     * A pass resumes from the oldest delivery whose redelivery failed for now, and so lists again
     * the newer ones it saw; one GitHub refused among them is still not asked for again.
     */
    @Test
    void aRefusalIsNotAskedForAgainWhenThePassResumesFromAnOlderFailure() {
        rig.wiremock.stubFor(post(urlPathEqualTo("/app/hook/deliveries/12345002/attempts")).atPriority(1)
                .willReturn(aResponse().withStatus(422).withBody("{\"message\":\"Validation Failed\"}")));
        rig.wiremock.stubFor(post(urlPathEqualTo("/app/hook/deliveries/12344004/attempts")).atPriority(1)
                .willReturn(aResponse().withStatus(502).withBody("{\"message\":\"Bad Gateway\"}")));
        DeliveryRecovery recovery = recovery(ServerMetrics.create());
        assertEquals(2, recovery.pass().failed());
        for (int pass = 0; pass < 3; pass++) {
            rig.clock.advance(java.time.Duration.ofMinutes(10));
            DeliveryRecovery.Report next = recovery.pass();
            assertEquals(1, next.failed(), "only the older one fails again: " + next);
        }
        assertEquals(1, attempts(12345002), "the refused one was asked for once");
        assertEquals(4 * DeliveryRecovery.ATTEMPTS, attempts(12344004), "the failing one at every pass");
    }

    /**
     * On PostgreSQL where the passes stopped is shared: a server moved from files goes on from its
     * data dir's file, and a replica with a data dir of its own taking the pass over goes on from
     * there too, asking for nothing again; agentx deliveries on any replica tells what was recovered.
     */
    @Test
    void onPostgresTheNextPassGoesOnFromTheLastPassOfAnyReplica() throws Exception {
        DeliveryRecovery.Report onFiles = rig.mode().recoverDeliveries();
        assertEquals(3, onFiles.requested(), "none received here yet: " + onFiles);
        assertTrue(Files.exists(rig.data.resolve("recovery.json")));
        int pages = secondPages();

        TestPostgres.Database db = TestPostgres.newDatabase();
        rig.database(db.url()).start(); // moved: the database has no recovery note yet
        rig.clock.advance(java.time.Duration.ofMinutes(10));
        DeliveryRecovery.Report moved = rig.mode().recoverDeliveries();
        assertEquals(0, moved.requested() + moved.failed(), "went on from the data dir's file: " + moved);
        assertEquals(pages, secondPages(), "what was checked on files is not rescanned");

        Path otherData = dir.resolve("other-data");
        dev.agentx.clarify.github.GitHubMode other = rig.startReplica(otherData);
        rig.clock.advance(java.time.Duration.ofMinutes(10));
        DeliveryRecovery.Report taken = other.recoverDeliveries();
        assertEquals(0, taken.requested() + taken.failed(), "went on from the other replica's pass: " + taken);
        assertEquals(pages, secondPages(), "what another replica checked is not rescanned");
        assertEquals(1, attempts(12345002));
        assertTrue(!Files.exists(otherData.resolve("recovery.json")), "kept in the database, not the data dir");

        // GitHub redelivers it to the other replica; its data dir knows nothing of the pass that asked for it
        assertEquals(202, rig.deliverTo(other, "issue_comment", rig.comment("eng", 2, "/clarify @architect Which cache?"),
                MISSED).status());
        java.io.StringWriter out = new java.io.StringWriter();
        java.io.StringWriter err = new java.io.StringWriter();
        int code = dev.agentx.clarify.cli.Main.run(new String[] {"--json", "deliveries", "--database-url", db.url()},
                new java.io.PrintWriter(out), new java.io.PrintWriter(err), java.util.Map.of("AGENTX_DATA_DIR",
                        otherData.toString()), dir, rig.clock, false, c -> null);
        assertEquals(0, code, err.toString());
        boolean recovered = false;
        for (com.fasterxml.jackson.databind.JsonNode d : rig.json.readTree(out.toString()).get("deliveries")) {
            recovered |= d.get("id").asText().equals(MISSED) && d.get("recovered").asBoolean();
        }
        assertTrue(recovered, "asked for by the first replica's pass: " + out);
    }
}
