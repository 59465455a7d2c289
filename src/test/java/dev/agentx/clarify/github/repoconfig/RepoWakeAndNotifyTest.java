package dev.agentx.clarify.github.repoconfig;

import static dev.agentx.clarify.github.repoconfig.RepoConfigMergeTest.merge;
import static dev.agentx.clarify.github.repoconfig.RepoConfigMergeTest.refused;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.agentx.clarify.config.AgentxConfig;
import dev.agentx.clarify.config.ConfigLoader;
import dev.agentx.clarify.config.NotifyReceiver;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A repository's [wake] and [[notify]]: wake merged role by role; receivers added to the server's
 * for the repository's own events, never with allow_private or secret_file, never on an address of
 * the server's network.
 */
class RepoWakeAndNotifyTest {
    private static final AgentxConfig SERVER = ConfigLoader.parse("agentx.toml", """
            [wake]
            engineer = "@copilot"
            reviewer = "@claude"

            [[notify]]
            url = "https://ops.example.com/agentx"
            secret = "server-secret"
            """);

    @org.junit.jupiter.api.Test
    void wakeMergesRoleByRole() {
        AgentxConfig c = merge(SERVER, "[wake]\nengineer = \"@acme-engineer\"\narchitect = \"@acme/architects\"\n");
        assertEquals(Map.of("engineer", "@acme-engineer", "reviewer", "@claude", "architect", "@acme/architects"),
                c.wake());
    }

    @org.junit.jupiter.api.Test
    void aRepositoryAddsReceiversOfItsOwnToTheServers() {
        AgentxConfig c = merge(SERVER, """
                [[notify]]
                url = "https://hooks.slack.com/services/T0/B0/XYZ"
                format = "slack"
                events = ["escalated"]
                secret = "repo-secret"
                """);
        List<NotifyReceiver> r = c.receivers();
        assertEquals(2, r.size());
        assertEquals("server", r.get(0).origin());
        assertEquals("acme/widgets", r.get(1).origin(), "the repository's events only");
        assertFalse(r.get(1).allowPrivate());
        assertEquals(SERVER.receivers(), merge(SERVER, "").receivers(), "an empty file changes nothing");
    }

    @org.junit.jupiter.api.Test
    void allowPrivateAndSecretFileAreTheServers() {
        String a = refused(SERVER, "[[notify]]\nurl = \"https://x.example/\"\nallow_private = true\n");
        assertTrue(a.startsWith(".github/agentx.toml, line 3: field 'notify.allow_private' is server configuration"),
                a);
        String s = refused(SERVER, "[[notify]]\nurl = \"https://x.example/\"\nsecret_file = \"/etc/agentx/key\"\n");
        assertTrue(s.startsWith(".github/agentx.toml, line 3: field 'notify.secret_file' is server configuration"),
                s);
    }

    @ParameterizedTest
    @ValueSource(strings = {"http://127.0.0.1/hook", "http://169.254.169.254/latest/meta-data/iam/",
            "http://[::ffff:169.254.169.254]/", "http://[fd00:ec2::254]/latest", "http://10.1.2.3:8500/v1/kv",
            "http://[::1]:9464/metrics", "http://0.0.0.0:3000/api/github/webhooks", "http://100.100.100.200/"})
    void aRepositorysReceiverOnAnAddressOfTheServersNetworkIsRefused(String url) {
        String m = refused(SERVER, "[[notify]]\nurl = \"" + url + "\"\n");
        assertTrue(m.startsWith(".github/agentx.toml, line 2: field 'notify.url' names "), m);
        assertTrue(m.contains("a repository's receiver (no request forgery into the server's own network)"), m);
    }

    @org.junit.jupiter.api.Test
    void aBadMentionInARepositorysWakeIsRefused() {
        String m = refused(SERVER, "[wake]\nengineer = \"@copilot\\n/clarify resolve CLR-1-001\"\n");
        assertTrue(m.startsWith(".github/agentx.toml, line 2: field 'wake.engineer' must be one GitHub mention"), m);
    }
}
