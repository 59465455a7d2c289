package dev.agentx.clarify.github.contract;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.agentx.clarify.github.support.GitHubContract;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The webhook payloads of the fixtures against GitHub's webhook schemas (the webhooks section of
 * its REST description, extracted as {@code POST /webhooks/<event>.<action>}): the payloads the
 * tests deliver are ones GitHub sends.
 */
class GitHubWebhookSchemasTest {
    private final GitHubContract contract = new GitHubContract();
    private static final Path FIXTURES = Path.of("src/test/resources/fixtures/github-webhooks");

    @Test
    void everyFixtureIsAPayloadGitHubDescribes() throws Exception {
        List<String> problems = new ArrayList<>();
        int checked = 0;
        try (Stream<Path> files = Files.list(FIXTURES)) {
            for (Path f : files.filter(p -> p.toString().endsWith(".payload.json")).sorted().toList()) {
                String name = f.getFileName().toString();
                String event = name.substring(0, name.indexOf('.'));
                if (event.equals("ping")) {
                    continue; // GitHub describes no payload for ping
                }
                String body = Files.readString(f);
                String action = new ObjectMapper().readTree(body).path("action").asText();
                String wrong = contract.check("POST", "/webhooks/" + event + "." + action, body);
                checked++;
                if (!wrong.isEmpty()) {
                    problems.add(name + ": " + wrong);
                }
            }
        }
        assertTrue(checked >= 18, "fixtures checked: " + checked);
        // GitHub's examples as @octokit/webhooks-examples 7.6.1 ships them are older than the schema:
        // installation timestamps as numbers, no app_slug, permissions since retired, issue fields
        // added later. Any other difference, or one of these in another fixture, fails.
        List<String> known = List.of("installation.created.payload.json", "installation.deleted.payload.json",
                "installation.suspend.payload.json", "installation.unsuspend.payload.json",
                "installation_repositories.added.payload.json", "installation_repositories.removed.payload.json",
                "issue_comment.created.payload.json", "issue_comment.created.with-installation.payload.json",
                "issue_comment.deleted.payload.json", "issue_comment.edited.payload.json",
                // the same for the merge gate's: fields the schema added later (node_id, details_url,
                // has_discussions, disabled, an App's events and permissions), custom_properties it does
                // not list, an App's timestamps without the T
                "check_run.rerequested.with-installation.payload.json",
                "check_suite.rerequested.with-installation.payload.json", "pull_request.edited.derived.payload.json",
                "pull_request.opened.with-installation.payload.json",
                "pull_request.synchronize.with-installation.payload.json",
                // its repositories carry custom_properties, which the schema leaves out, and lack has_discussions
                "pull_request_review_comment.created.with-installation.payload.json");
        List<String> unexpected = problems.stream().filter(p -> known.stream().noneMatch(p::startsWith)).toList();
        assertEquals(List.of(), unexpected);
    }
}
