package dev.agentx.clarify.config;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.agentx.clarify.protocol.Autonomy;
import dev.agentx.clarify.protocol.ClarifyException;
import dev.agentx.clarify.workflow.WorkflowParser;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The config and workflow keys of answer channels, loaded as strictly as the rest. */
class AgentChannelConfigTest {
    @Test
    void channelKeysAndAutonomyLoad() {
        AgentxConfig c = ConfigLoader.parse("config.toml", """
                autonomy = "notify"

                [agents.architect]
                channel = "command"
                command = ["./agents/architect.sh"]
                timeout_seconds = 30
                max_output_bytes = 1000
                escalate_after_failures = 1
                autonomy = "approve"

                [agents.pm]
                channel = "http"
                url = "https://agents.example/pm"
                secret_env = "PM_AGENT_SECRET"
                token_env = "PM_TOKEN"
                retries = 0
                """);
        assertEquals(Autonomy.NOTIFY, c.autonomy());
        AgentSettings a = c.agent("architect");
        assertEquals(List.of("./agents/architect.sh"), a.command());
        assertEquals(1000, a.maxOutputBytes());
        assertEquals(1, a.escalateAfterFailures());
        assertEquals(Autonomy.APPROVE, a.autonomy());
        AgentSettings pm = c.agent("product-manager");
        assertEquals("PM_TOKEN", pm.tokenEnv());
        assertEquals(0, pm.retries());
        assertEquals(AgentSettings.DEFAULT_MAX_OUTPUT_BYTES, pm.maxOutputBytes());
        assertEquals(AgentSettings.DEFAULT_ESCALATE_AFTER_FAILURES, pm.escalateAfterFailures());
        assertEquals(Autonomy.APPROVE, c.autonomyFor("architect", Autonomy.FULL));
        assertEquals(Autonomy.FULL, c.autonomyFor("product-manager", Autonomy.FULL));
        assertEquals(Autonomy.NOTIFY, c.autonomyFor("product-manager", null));
        assertEquals(Autonomy.FULL, AgentxConfig.defaults().autonomyFor("architect", null));
        assertNull(AgentxConfig.defaults().autonomy());
    }

    private static void refused(String toml, String expected) {
        ClarifyException e = assertThrows(ClarifyException.class, () -> ConfigLoader.parse("config.toml", toml));
        assertTrue(e.getMessage().contains(expected), e.getMessage());
    }

    @Test
    void badValuesNameTheFileLineAndKey() {
        refused("autonomy = \"yolo\"", "config.toml, line 1: field 'autonomy' must be full, notify or approve, got 'yolo'");
        refused("[agents.architect]\nchannel = \"auto\"\nautonomy = \"some\"",
                "config.toml, line 3: field 'autonomy' must be full, notify or approve");
        refused("[agents.pm]\nchannel = \"http\"\nurl = \"ftp://x\"", "line 3: field 'url' must start with http://");
        refused("[agents.pm]\nchannel = \"http\"\nurl = \"http://x\"\nsecret_env = \"hunter2 is my secret\"",
                "line 4: field 'secret_env' must name an environment variable");
        refused("[agents.pm]\nchannel = \"http\"\nurl = \"http://x\"\nretries = 11", "field 'retries' must be between 0 and 10");
        refused("[agents.pm]\nchannel = \"auto\"\nescalate_after_failures = 0", "must be between 1 and 100");
        refused("[agents.pm]\nchannel = \"auto\"\nmax_output_byte = 10", "line 3: field 'max_output_byte' is not a known key");
    }

    @Test
    void aWorkflowMaySetItsAutonomy() {
        assertEquals(Autonomy.APPROVE, WorkflowParser.parse("w.toml", "w", """
                [workflow]
                autonomy = "approve"
                [[steps]]
                id = "a"
                agent = "engineer"
                """).autonomy());
        ClarifyException e = assertThrows(ClarifyException.class, () -> WorkflowParser.parse("w.toml", "w", """
                [workflow]
                autonomy = 3
                [[steps]]
                id = "a"
                agent = "engineer"
                """));
        assertEquals("w.toml, line 2: field 'autonomy' must be a string, got an integer", e.getMessage());
    }
}
