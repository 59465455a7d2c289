package dev.agentx.clarify.github.repoconfig;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.agentx.clarify.config.AgentSettings;
import dev.agentx.clarify.config.AgentxConfig;
import dev.agentx.clarify.config.ConfigLoader;
import dev.agentx.clarify.config.Labels;
import dev.agentx.clarify.github.RepoRef;
import dev.agentx.clarify.protocol.Autonomy;
import dev.agentx.clarify.protocol.ClarifyException;
import dev.agentx.clarify.workflow.Workflow;
import dev.agentx.clarify.workflow.WorkflowCatalog;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The sections a repository's .github/agentx.toml may set beyond roles: workflows, labels, channels. */
class RepoConfigMergeTest {
    static final RepoRef REPO = new RepoRef("acme", "widgets");

    static AgentxConfig merge(AgentxConfig server, String text) {
        return RepoConfigMerge.merge(server, new WorkflowCatalog(null), REPO, RepoConfigMerge.PATH, text);
    }

    static String refused(AgentxConfig server, String text) {
        return assertThrows(ClarifyException.class, () -> merge(server, text)).getMessage();
    }

    static void startsWith(String expected, String message) {
        assertTrue(message.startsWith(expected), "expected <" + expected + "...> but was <" + message + ">");
    }

    static final String HOTFIX = """
            [workflows.hotfix.workflow]
            name = "hotfix"
            description = "Urgent fixes"

            [[workflows.hotfix.steps]]
            id = "fix"
            agent = "engineer"
            can_clarify = ["security", "architect"]
            clarify_max_rounds = 2

            [[workflows.hotfix.steps]]
            id = "check"
            agent = "security"
            """;

    @Nested
    class Workflows {
        @Test
        void aRepositoryAddsAWorkflowAndMayMakeItTheDefault() {
            AgentxConfig merged = merge(AgentxConfig.defaults(), "default_workflow = \"hotfix\"\n" + HOTFIX);
            assertEquals("hotfix", merged.defaultWorkflow());
            Workflow w = merged.workflows().get("hotfix");
            assertEquals(List.of("security", "architect"), w.stepOf("engineer").orElseThrow().canClarify());
            assertEquals(2, w.stepOf("engineer").orElseThrow().maxRounds());
            assertEquals(".github/agentx.toml [workflows.hotfix]", w.source());
            assertNull(w.autonomy());

            WorkflowCatalog catalog = new WorkflowCatalog(null, merged.workflows());
            assertTrue(catalog.names().containsAll(List.of("hotfix", "feature", "bug")), catalog.names().toString());
            assertEquals("Urgent fixes", catalog.workflow("HotFix").description());
        }

        @Test
        void aRepositoryOverridesAServerWorkflowByNameAndKeepsItsAutonomy(@TempDir Path dir) throws IOException {
            Path files = dir.resolve("workflows");
            Files.createDirectories(files);
            Files.writeString(files.resolve("feature.toml"), """
                    [workflow]
                    autonomy = "approve"
                    [[steps]]
                    id = "build"
                    agent = "engineer"
                    can_clarify = ["architect"]
                    """);
            AgentxConfig merged = RepoConfigMerge.merge(AgentxConfig.defaults(), new WorkflowCatalog(files), REPO,
                    RepoConfigMerge.PATH, """
                            [[workflows.feature.steps]]
                            id = "build"
                            agent = "engineer"
                            can_clarify = ["architect", "reviewer"]
                            """);
            Workflow w = new WorkflowCatalog(files, merged.workflows()).workflow("feature");
            assertEquals(List.of("architect", "reviewer"), w.steps().get(0).canClarify(), "the repository's wins");
            assertEquals(Autonomy.APPROVE, w.autonomy(), "the server workflow's autonomy stays");
            // the other workflows are still the server's
            assertEquals(new WorkflowCatalog(files).workflow("bug"), new WorkflowCatalog(files, merged.workflows())
                    .workflow("bug"));
        }

        @Test
        void aDefaultWorkflowThatNamesNoWorkflowIsRefused() {
            startsWith(".github/agentx.toml, line 1: field 'default_workflow' names no workflow: 'hotfx'; known: "
                    + "bug, epic, feature, hotfix, story", refused(AgentxConfig.defaults(),
                    "default_workflow = \"hotfx\"\n" + HOTFIX));
        }

        @Test
        void aBrokenWorkflowNamesFileLineAndKeyWithItsPath() {
            startsWith(".github/agentx.toml, line 9: field 'workflows.hotfix.steps[1].clarify_max_rounds' must be "
                    + "an integer, got a string", refused(AgentxConfig.defaults(),
                    HOTFIX.replace("clarify_max_rounds = 2", "clarify_max_rounds = \"two\"")));
            startsWith(".github/agentx.toml, line 12: field 'workflows.hotfix.steps[2].id' is required in step 2",
                    refused(AgentxConfig.defaults(), HOTFIX.replace("id = \"check\"\n", "")));
            startsWith(".github/agentx.toml, line 1: field 'workflows.Hotfix' is not a workflow name",
                    refused(AgentxConfig.defaults(), "[workflows.Hotfix.workflow]\nname = \"x\"\n"));
            startsWith(".github/agentx.toml, line 1: field 'workflows.empty' needs at least one "
                    + "[[workflows.empty.steps]]", refused(AgentxConfig.defaults(), "[workflows.empty.workflow]\n"
                    + "name = \"x\"\n"));
            startsWith(".github/agentx.toml, line 2: field 'workflows.x' must be a table",
                    refused(AgentxConfig.defaults(), "[workflows]\nx = 1\n"));
            startsWith(".github/agentx.toml, line 3: invalid TOML", refused(AgentxConfig.defaults(),
                    "[workflows.x]\nsteps = [\n  {id = \"a\" agent = \"b\"}]\n"));
        }

        @Test
        void aRepositoryWorkflowMayNotSetAutonomy() {
            String message = refused(AgentxConfig.defaults(), "[workflows.hotfix.workflow]\nautonomy = \"full\"\n"
                    + HOTFIX.substring(HOTFIX.indexOf("[[")));
            startsWith(".github/agentx.toml, line 2: field 'workflows.hotfix.workflow.autonomy' is server "
                    + "configuration", message);
            assertTrue(message.contains("without a person's approval"), message);
        }

        @Test
        void configFilesKeepWorkflowsInFiles() {
            ClarifyException e = assertThrows(ClarifyException.class, () -> ConfigLoader.parse("config.toml",
                    HOTFIX));
            startsWith("config.toml, line 1: field 'workflows' is read only from a repository's "
                    + ".github/agentx.toml", e.getMessage());
            assertTrue(e.getMessage().contains(".agentx/workflows/<name>.toml"), e.getMessage());
        }
    }

    @Nested
    class LabelNames {
        @Test
        void todaysNamesAreTheDefaults() {
            Labels l = AgentxConfig.defaults().labels();
            assertEquals(new Labels("clarify:", "type:", "clarification:pending", "blocked:clarification",
                    "clarification:escalated"), l);
            assertEquals("architect", l.triggerTarget("Clarify: architect").orElseThrow());
            assertFalse(l.triggerTarget("bug").isPresent());
            assertEquals("bug", l.workflowOf(List.of("priority", "Type:Bug")));
        }

        @Test
        void theServerRenamesAndTheRepositoryOverridesKeyByKey() {
            AgentxConfig server = ConfigLoader.parse("agentx.toml", """
                    [labels]
                    trigger_prefix = "ask:"
                    pending = "agentx: waiting"
                    """);
            assertEquals(new Labels("ask:", "type:", "agentx: waiting", "blocked:clarification",
                    "clarification:escalated"), server.labels());
            AgentxConfig merged = merge(server, """
                    [labels]
                    workflow_prefix = "kind/"
                    escalated = "needs a human"
                    """);
            assertEquals(new Labels("ask:", "kind/", "agentx: waiting", "blocked:clarification", "needs a human"),
                    merged.labels());
            assertEquals("hotfix", merged.labels().workflowOf(List.of("kind/hotfix")));
            assertEquals("architect", merged.labels().triggerTarget("ask:architect").orElseThrow());
            assertFalse(merged.labels().triggerTarget("clarify:architect").isPresent());
        }

        @Test
        void badNamesAreRefusedByGitHubsRules() {
            AgentxConfig server = AgentxConfig.defaults();
            startsWith(".github/agentx.toml, line 2: field 'labels.pending' must not be empty",
                    refused(server, "[labels]\npending = \"\"\n"));
            startsWith(".github/agentx.toml, line 3: field 'labels.blocked' must be at most 50 characters",
                    refused(server, "[labels]\npending = \"p\"\nblocked = \"" + "b".repeat(51) + "\"\n"));
            startsWith(".github/agentx.toml, line 2: field 'labels.trigger_prefix' must be at most 49 characters",
                    refused(server, "[labels]\ntrigger_prefix = \"" + "t".repeat(50) + "\"\n"));
            startsWith(".github/agentx.toml, line 2: field 'labels.escalated' must not start or end with white "
                    + "space", refused(server, "[labels]\nescalated = \"escalated \"\n"));
            startsWith(".github/agentx.toml, line 2: field 'labels.workflow_prefix' must not start with white space",
                    refused(server, "[labels]\nworkflow_prefix = \" kind:\"\n"));
            startsWith(".github/agentx.toml, line 2: field 'labels.blocked' must be a string, got an integer",
                    refused(server, "[labels]\nblocked = 1\n"));
            startsWith(".github/agentx.toml, line 2: field 'labels.pendng' is not a known key in [labels]",
                    refused(server, "[labels]\npendng = \"x\"\n"));
            // a prefix may end in a space: "ask architect"
            assertEquals("architect", merge(server, "[labels]\ntrigger_prefix = \"ask \"\n").labels()
                    .triggerTarget("Ask architect").orElseThrow());
        }

        @Test
        void duplicatesAndOverlapsAreRefusedAtTheKeyThisFileSets() {
            AgentxConfig server = AgentxConfig.defaults();
            startsWith(".github/agentx.toml, line 2: field 'labels.escalated' 'Clarification:Pending' is already the "
                    + "pending label", refused(server, "[labels]\nescalated = \"Clarification:Pending\"\n"));
            // the conflict is with the server's status label: the repository's key is the one named
            startsWith(".github/agentx.toml, line 3: field 'labels.trigger_prefix' 'clarification:pending' starts "
                    + "with trigger_prefix 'clarification:'", refused(server,
                    "[labels]\n\ntrigger_prefix = \"clarification:\"\n"));
            startsWith(".github/agentx.toml, line 2: field 'labels.pending' 'type:waiting' starts with "
                    + "workflow_prefix 'type:'", refused(server, "[labels]\npending = \"type:waiting\"\n"));
            startsWith(".github/agentx.toml, line 2: field 'labels.workflow_prefix' trigger_prefix 'clarify:' and "
                    + "workflow_prefix 'clarify:' overlap", refused(server, "[labels]\nworkflow_prefix = \"clarify:\"\n"));
            ClarifyException serverSide = assertThrows(ClarifyException.class, () -> ConfigLoader.parse("agentx.toml",
                    "[labels]\ntrigger_prefix = \"c\"\n"));
            startsWith("agentx.toml, line 2: field 'labels.trigger_prefix' 'clarification:pending' starts with "
                    + "trigger_prefix 'c'", serverSide.getMessage());
        }
    }

    @Nested
    class Channels {
        final AgentxConfig server = ConfigLoader.parse("agentx.toml", """
                autonomy = "notify"
                [agents.architect]
                channel = "command"
                command = ["./architect"]
                autonomy = "approve"

                [channels.llm-review]
                channel = "http"
                url = "https://agents.example.com/review"
                secret_env = "REVIEW_SECRET"
                timeout_seconds = 300

                [channels.acme-only]
                channel = "auto"
                repositories = ["acme/*"]

                [channels.other-org]
                channel = "auto"
                repositories = ["other/widgets"]
                """);

        @Test
        void aRepositoryTurnsARoleToHumanOrSelectsAServerChannel() {
            AgentxConfig merged = merge(server, """
                    [agents.architect]
                    channel = "human"

                    [agents.security]
                    channel = "server:llm-review"

                    [agents.reviewer]
                    channel = "server:acme-only"
                    """);
            AgentSettings architect = merged.agent("architect");
            assertEquals("human", architect.channel());
            assertTrue(architect.command().isEmpty());
            assertEquals(Autonomy.APPROVE, architect.autonomy(), "the role keeps the server's autonomy");
            assertEquals(server.channels().get("llm-review").settings(), merged.agent("security"));
            assertEquals("https://agents.example.com/review", merged.agent("security").url());
            assertEquals("auto", merged.agent("reviewer").channel());
            assertTrue(merged.knownRoles().contains("security"));
            assertEquals(Autonomy.NOTIFY, merged.autonomy());
            assertEquals(server.channels(), merged.channels());
        }

        @Test
        void aRepositoryCanNeverGiveTheServerAProgramUrlSecretOrAutonomy() {
            String command = refused(server, "[agents.architect]\nchannel = \"human\"\ncommand = [\"./evil\"]\n");
            startsWith(".github/agentx.toml, line 3: field 'agents.architect.command' is server configuration: "
                    + "anyone who can push to the repository could make the server run any program; a repository "
                    + "may set only channel = \"human\" or channel = \"server:<name>\" for a role", command);
            startsWith(".github/agentx.toml, line 2: field 'agents.pm.url' is server configuration: anyone who can "
                    + "push to the repository could make the server call any URL",
                    refused(server, "[agents.pm]\nurl = \"https://evil.example\"\n"));
            startsWith(".github/agentx.toml, line 3: field 'agents.pm.secret_env' is server configuration",
                    refused(server, "[agents.pm]\nchannel = \"server:llm-review\"\nsecret_env = \"AWS_SECRET\"\n"));
            startsWith(".github/agentx.toml, line 2: field 'agents.pm.autonomy' is server configuration: anyone who "
                    + "can push to the repository could let agents' answers count without a person's approval",
                    refused(server, "[agents.pm]\nautonomy = \"full\"\nchannel = \"human\"\n"));
            startsWith(".github/agentx.toml, line 3: field 'agents.pm.timeout_seconds' is a setting of the channel",
                    refused(server, "[agents.pm]\nchannel = \"server:llm-review\"\ntimeout_seconds = 9999\n"));
            startsWith(".github/agentx.toml, line 2: field 'agents.pm.channel' is 'command', but a repository "
                    + "cannot set up an automatic channel of its own", refused(server,
                    "[agents.pm]\nchannel = \"command\"\n"));
            assertTrue(refused(server, "[agents.pm]\nchannel = \"auto\"\n")
                    .contains("(this server offers: server:acme-only, server:llm-review)"));
            startsWith(".github/agentx.toml, line 1: field 'agents.pm' sets no channel", refused(server,
                    "[agents.pm]\n"));
            startsWith(".github/agentx.toml, line 2: field 'agents.pm.chanel' is not a known key in [agents.pm]",
                    refused(server, "[agents.pm]\nchanel = \"human\"\n"));
            startsWith(".github/agentx.toml, line 1: field 'channels' is server configuration",
                    refused(server, "[channels.mine]\nchannel = \"command\"\ncommand = [\"./evil\"]\n"));
        }

        @Test
        void onlyChannelsTheServerOffersToThisRepositoryCanBeSelected() {
            String unknown = refused(server, "[agents.pm]\nchannel = \"server:nope\"\n");
            startsWith(".github/agentx.toml, line 2: field 'agents.pm.channel' names 'nope', which this server does "
                    + "not offer to acme/widgets (it offers: server:acme-only, server:llm-review)", unknown);
            startsWith(".github/agentx.toml, line 2: field 'agents.pm.channel' names 'other-org', which this server "
                    + "does not offer to acme/widgets", refused(server, "[agents.pm]\nchannel = \"server:other-org\"\n"));
            assertTrue(refused(AgentxConfig.defaults(), "[agents.pm]\nchannel = \"server:x\"\n")
                    .contains("(it offers no channels)"));
        }

        @Test
        void theServerDefinesNamedChannelsStrictly() {
            assertEquals(List.of("acme/*"), server.channels().get("acme-only").repositories());
            ClarifyException bad = assertThrows(ClarifyException.class, () -> ConfigLoader.parse("agentx.toml",
                    "[channels.x]\nchannel = \"auto\"\nrepositories = [\"acme\"]\n"));
            startsWith("agentx.toml, line 3: field 'repositories' must list repositories as \"owner/name\" or "
                    + "\"owner/*\"", bad.getMessage());
            ClarifyException noCommand = assertThrows(ClarifyException.class, () -> ConfigLoader.parse("agentx.toml",
                    "[channels.x]\nchannel = \"command\"\n"));
            assertTrue(noCommand.getMessage().contains("[channels.x] has no command"), noCommand.getMessage());
            ClarifyException badName = assertThrows(ClarifyException.class, () -> ConfigLoader.parse("agentx.toml",
                    "[channels.\"Big Name\"]\nchannel = \"auto\"\n"));
            startsWith("agentx.toml, line 1: field 'channels.Big Name' is not a channel name", badName.getMessage());
        }
    }

    @Test
    void theReadmeExampleLoads() {
        AgentxConfig server = ConfigLoader.parse("agentx.toml", """
                [channels.llm-review]
                channel = "http"
                url = "https://agents.example.com/review"
                secret_env = "REVIEW_SECRET"
                repositories = ["acme/*", "other/widgets"]
                """);
        AgentxConfig merged = merge(server, """
                default_workflow = "hotfix"             # may name a workflow defined below

                [roles]
                architect = ["octocat", "@acme/architects"]
                security  = ["sec-lead"]

                [maintainers]
                teams = ["@acme/widget-leads"]

                [labels]                                # rename the labels for this repository
                trigger_prefix = "ask:"                 # ask:architect instead of clarify:architect
                pending = "agentx: waiting"

                [workflows.hotfix]                      # the same shape as a workflow file
                workflow = { description = "Urgent fixes" }
                [[workflows.hotfix.steps]]
                id = "fix"
                agent = "engineer"
                can_clarify = ["security", "architect"]
                clarify_max_rounds = 2

                [agents.architect]
                channel = "human"                       # here people answer, not the server's agent
                [agents.security]
                channel = "server:llm-review"           # a channel the server offers as [channels.llm-review]
                """);
        assertEquals("hotfix", merged.defaultWorkflow());
        assertEquals("Urgent fixes", merged.workflows().get("hotfix").description());
        assertEquals(List.of("security", "architect"), merged.workflows().get("hotfix").steps().get(0).canClarify());
        assertEquals("ask:", merged.labels().triggerPrefix());
        assertEquals("human", merged.agent("architect").channel());
        assertEquals("http", merged.agent("security").channel());
    }
}
