package dev.agentx.clarify.github;

import static com.github.tomakehurst.wiremock.client.WireMock.aResponse;
import static com.github.tomakehurst.wiremock.client.WireMock.delete;
import static com.github.tomakehurst.wiremock.client.WireMock.get;
import static com.github.tomakehurst.wiremock.client.WireMock.okJson;
import static com.github.tomakehurst.wiremock.client.WireMock.post;
import static com.github.tomakehurst.wiremock.client.WireMock.urlPathMatching;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.github.tomakehurst.wiremock.stubbing.StubMapping;
import dev.agentx.clarify.github.support.GitHubRig;
import dev.agentx.clarify.protocol.ClarificationRecord;
import dev.agentx.clarify.protocol.Ledger;
import dev.agentx.clarify.support.MutableClock;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A repository's whole life, with GitHub's own payloads: its state follows GitHub's id of it. A
 * rename or a transfer (the event, or only a delivery under the new name) keeps its threads and
 * clarification ids, and what was queued before goes to the new name; a new repository under a
 * reused name gets state of its own at once; a name in another case is the same repository. While
 * its installation is deleted or suspended, or it is archived or taken out of the installation,
 * nothing is posted there: what is queued waits, goes out when it comes back, and is dropped after
 * GitHub's retention.
 */
class RepositoryLifeTest {
    static final RepoRef REPO = GitHubRig.REPO;
    static final String UNIVERSE = "/repos/Codertocat/Hello-Universe";
    @TempDir
    Path dir;
    GitHubRig rig;

    /** The rig as this class's tests run it (on files; on PostgreSQL in the subclass). */
    GitHubRig configure(GitHubRig rig) {
        return rig;
    }

    @BeforeEach
    void start() {
        rig = configure(new GitHubRig(dir.resolve("data"), MutableClock.at("2026-02-26T10:00:00Z")));
        anyRepository();
        rig.start();
    }

    @AfterEach
    void tearDown() {
        if (rig != null) {
            rig.close();
        }
    }

    /** GitHub answers the App's writes for any repository as it does for the rig's. */
    private void anyRepository() {
        String repo = "/repos/[^/]+/[^/]+";
        rig.wiremock.stubFor(post(urlPathMatching(repo + "/issues/\\d+/comments")).atPriority(5).willReturn(aResponse()
                .withStatus(201).withHeader("Content-Type", "application/json").withBody("{\"id\": 778}")));
        rig.wiremock.stubFor(get(urlPathMatching(repo + "/issues/\\d+/comments")).atPriority(5).willReturn(okJson("[]")));
        rig.wiremock.stubFor(post(urlPathMatching(repo + "/issues/(comments/)?\\d+/reactions")).atPriority(5)
                .willReturn(aResponse().withStatus(201).withHeader("Content-Type", "application/json")
                        .withBody("{\"id\":3,\"content\":\"+1\"}")));
        rig.wiremock.stubFor(post(urlPathMatching(repo + "/issues/\\d+/labels")).atPriority(5).willReturn(okJson("[]")));
        rig.wiremock.stubFor(delete(urlPathMatching(repo + "/issues/\\d+/labels/.+")).atPriority(5)
                .willReturn(okJson("[]")));
    }

    /** A comment by {@code login} on issue {@code issue} of the repository {@code owner/name} with GitHub's id {@code id}. */
    private ObjectNode comment(String login, int issue, String body, String owner, String name, long id) {
        ObjectNode p = rig.comment(login, issue, body);
        name(p, owner, name, id);
        return p;
    }

    private static void name(ObjectNode p, String owner, String name, long id) {
        ObjectNode r = (ObjectNode) p.get("repository");
        r.put("id", id);
        r.put("name", name);
        r.put("full_name", owner + "/" + name);
        ((ObjectNode) r.get("owner")).put("login", owner);
    }

    /** GitHub's {@code fixture} for the rig's repository (its id), now named {@code owner/name}, as installation 1. */
    private ObjectNode event(String fixture, String owner, String name) {
        ObjectNode p = rig.fixture(fixture);
        name(p, owner, name, REPO.id());
        p.putObject("installation").put("id", 1);
        return p;
    }

    private Ledger ledger(String owner, String name, int issue) {
        return rig.mode().repository(new RepoRef(owner, name)).ledgers().read(issue)
                .orElseThrow(() -> new AssertionError("no ledger " + owner + "/" + name + "#" + issue));
    }

    private static List<String> ids(Ledger l) {
        return l.clarifications().stream().map(ClarificationRecord::id).toList();
    }

    /** Bodies of the comments GitHub accepted (201) at {@code apiRepo} on the issue. */
    private List<String> posted(String apiRepo, int issue) {
        return rig.wiremock.getAllServeEvents().stream()
                .filter(e -> e.getRequest().getMethod().getName().equals("POST")
                        && e.getRequest().getUrl().equals(apiRepo + "/issues/" + issue + "/comments")
                        && e.getResponse().getStatus() == 201)
                .map(e -> text(e.getRequest().getBodyAsString())).toList();
    }

    private String text(String json) {
        try {
            return rig.json.readTree(json).path("body").asText();
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    /** The keys the store holds repositories' state under: the folders under repos/ (PostgreSQL: the rows' keys). */
    List<String> stateFolders() throws Exception {
        try (Stream<Path> keys = Files.list(rig.data.resolve("repos"))) {
            return keys.filter(p -> Files.isDirectory(p.resolve(".agentx/state")))
                    .map(p -> p.getFileName().toString()).sorted().toList();
        }
    }

    @Test
    void aRenamedRepositoryKeepsItsThreadAndIdsUnderItsNewName() throws Exception {
        assertEquals(202, rig.deliver("issue_comment", rig.comment("eng", 60, "/clarify @architect Which cache?"))
                .status());
        assertEquals(202, rig.deliver("repository", event("repository.renamed.with-installation", "Codertocat",
                "Hello-Universe")).status());

        assertEquals(202, rig.deliver("issue_comment", comment("eng", 60, "/clarify @architect And which queue?",
                "Codertocat", "Hello-Universe", REPO.id())).status());
        assertEquals(202, rig.deliver("issue_comment", comment("arch", 60, "/clarify answer CLR-60-001 Redis.",
                "Codertocat", "Hello-Universe", REPO.id())).status());

        Ledger l = ledger("Codertocat", "Hello-Universe", 60);
        assertEquals(List.of("CLR-60-001", "CLR-60-002"), ids(l), "the ids go on counting");
        assertEquals(2, l.clarifications().get(0).thread().size(), "the first thread goes on");
        assertTrue(posted(UNIVERSE, 60).stream().anyMatch(c -> c.contains("CLR-60-002")), posted(UNIVERSE, 60)
                .toString());
        assertTrue(posted(UNIVERSE, 60).stream().anyMatch(c -> c.contains("Redis.")), posted(UNIVERSE, 60).toString());
        assertTrue(posted(GitHubRig.API_REPO, 60).stream().noneMatch(c -> c.contains("CLR-60-002")));
        assertEquals(List.of(String.valueOf(REPO.id())), stateFolders(), "one state, under the repository's id");
        assertEquals("Hello-Universe", rig.mode().names().record(REPO.id()).orElseThrow().name());
    }

    @Test
    void aRenameSeenOnlyInADeliveryUnderTheNewNameIsFollowedToo() throws Exception {
        rig.deliver("issue_comment", rig.comment("eng", 63, "/clarify @architect Which cache?"));
        // no repository.renamed delivered (missed, or the App not subscribed when it happened)
        rig.deliver("issue_comment", comment("eng", 63, "/clarify @architect And which queue?", "Codertocat",
                "Hello-Universe", REPO.id()));
        assertEquals(List.of("CLR-63-001", "CLR-63-002"), ids(ledger("Codertocat", "Hello-Universe", 63)));
        assertTrue(posted(UNIVERSE, 63).stream().anyMatch(c -> c.contains("CLR-63-002")));
    }

    @Test
    void whatWasQueuedBeforeARenameIsPostedUnderTheNewName() {
        StubMapping down = rig.wiremock.stubFor(post(urlPathMatching(GitHubRig.API_REPO + "/issues/\\d+/comments"))
                .atPriority(1).willReturn(aResponse().withStatus(503)));
        rig.deliver("issue_comment", rig.comment("eng", 64, "/clarify @architect Which cache?"));
        assertEquals(List.of(), posted(GitHubRig.API_REPO, 64), "GitHub was down: the question waits in the outbox");

        rig.deliver("repository", event("repository.renamed.with-installation", "Codertocat", "Hello-Universe"));
        rig.wiremock.removeStub(down);
        rig.clock.advance(Duration.ofMinutes(1));
        rig.mode().drain();

        assertTrue(posted(UNIVERSE, 64).stream().anyMatch(c -> c.contains("Which cache?")), posted(UNIVERSE, 64)
                .toString());
        assertEquals(List.of(), posted(GitHubRig.API_REPO, 64), "nothing under the old name");
        assertEquals(0, rig.mode().pendingEffects());
    }

    @Test
    void aTransferredRepositoryKeepsItsThreadUnderItsNewOwner() {
        rig.deliver("issue_comment", rig.comment("eng", 65, "/clarify @architect Which cache?"));
        ObjectNode transferred = rig.fixture("repository.transferred.with-installation");
        JsonNode r = transferred.get("repository");
        String owner = r.path("owner").path("login").asText();
        String name = r.path("name").asText();
        ((ObjectNode) transferred.get("repository")).put("id", REPO.id());
        transferred.putObject("installation").put("id", 1);
        assertEquals(202, rig.deliver("repository", transferred).status());

        rig.deliver("issue_comment", comment("arch", 65, "/clarify answer CLR-65-001 Redis.", owner, name, REPO.id()));
        Ledger l = ledger(owner, name, 65);
        assertEquals(2, l.clarifications().get(0).thread().size());
        assertTrue(posted("/repos/" + owner + "/" + name, 65).stream().anyMatch(c -> c.contains("Redis.")),
                "posted under the new owner");
    }

    @Test
    void aNewRepositoryUnderAReusedNameGetsStateOfItsOwnAtOnce() throws Exception {
        rig.deliver("issue_comment", rig.comment("eng", 61, "/clarify @architect A private question?"));
        rig.deliver("repository", event("repository.renamed.with-installation", "Codertocat", "Hello-Universe"));

        // a new repository created under the old name: another id
        long newId = 999_999_001L;
        assertEquals(202, rig.deliver("issue_comment", comment("eng", 61, "/clarify @architect Another?", "Codertocat",
                "Hello-World", newId)).status());

        Ledger fresh = ledger("Codertocat", "Hello-World", 61);
        assertEquals(List.of("CLR-61-001"), ids(fresh), "the new repository's own first clarification");
        assertEquals("Another?", fresh.clarifications().get(0).thread().get(0).body());
        Ledger old = ledger("Codertocat", "Hello-Universe", 61);
        assertEquals("A private question?", old.clarifications().get(0).thread().get(0).body());
        assertEquals(1, old.clarifications().size(), "the first one's thread is untouched");
        assertTrue(posted(GitHubRig.API_REPO, 61).stream().anyMatch(c -> c.contains("Another?")),
                "the new repository's question is posted at once: " + posted(GitHubRig.API_REPO, 61));
        assertEquals(List.of(String.valueOf(REPO.id()), String.valueOf(newId)), stateFolders());
    }

    @Test
    void aRepositorySpeltInAnotherCaseIsTheSameRepository() throws Exception {
        rig.deliver("issue_comment", rig.comment("eng", 66, "/clarify @architect Which cache?"));
        rig.deliver("issue_comment", comment("eng", 66, "/clarify @architect And which queue?", "CODERTOCAT",
                "HELLO-world", REPO.id()));
        assertEquals(List.of("CLR-66-001", "CLR-66-002"), ids(rig.ledger(66)), "one ledger, ids issued once");
        assertEquals(List.of(String.valueOf(REPO.id())), stateFolders());
    }

    /** A question on {@code issue} that GitHub did not take (503): it waits in the outbox. */
    private StubMapping queuedQuestion(int issue) {
        StubMapping down = rig.wiremock.stubFor(post(urlPathMatching(GitHubRig.API_REPO + "/issues/\\d+/comments"))
                .atPriority(1).willReturn(aResponse().withStatus(503)));
        rig.deliver("issue_comment", rig.comment("eng", issue, "/clarify @architect Which cache?"));
        assertEquals(List.of(), posted(GitHubRig.API_REPO, issue));
        assertTrue(rig.mode().pendingEffects() > 0);
        return down;
    }

    /** GitHub answers again; time passes beyond any retry's wait; the outbox's tick runs. */
    private void later(StubMapping down, Duration by) {
        rig.wiremock.removeStub(down);
        rig.clock.advance(by);
        rig.mode().drain();
    }

    private boolean questionPosted(int issue) {
        return posted(GitHubRig.API_REPO, issue).stream().anyMatch(c -> c.contains("Which cache?"));
    }

    @Test
    void anInstallationDeletedHoldsWhatIsQueuedUntilTheAppIsInstalledAgain() {
        StubMapping down = queuedQuestion(70);
        ObjectNode deleted = rig.fixture("installation.deleted");
        ((ObjectNode) deleted.get("installation")).put("id", 1);
        assertEquals(202, rig.deliver("installation", deleted).status());
        later(down, Duration.ofMinutes(30));
        assertFalse(questionPosted(70), "nothing is posted through a deleted installation");
        assertTrue(rig.mode().pendingEffects() > 0, "nothing queued is lost");

        // installed again: a new installation, listing the repository
        ObjectNode created = rig.fixture("installation.created");
        ((ObjectNode) created.get("installation")).put("id", 2);
        ObjectNode listed = (ObjectNode) created.withArray("repositories").get(0);
        listed.put("id", REPO.id());
        listed.put("full_name", REPO.fullName());
        assertEquals(202, rig.deliver("installation", created).status());
        rig.mode().drain();

        assertTrue(questionPosted(70), posted(GitHubRig.API_REPO, 70).toString());
        assertEquals(0, rig.mode().pendingEffects());
        assertFalse(rig.requests("POST", "/app/installations/2/access_tokens").isEmpty(),
                "sent as the new installation");
    }

    @Test
    void whatAnInstallationThatDoesNotComeBackHeldIsDroppedAfterGitHubsRetention() throws Exception {
        StubMapping down = queuedQuestion(71);
        ObjectNode deleted = rig.fixture("installation.deleted");
        ((ObjectNode) deleted.get("installation")).put("id", 1);
        rig.deliver("installation", deleted);
        later(down, Duration.ofDays(3).minusMinutes(1));
        assertTrue(rig.mode().pendingEffects() > 0, "held within the retention");

        rig.clock.advance(Duration.ofHours(1));
        rig.mode().drain();
        assertEquals(0, rig.mode().pendingEffects(), "dropped past GitHub's retention");
        assertFalse(questionPosted(71));
        try (Stream<Path> failed = Files.list(rig.data.resolve("outbox/failed"))) {
            assertTrue(failed.findAny().isPresent(), "kept in outbox/failed/ with the reason");
        }
    }

    @Test
    void aSuspendedInstallationHoldsWhatIsQueuedUntilItIsUnsuspended() {
        StubMapping down = queuedQuestion(72);
        ObjectNode suspend = rig.fixture("installation.suspend");
        ((ObjectNode) suspend.get("installation")).put("id", 1);
        rig.deliver("installation", suspend);
        later(down, Duration.ofMinutes(30));
        assertFalse(questionPosted(72));

        ObjectNode unsuspend = rig.fixture("installation.unsuspend");
        ((ObjectNode) unsuspend.get("installation")).put("id", 1);
        rig.deliver("installation", unsuspend);
        rig.mode().drain();
        assertTrue(questionPosted(72));
        assertEquals(0, rig.mode().pendingEffects());
    }

    @Test
    void anArchivedRepositoryHoldsWhatIsQueuedUntilItIsUnarchived() {
        StubMapping down = queuedQuestion(73);
        rig.deliver("repository", event("repository.archived.derived", REPO.owner(), REPO.name()));
        later(down, Duration.ofMinutes(30));
        assertFalse(questionPosted(73));

        rig.deliver("repository", event("repository.unarchived.derived", REPO.owner(), REPO.name()));
        rig.mode().drain();
        assertTrue(questionPosted(73));
    }

    @Test
    void aRepositoryTakenOutOfTheInstallationHoldsWhatIsQueuedUntilItIsAddedAgain() {
        StubMapping down = queuedQuestion(74);
        ObjectNode removed = rig.fixture("installation_repositories.removed");
        ((ObjectNode) removed.get("installation")).put("id", 1);
        ObjectNode gone = (ObjectNode) removed.withArray("repositories_removed").get(0);
        gone.put("id", REPO.id());
        gone.put("full_name", REPO.fullName());
        rig.deliver("installation_repositories", removed);
        later(down, Duration.ofMinutes(30));
        assertFalse(questionPosted(74));

        ObjectNode added = rig.fixture("installation_repositories.added");
        ((ObjectNode) added.get("installation")).put("id", 1);
        ObjectNode back = (ObjectNode) added.withArray("repositories_added").get(0);
        back.put("id", REPO.id());
        back.put("full_name", REPO.fullName());
        rig.deliver("installation_repositories", added);
        rig.mode().drain();
        assertTrue(questionPosted(74));
    }
}
