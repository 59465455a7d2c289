package dev.agentx.clarify.config;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.agentx.clarify.protocol.ClarifyException;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ConfigLoaderTest {
    @Test
    void productExampleLoads() {
        AgentxConfig c = ConfigLoader.parse("config.toml", """
                default_workflow = "feature"

                [roles]
                architect = ["octocat", "@acme/architects"]
                engineer  = ["Codertocat", "acme-engineer[bot]"]

                [maintainers]
                min_permission = "write"
                teams = ["@acme/leads"]

                [agents.architect]
                channel = "command"
                command = ["./agents/architect", "--fast"]
                timeout_seconds = 120

                [agents.product-manager]
                channel = "http"
                url = "http://127.0.0.1:8700/answer"
                secret_env = "PM_AGENT_SECRET"
                """);
        assertEquals("feature", c.defaultWorkflow());
        assertEquals(List.of("octocat", "@acme/architects"), c.roles().get("architect"));
        assertEquals(List.of("@acme/leads"), c.maintainers().teams());
        assertEquals(List.of("./agents/architect", "--fast"), c.agent("architect").command());
        assertEquals("http", c.agent("product-manager").channel());
        assertEquals("human", c.agent("reviewer").channel());
    }

    @Test
    void labelsAndChannelsAreCheckedInLocalModeToo() {
        AgentxConfig c = ConfigLoader.parse("config.toml", """
                [labels]
                blocked = "blocked"

                [channels.shared]
                channel = "auto"
                """);
        assertEquals(new Labels("clarify:", "type:", "clarification:pending", "blocked", "clarification:escalated"),
                c.labels());
        assertEquals("auto", c.channels().get("shared").settings().channel());
        assertEquals(Labels.defaults(), AgentxConfig.defaults().labels());
        assertMessage("[labels]\nblocked = \"clarification:pending\"\n",
                "config.toml, line 2: field 'labels.blocked' 'clarification:pending' is already the pending label");
        assertMessage("[agents.architect]\nchannel = \"server:shared\"\n",
                "config.toml, line 2: field 'channel' must be human, command, http or auto, got 'server:shared' "
                + "('server:<name>' is how a repository's");
    }

    @Test
    void missingFileMeansDefaults(@TempDir Path dir) {
        assertEquals(AgentxConfig.defaults(), ConfigLoader.load(dir.resolve("config.toml")));
    }

    @Test
    void unknownKeysAndBadValuesNameFileLineAndKey() {
        assertMessage("default_workflow = \"feature\"\ndefault_workfow = \"bug\"\n",
                "config.toml, line 2: field 'default_workfow' is not a known key");
        assertMessage("[maintainers]\nmin_permision = \"write\"\n",
                "config.toml, line 2: field 'min_permision' is not a known key in [maintainers]");
        assertMessage("[maintainers]\nmin_permission = \"read\"\n",
                "config.toml, line 2: field 'min_permission' must be write, maintain or admin");
        assertMessage("[agents.architect]\nchannel = \"carrier-pigeon\"\n",
                "config.toml, line 2: field 'channel' must be human, command, http or auto");
        assertMessage("[agents.architect]\nchannel = \"command\"\n", "has no command");
        assertMessage("[agents.architect]\nchannel = \"http\"\n", "has no url");
        assertMessage("[agents.architect]\ntimeout = 5\n", "field 'timeout' is not a known key in [agents.architect]");
        assertMessage("[roles]\narchitect = \"octocat\"\n", "field 'architect' must be an array of strings");
        // a key of another channel does nothing: the channel or the key is a mistake
        assertMessage("[agents.architect]\nchannel = \"command\"\ncommand = [\"./a\"]\nretries = 2\n",
                "config.toml, line 4: field 'retries' applies to channel http only, and [agents.architect] has "
                + "channel = \"command\"");
        assertMessage("[agents.architect]\nchannel = \"auto\"\ncommand = [\"./a\"]\n",
                "field 'command' applies to channel command only");
        assertMessage("[agents.architect]\ntimeout_seconds = 5\n",
                "field 'timeout_seconds' applies to channel command or http only, and [agents.architect] has "
                + "channel = \"human\"");
        // an alias and its role are one role: two tables of it would leave one of them unused by chance
        assertMessage("[agents.product-manager]\nchannel = \"auto\"\n\n[agents.pm]\nchannel = \"human\"\n",
                "config.toml, line 4: field 'pm' of [agents] names the role 'product-manager' a second time");
        assertMessage("[roles]\nux-designer = [\"a\"]\nUX = [\"b\"]\n",
                "field 'UX' of [roles] names the role 'ux-designer' a second time");
    }

    private static void assertMessage(String toml, String expected) {
        ClarifyException e = assertThrows(ClarifyException.class, () -> ConfigLoader.parse("config.toml", toml));
        assertTrue(e.getMessage().contains(expected), e.getMessage());
    }
}
