package dev.agentx.clarify.github.repoconfig;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.agentx.clarify.config.AgentxConfig;
import dev.agentx.clarify.config.ConfigLoader;
import dev.agentx.clarify.github.support.GitHubRig;
import dev.agentx.clarify.protocol.ClarifyException;
import dev.agentx.clarify.protocol.Status;
import dev.agentx.clarify.support.MutableClock;
import dev.agentx.clarify.workflow.WorkflowCatalog;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class RepoConfigTest {
    static final String CONTENTS = GitHubRig.API_REPO + "/contents/.github/agentx.toml";

    @TempDir
    Path dir;

    @Test
    void repoKeysOverrideTheServersKeyByKey() {
        AgentxConfig server = ConfigLoader.parse("agentx.toml", """
                default_workflow = "feature"
                autonomy = "approve"
                [roles]
                engineer = ["eng"]
                architect = ["arch"]
                [maintainers]
                min_permission = "admin"
                teams = ["@acme/leads"]
                [agents.architect]
                channel = "command"
                command = ["./architect"]
                """);
        AgentxConfig merged = merge(server, """
                default_workflow = "bug"
                [roles]
                architect = ["repo-arch"]
                [maintainers]
                teams = ["@acme/repo-leads"]
                """);
        assertEquals("bug", merged.defaultWorkflow());
        assertEquals(List.of("eng"), merged.roles().get("engineer"));
        assertEquals(List.of("repo-arch"), merged.roles().get("architect"));
        assertEquals("admin", merged.maintainers().minPermission());
        assertEquals(List.of("@acme/repo-leads"), merged.maintainers().teams());
        assertEquals(server.agents(), merged.agents());
        assertEquals(server.autonomy(), merged.autonomy());
        assertEquals("feature", merge(server, "").defaultWorkflow());
        assertEquals(server.labels(), merge(server, "").labels());
    }

    @Test
    void aBrokenOrOverreachingFileNamesFileLineAndKey() {
        AgentxConfig server = AgentxConfig.defaults();
        ClarifyException autonomy = assertThrows(ClarifyException.class, () -> merge(server,
                "default_workflow = \"bug\"\nautonomy = \"full\"\n[roles]\narchitect = [\"a\"]\n"));
        assertTrue(autonomy.getMessage().startsWith(".github/agentx.toml, line 2: field 'autonomy' is server "
                + "configuration"), autonomy.getMessage());
        ClarifyException typo = assertThrows(ClarifyException.class, () -> merge(server,
                "\n[maintainers]\nmin_permision = \"admin\"\n"));
        assertTrue(typo.getMessage().startsWith(".github/agentx.toml, line 3: field 'min_permision'"),
                typo.getMessage());
    }

    static AgentxConfig merge(AgentxConfig server, String text) {
        return RepoConfigMerge.merge(server, new WorkflowCatalog(null), GitHubRig.REPO, RepoConfigMerge.PATH, text);
    }

    static void serveFile(GitHubRig rig, String sha, String toml) {
        rig.serveRepoConfig(sha, toml);
    }

    @Test
    void theRepositoryFileIsUsedCachedBySha_andABrokenOneIsReportedOnceWhileTheServerDefaultsApply() {
        MutableClock clock = MutableClock.at("2026-02-26T10:00:00Z");
        try (GitHubRig rig = new GitHubRig(dir.resolve("data"), clock)) {
            serveFile(rig, "sha-1", "[roles]\narchitect = [\"repo-arch\"]\n");
            rig.start();
            assertEquals(202, rig.deliver("issue_comment", rig.comment("eng", 1, "/clarify @architect Which DB?"))
                    .status());
            assertTrue(rig.comments(1).get(0).contains("@repo-arch - your answer is requested."),
                    rig.comments(1).get(0));
            assertEquals(202, rig.deliver("issue_comment", rig.comment("repo-arch", 1, "/clarify answer Postgres."))
                    .status());
            assertEquals(Status.ANSWERED, rig.ledger(1).clarifications().get(0).status());
            assertEquals(1, rig.requests("GET", CONTENTS).size(), "looked up at most once a minute");

            // a broken file: reported once (per sha) on the issue where it bit; the server's roles apply
            serveFile(rig, "sha-2", "[roles]\narchitect = [\"repo-arch\"]\n[agents.architect]\nchannel = \"human\"\n"
                    + "command = [\"./x\"]\n");
            clock.advance(Duration.ofMinutes(2));
            assertEquals(202, rig.deliver("issue_comment", rig.comment("eng", 2, "/clarify @architect Cache?"))
                    .status());
            List<String> onTwo = rig.comments(2);
            assertEquals(1, onTwo.stream().filter(c -> c.contains("is not used")).count(), onTwo.toString());
            String report = onTwo.stream().filter(c -> c.contains("is not used")).findFirst().orElseThrow();
            assertTrue(report.contains(".github/agentx.toml, line 5: field 'agents.architect.command' is server "
                    + "configuration: anyone who can push to the repository could make the server run any program"),
                    report);
            assertTrue(onTwo.stream().anyMatch(c -> c.contains("@arch @acme/architects - your answer is requested.")),
                    onTwo.toString());
            clock.advance(Duration.ofMinutes(2));
            assertEquals(202, rig.deliver("issue_comment", rig.comment("arch", 2, "/clarify answer Redis."))
                    .status());
            assertEquals(Status.ANSWERED, rig.ledger(2).clarifications().get(0).status());
            assertEquals(1, rig.comments(2).stream().filter(c -> c.contains("is not used")).count(),
                    "same sha: reported once");
            assertEquals(3, rig.requests("GET", CONTENTS).size());

            // fixed: the new sha is read and used again
            serveFile(rig, "sha-3", "[roles]\narchitect = [\"fixed-arch\"]\n");
            clock.advance(Duration.ofMinutes(2));
            assertEquals(202, rig.deliver("issue_comment", rig.comment("eng", 3, "/clarify @architect Fixed?"))
                    .status());
            assertTrue(rig.comments(3).get(0).contains("@fixed-arch - your answer is requested."),
                    rig.comments(3).toString());
        }
    }
}
