package dev.agentx.clarify.github;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.agentx.clarify.github.support.GitHubRig;
import dev.agentx.clarify.protocol.ClarificationRecord;
import dev.agentx.clarify.support.MutableClock;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The state is kept under a repository's name. GitHub's owner and repository names are the same
 * in any case, and a repository renamed to another case arrives so spelt: its deliveries go on in
 * the state the server keeps, not in a second one that would issue the same clarification ids
 * again. A name that passes to another repository (another id) does not get the first one's
 * state: its deliveries are not acted on.
 */
class RepositoryNameCaseTest {
    @TempDir
    Path dir;
    GitHubRig rig;

    @AfterEach
    void tearDown() {
        if (rig != null) {
            rig.close();
        }
    }

    /** The rig as this class's tests run it (on files; on PostgreSQL in the subclass). */
    GitHubRig configure(GitHubRig rig) {
        return rig;
    }

    @Test
    void aRepositorySpeltInAnotherCaseIsTheSameRepository() throws Exception {
        rig = configure(new GitHubRig(dir.resolve("data"), MutableClock.at("2026-02-26T10:00:00Z")));
        rig.start();
        assertEquals(202, rig.deliver("issue_comment", rig.comment("eng", 60, "/clarify @architect Which cache?"))
                .status());

        ObjectNode renamed = rig.comment("eng", 60, "/clarify @architect And which queue?");
        ObjectNode repository = (ObjectNode) renamed.get("repository");
        repository.put("name", "HELLO-world");
        repository.put("full_name", "CODERTOCAT/HELLO-world");
        ((ObjectNode) repository.get("owner")).put("login", "CODERTOCAT");
        assertEquals(202, rig.deliver("issue_comment", renamed).status());

        List<String> ids = rig.ledger(60).clarifications().stream().map(ClarificationRecord::id).toList();
        assertEquals(List.of("CLR-60-001", "CLR-60-002"), ids, "one ledger, ids issued once");
        if (Files.exists(rig.data.resolve("repos"))) {
            try (Stream<Path> owners = Files.list(rig.data.resolve("repos"))) {
                assertEquals(List.of("Codertocat"), owners.map(p -> p.getFileName().toString()).toList());
            }
        }
        assertTrue(rig.comments(60).stream().anyMatch(c -> c.contains("CLR-60-002")), rig.comments(60).toString());
    }

    @Test
    void aNameThatPassedToAnotherRepositoryDoesNotGetTheFirstOnesThreads() throws Exception {
        rig = configure(new GitHubRig(dir.resolve("data"), MutableClock.at("2026-02-26T10:00:00Z")));
        rig.start();
        assertEquals(202, rig.deliver("issue_comment", rig.comment("eng", 61, "/clarify @architect A private "
                + "question?")).status());
        int posted = rig.comments(61).size();

        // the repository was deleted or renamed, and a new one created under its name: another id
        ObjectNode status = rig.comment("eng", 61, "/clarify status");
        ((ObjectNode) status.get("repository")).put("id", 999_999_001L);
        assertEquals(202, rig.deliver("issue_comment", status).status());
        ObjectNode ask = rig.comment("eng", 61, "/clarify @architect Another?");
        ((ObjectNode) ask.get("repository")).put("id", 999_999_001L);
        assertEquals(202, rig.deliver("issue_comment", ask).status());

        assertEquals(posted, rig.comments(61).size(), "nothing posted to the new repository: " + rig.comments(61));
        assertEquals(1, rig.ledger(61).clarifications().size(), "nothing acted on");

        // the repository the state is of goes on
        assertEquals(202, rig.deliver("issue_comment", rig.comment("arch", 61, "/clarify answer CLR-61-001 Yes."))
                .status());
        assertEquals(2, rig.ledger(61).clarifications().get(0).thread().size());

        // the operator moves the old state aside as docs/operations.md says and restarts: the new one is served
        rig.close();
        moveAside();
        rig = configure(new GitHubRig(rig.data, MutableClock.at("2026-02-26T11:00:00Z")));
        rig.start();
        ObjectNode again = rig.comment("eng", 61, "/clarify @architect Another?");
        ((ObjectNode) again.get("repository")).put("id", 999_999_001L);
        // its own delivery id: a new rig numbers its deliveries from 1, which the data dir has seen
        assertEquals(202, rig.deliver("issue_comment", again, "after-the-move-1").status());
        List<String> ids = rig.ledger(61).clarifications().stream().map(ClarificationRecord::id).toList();
        assertEquals(List.of("CLR-61-001"), ids, "the new repository's own first clarification");
        assertEquals("Another?", rig.ledger(61).clarifications().get(0).thread().get(0).body());
    }

    /** What docs/operations.md ("A repository name used again") says to do, for the store under test. */
    void moveAside() throws Exception {
        Path aside = dir.resolve("aside");
        Files.createDirectories(aside);
        Files.move(rig.data.resolve("repos/186853002"), aside.resolve("Hello-World"));
    }
}
