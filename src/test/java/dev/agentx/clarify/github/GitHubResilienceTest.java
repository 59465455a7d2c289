package dev.agentx.clarify.github;

import com.fasterxml.jackson.databind.node.ObjectNode;
import com.github.tomakehurst.wiremock.stubbing.Scenario;
import dev.agentx.clarify.github.support.GitHubRig;
import dev.agentx.clarify.protocol.ClarificationRecord;
import dev.agentx.clarify.protocol.Status;
import dev.agentx.clarify.routing.Outcome;
import dev.agentx.clarify.store.DeliveryQueue;
import dev.agentx.clarify.store.files.FileDeliveryQueue;
import dev.agentx.clarify.support.MutableClock;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import static com.github.tomakehurst.wiremock.client.WireMock.aResponse;
import static com.github.tomakehurst.wiremock.client.WireMock.get;
import static com.github.tomakehurst.wiremock.client.WireMock.okJson;
import static com.github.tomakehurst.wiremock.client.WireMock.post;
import static com.github.tomakehurst.wiremock.client.WireMock.urlPathEqualTo;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Outages, rate limits, restarts and the monitor hook: nothing lost, nothing posted twice. */
class GitHubResilienceTest {
    private static final String COMMENTS = GitHubRig.API_REPO + "/issues/1/comments";

    @TempDir
    Path dir;
    MutableClock clock;
    GitHubRig rig;

    @BeforeEach
    void setUp() {
        clock = MutableClock.at("2026-02-26T10:00:00Z");
        rig = new GitHubRig(dir.resolve("data"), clock);
    }

    @AfterEach
    void tearDown() {
        rig.close();
    }

    private void ping() {
        assertEquals(202, rig.deliver("ping", rig.fixture("ping.with-app_id")).status());
    }

    private int commentPosts() {
        return rig.requests("POST", COMMENTS).size();
    }

    private void failFirstCommentWith(int status, String header, String value) {
        var response = aResponse().withStatus(status).withHeader("Content-Type", "application/json")
                .withBody("{\"message\":\"try later\"}");
        if (header != null) {
            response = response.withHeader(header, value);
        }
        rig.wiremock.stubFor(post(urlPathEqualTo(COMMENTS)).atPriority(1).inScenario("outage")
                .whenScenarioStateIs(Scenario.STARTED).willReturn(response).willSetStateTo("up"));
        rig.wiremock.stubFor(post(urlPathEqualTo(COMMENTS)).atPriority(1).inScenario("outage")
                .whenScenarioStateIs("up").willReturn(aResponse().withStatus(201)
                        .withHeader("Content-Type", "application/json").withBody("{\"id\":778}")));
    }

    @Test
    void serverErrorThenRecoveryPostsExactlyOnce() {
        rig.start();
        failFirstCommentWith(500, null, null);
        assertEquals(202, rig.deliver("issue_comment", rig.comment("eng", 1, "/clarify @architect Q?")).status());
        assertEquals(Status.PENDING, rig.ledger(1).clarifications().get(0).status(), "the ledger is written first");
        assertEquals(1, commentPosts());
        assertEquals(3, rig.mode().pendingEffects(), "question, reaction and labels wait, in order");
        assertEquals(0, rig.reactions().size(), "later effects of the issue are held back");

        ping();
        assertEquals(1, commentPosts(), "not before the backoff");
        clock.advance(Duration.ofSeconds(11));
        ping();
        assertEquals(2, commentPosts());
        assertEquals(2, rig.requests("GET", COMMENTS).size(),
                "looked for an earlier landing first, and for a second copy after posting");
        assertEquals(0, rig.mode().pendingEffects());
        assertEquals(1, rig.reactions().size());

        clock.advance(Duration.ofMinutes(5));
        ping();
        rig.mode().drain();
        assertEquals(2, commentPosts(), "nothing posted again");
    }

    @Test
    void aCommentThatLandedDespiteTheErrorIsNotPostedAgain() {
        rig.start();
        failFirstCommentWith(502, null, null);
        rig.deliver("issue_comment", rig.comment("eng", 1, "/clarify @architect Q?"));
        String first = rig.comments(1).get(0);
        String tag = first.substring(0, first.indexOf("-->") + 3);
        rig.wiremock.stubFor(get(urlPathEqualTo(COMMENTS)).atPriority(1).willReturn(okJson(
                "[{\"id\":5,\"body\":" + rig.json.valueToTree(first) + "}]")));
        clock.advance(Duration.ofSeconds(11));
        ping();
        assertEquals(1, commentPosts());
        assertTrue(tag.startsWith("<!-- agentx-effect:"), tag);
        assertEquals(0, rig.mode().pendingEffects());
    }

    @Test
    void rateLimitWaitsWhatGitHubSays() {
        rig.start();
        failFirstCommentWith(429, "Retry-After", "120");
        rig.deliver("issue_comment", rig.comment("eng", 1, "/clarify @architect Q?"));
        assertEquals(1, commentPosts());
        clock.advance(Duration.ofSeconds(60));
        ping();
        assertEquals(1, commentPosts(), "Retry-After: 120 is honoured");
        clock.advance(Duration.ofSeconds(61));
        ping();
        assertEquals(2, commentPosts());
        assertEquals(0, rig.requests("GET", COMMENTS).size(), "a 429 was not carried out: no need to look");
        assertEquals(0, rig.mode().pendingEffects());
    }

    @Test
    void primaryRateLimitWaitsForTheReset() {
        rig.start();
        long reset = clock.instant().plusSeconds(300).getEpochSecond();
        var response = aResponse().withStatus(403).withHeader("Content-Type", "application/json")
                .withHeader("X-RateLimit-Remaining", "0").withHeader("X-RateLimit-Reset", String.valueOf(reset))
                .withBody("{\"message\":\"API rate limit exceeded\"}");
        rig.wiremock.stubFor(post(urlPathEqualTo(COMMENTS)).atPriority(1).inScenario("limit")
                .whenScenarioStateIs(Scenario.STARTED).willReturn(response).willSetStateTo("ok"));
        rig.deliver("issue_comment", rig.comment("eng", 1, "/clarify @architect Q?"));
        clock.advance(Duration.ofSeconds(200));
        ping();
        assertEquals(1, commentPosts());
        clock.advance(Duration.ofSeconds(101));
        ping();
        assertEquals(2, commentPosts());
    }

    @Test
    void deliveriesLeftInTheInboxAreProcessedAfterRestart() {
        // a crash after the 202 and before processing: the delivery is only in the inbox
        FileDeliveryQueue inbox = new FileDeliveryQueue(rig.data.resolve("inbox"), clock);
        ObjectNode c = rig.comment("eng", 1, "/clarify @architect First?\n/clarify @pm Second?");
        inbox.accept("crashed-1", "issue_comment", rig.bytes(c), dev.agentx.clarify.github.Payloads.orderKey(c));
        // a second one whose first command was already carried out before the crash
        rig.start().close();
        ObjectNode d = rig.comment("eng", 2, "/clarify @architect Done before?\n/clarify @pm Not yet?");
        inbox = new FileDeliveryQueue(rig.data.resolve("inbox"), clock);
        inbox.accept("crashed-2", "issue_comment", rig.bytes(d), dev.agentx.clarify.github.Payloads.orderKey(d));
        inbox.saveProgress(inbox.queued().get(0), new DeliveryQueue.Progress(1, false, 0, null));

        rig.start();
        assertEquals(2, rig.ledger(1).clarifications().size());
        List<ClarificationRecord> two = rig.ledger(2).clarifications();
        assertEquals(1, two.size(), "the command done before the crash is not run again");
        assertEquals("product-manager", two.get(0).to());
        assertEquals(0, rig.mode().pendingDeliveries());
        assertEquals(200, rig.deliver("issue_comment", c, "crashed-1").status(), "still known as seen");
    }

    /**
     * A delivery's "done" record is written without an fdatasync of its own. Should a machine crash
     * lose it (simulated: the record cut off the inbox journal while the server is down), the
     * delivery is processed again at start: its command is not carried out again and nothing is
     * posted twice.
     */
    @Test
    void aDeliveryWhoseDoneRecordACrashLostIsProcessedAgainWithoutRepeatingAnything() {
        rig.start();
        ObjectNode comment = rig.comment("eng", 1, "/clarify @architect Q?");
        assertEquals(202, rig.deliver("issue_comment", comment, "lost-done-1").status());
        assertEquals(202, rig.deliver("issues", rig.labeled("eng", 2, "clarify:architect"), "lost-done-2").status());
        assertEquals(0, rig.mode().pendingDeliveries());
        int effects = effectRequests();
        assertEquals(6, effects, "question, labels and reaction on issue 1; question, labels and the trigger's "
                + "removal on issue 2");
        rig.mode().close();

        assertEquals(2, cut(rig.data.resolve("inbox/journal"), "done"), "the two deliveries' done records");
        // nor is what was written after them and depends on them on disk: the worker forgets a
        // delivery's progress note only once the inbox's sync has made its done record durable
        assertEquals(2, cut(rig.data.resolve("outbox/journal"), "forget"), "the two deliveries' progress forgotten");

        rig.start();
        assertEquals(0, rig.mode().pendingDeliveries(), "both processed again");
        assertEquals(1, rig.ledger(1).clarifications().size(), "the comment's command ran once");
        assertEquals(1, rig.ledger(2).clarifications().size(), "the label's question was asked once");
        assertEquals(effects, effectRequests(), "nothing posted, labeled or removed again");
        assertEquals(200, rig.deliver("issue_comment", comment, "lost-done-1").status(), "still known as seen");
    }

    /** Removes the journal's records of {@code op} (what a machine crash lost); returns how many. */
    private static int cut(Path file, String op) {
        try (dev.agentx.clarify.files.Journal journal = new dev.agentx.clarify.files.Journal(file)) {
            int before = journal.records().size();
            journal.compact(all -> all.stream().filter(r -> !new String(r, java.nio.charset.StandardCharsets.UTF_8)
                    .contains("\"op\":\"" + op + "\"")).toList());
            return before - journal.records().size();
        }
    }

    /** Requests that change something on GitHub (not the installation token's). */
    private int effectRequests() {
        return rig.requests("POST", "/repos/.*").size() + rig.requests("DELETE", "/repos/.*").size();
    }

    /**
     * The command has written the ledger, then bringing the issue in step fails (here: the mirror's
     * state cannot be read, a directory stands where a state file of {@code agentx sync} would be;
     * on a server: a full disk). The retry must not carry the command
     * out again: a comment's commands and a trigger label alike.
     */
    @Test
    void aCommandIsNotCarriedOutAgainWhenTheStepAfterItFails() throws Exception {
        rig.start();
        Path state = rig.mode().repository(GitHubRig.REPO).root().resolve(".agentx/state/github");
        java.nio.file.Files.createDirectories(state.resolve("issue-1.json").resolve("in-the-way"));
        java.nio.file.Files.createDirectories(state.resolve("issue-2.json").resolve("in-the-way"));
        assertEquals(202, rig.deliver("issue_comment", rig.comment("eng", 1, "/clarify @architect Q?")).status());
        assertEquals(202, rig.deliver("issues", rig.labeled("eng", 2, "clarify:architect")).status());
        assertEquals(2, rig.mode().pendingDeliveries(), "both failed after their command and wait for a retry");
        assertEquals(1, rig.ledger(1).clarifications().size());
        assertEquals(1, rig.ledger(2).clarifications().size());

        for (String name : List.of("issue-1.json", "issue-2.json")) {
            java.nio.file.Files.delete(state.resolve(name).resolve("in-the-way"));
            java.nio.file.Files.delete(state.resolve(name));
        }
        clock.advance(Duration.ofSeconds(11));
        ping();
        rig.mode().drain();
        assertEquals(0, rig.mode().pendingDeliveries());
        assertEquals(1, rig.ledger(1).clarifications().size(), "the comment's command ran once");
        assertEquals(1, rig.ledger(2).clarifications().size(), "the label's question was asked once");
        assertEquals(1, commentPosts(), "the question on issue 1 is posted once");
        assertEquals(1, rig.requests("POST", GitHubRig.API_REPO + "/issues/2/comments").size());
    }

    @Test
    void effectsLeftInTheOutboxGoOutAfterRestart() {
        rig.start();
        failFirstCommentWith(500, null, null);
        rig.deliver("issue_comment", rig.comment("eng", 1, "/clarify @architect Q?"));
        assertEquals(3, rig.mode().pendingEffects());
        clock.advance(Duration.ofMinutes(1));
        rig.start();
        assertEquals(0, rig.mode().pendingEffects());
        assertEquals(2, commentPosts());
    }

    @Test
    void theMonitorRunsOnEveryEventAndItsActionsArePosted() {
        List<Path> roots = new ArrayList<>();
        rig.monitor(repo -> {
            roots.add(repo.root());
            List<Outcome> out = new ArrayList<>();
            for (int issue : repo.ledgers().issues()) {
                for (ClarificationRecord r : repo.ledgers().read(issue).orElseThrow().active()) {
                    Outcome o = null;
                    if (r.status() == Status.PENDING && !clock.instant().isBefore(r.staleAfter())) {
                        o = repo.engine().markStale(r.id());
                    } else if (r.status() == Status.STALE) {
                        o = repo.engine().escalateByHub(r.id(), "no answer within the SLA", x -> true);
                    }
                    if (o != null) {
                        out.add(o);
                    }
                }
            }
            return out;
        });
        rig.start();
        rig.deliver("issue_comment", rig.comment("eng", 1, "/clarify @architect Q?"));
        assertEquals(List.of(rig.data.resolve("repos/186853002")), roots);
        assertEquals(1, rig.comments(1).size());

        clock.advance(Duration.ofMinutes(31));
        ping(); // no repository installation: the monitor needs an issue event of the repository
        rig.deliver("issues", rig.issueEvent("edited", "eng", 1));
        assertEquals(2, roots.size());
        List<String> comments = rig.comments(1);
        assertEquals(2, comments.size());
        assertTrue(comments.get(1).contains("\"kind\":\"stale\"") && comments.get(1).contains("@arch"), comments.get(1));

        rig.deliver("issues", rig.issueEvent("edited", "eng", 1));
        assertEquals(3, roots.size());
        assertEquals(Status.ESCALATED, rig.ledger(1).clarifications().get(0).status());
        String last = rig.comments(1).get(rig.comments(1).size() - 1);
        assertTrue(last.contains("\"kind\":\"escalation\"") && last.contains("no answer within the SLA"), last);
    }
}
