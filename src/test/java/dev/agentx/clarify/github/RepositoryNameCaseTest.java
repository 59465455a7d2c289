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
 * GitHub's owner and repository names are the same in any case, and a repository renamed to
 * another case arrives so spelt: its deliveries go on in the state the server keeps, not in a
 * second one that would issue the same clarification ids again.
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

    @Test
    void aRepositorySpeltInAnotherCaseIsTheSameRepository() throws Exception {
        rig = new GitHubRig(dir.resolve("data"), MutableClock.at("2026-02-26T10:00:00Z"));
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
        try (Stream<Path> owners = Files.list(rig.data.resolve("repos"))) {
            assertEquals(List.of("Codertocat"), owners.map(p -> p.getFileName().toString()).toList());
        }
        assertTrue(rig.comments(60).stream().anyMatch(c -> c.contains("CLR-60-002")), rig.comments(60).toString());
    }
}
