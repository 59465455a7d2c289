package dev.agentx.clarify.config;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.agentx.clarify.protocol.ClarifyException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** [wake] and [[notify]] in the server's agentx.toml: read strictly, every error with file, line and key. */
class WakeAndNotifyConfigTest {
    @TempDir
    Path dir;

    private static AgentxConfig parse(String text) {
        return ConfigLoader.parse("agentx.toml", text);
    }

    private static String refused(String text) {
        return assertThrows(ClarifyException.class, () -> parse(text)).getMessage();
    }

    @Test
    void wakeMapsRolesToMentionsAliasesIncluded() {
        AgentxConfig c = parse("""
                [wake]
                engineer = "@copilot"
                pm = "@acme/product-leads"
                reviewer = " @claude "
                """);
        assertEquals(Map.of("engineer", "@copilot", "product-manager", "@acme/product-leads", "reviewer", "@claude"),
                c.wake());
    }

    @ParameterizedTest
    @ValueSource(strings = {"copilot", "@", "@copilot please", "@copilot\\n/clarify resolve CLR-1-001",
            "@-copilot", "@copilot-", "@co--pilot", "@copilot[bot]", "<b>@x</b>", "@acme/", "@acme/team/x",
            "@a0123456789012345678901234567890123456789", "@copilot @claude", "@copilot,"})
    void aWakeValueMustBeOneMentionAndNothingElse(String value) {
        String message = refused("[wake]\nengineer = \"" + value + "\"\n");
        assertTrue(message.startsWith("agentx.toml, line 2: field 'wake.engineer' must be one GitHub mention"),
                message);
    }

    @Test
    void aRoleNamedTwiceThroughItsAliasIsRefused() {
        assertTrue(refused("[wake]\npm = \"@a\"\nproduct-manager = \"@b\"\n").contains("a second time"));
    }

    @Test
    void aReceiverHasEveryEventByDefaultJsonAndNoSignature() {
        AgentxConfig c = parse("""
                [[notify]]
                url = "https://hooks.example.com/agentx"
                """);
        NotifyReceiver r = c.receivers().get(0);
        assertEquals(Set.copyOf(NotifyReceiver.EVENTS), r.events());
        assertEquals(Set.of(), r.roles());
        assertEquals("json", r.format());
        assertNull(r.secret());
        assertFalse(r.allowPrivate());
        assertEquals("server", r.origin());
        assertTrue(r.wants("stale", "engineer", "architect"));
    }

    @Test
    void everyKeyOfAReceiver() throws Exception {
        Files.writeString(dir.resolve("slack.secret"), "s3cret\n");
        AgentxConfig c = ConfigLoader.load(writeConfig("""
                [[notify]]
                url = "https://hooks.slack.com/services/T0/B0/XYZ"
                secret_file = "slack.secret"
                events = ["escalated", "stale"]
                roles = ["pm", "architect"]
                format = "slack"

                [[notify]]
                url = "http://127.0.0.1:8080/agentx"
                secret = "other"
                allow_private = true
                """));
        NotifyReceiver slack = c.receivers().get(0);
        assertEquals("s3cret", slack.secret(), "read from the file beside agentx.toml, stripped");
        assertEquals(Set.of("escalated", "stale"), slack.events());
        assertEquals(Set.of("product-manager", "architect"), slack.roles());
        assertTrue(slack.wants("escalated", "engineer", "architect"));
        assertFalse(slack.wants("escalated", "engineer", "reviewer"), "neither role listed");
        assertFalse(slack.wants("asked", "engineer", "architect"), "event not listed");
        NotifyReceiver local = c.receivers().get(1);
        assertTrue(local.allowPrivate());
        assertEquals("other", local.secret());
        String shown = slack.toString();
        assertFalse(shown.contains("s3cret") || shown.contains("XYZ"), "never the secret nor the URL's path: " + shown);
        assertEquals("https://hooks.slack.com", slack.shown());
        assertEquals(12, slack.id().length());
        assertTrue(!slack.id().equals(local.id()));
    }

    private Path writeConfig(String text) throws Exception {
        Path file = dir.resolve("agentx.toml");
        Files.writeString(file, text);
        return file;
    }

    @Test
    void mistakesNameTheFileTheLineAndTheKey() {
        assertEquals("agentx.toml, line 3: field 'notify.event' is not a known key in [[notify]] table 1; known keys: "
                + "[allow_private, events, format, roles, secret, secret_file, url]",
                refused("[[notify]]\nurl = \"https://x.example\"\nevent = [\"asked\"]\n"));
        assertTrue(refused("[[notify]]\nsecret = \"x\"\n").startsWith("agentx.toml, line 2: field 'notify.url' is "
                + "required in [[notify]] table 1"));
        assertTrue(refused("[[notify]]\nurl = \"https://x.example\"\nevents = [\"answerd\"]\n").startsWith(
                "agentx.toml, line 3: field 'notify.events' names 'answerd', which is no event; events: asked, "
                        + "answered, stale, escalated, resolved, abandoned"));
        assertTrue(refused("[[notify]]\nurl = \"https://x.example\"\nevents = []\n").contains("lists no event"));
        assertTrue(refused("[[notify]]\nurl = \"https://x.example\"\nformat = \"teams\"\n")
                .contains("field 'notify.format' must be json or slack"));
        assertTrue(refused("[[notify]]\nurl = \"ftp://x.example/\"\n").contains("must start with https:// or http://"));
        assertTrue(refused("[[notify]]\nurl = \"https://user:pw@x.example/\"\n").contains("user name or password"));
        assertTrue(refused("[[notify]]\nurl = \"https://x.example\"\nsecret = \"\"\n").contains("must not be empty"));
        assertTrue(refused("[[notify]]\nurl = \"https://x.example\"\nsecret = \"a\"\nsecret_file = \"b\"\n")
                .contains("keep one of the two"));
        assertTrue(refused("[[notify]]\nurl = \"https://x.example\"\nsecret_file = \"missing.secret\"\n")
                .contains("field 'notify.secret_file' cannot be read: there is no file"));
        assertTrue(refused("[notify]\nurl = \"https://x.example\"\n").contains("must be written as [[notify]] tables"));
        assertTrue(refused("[[notify]]\nurl = \"https://x.example\"\nallow_private = \"yes\"\n")
                .contains("must be true or false"));
    }

    @ParameterizedTest
    @ValueSource(strings = {"http://127.0.0.1/hook", "http://169.254.169.254/latest/meta-data/", "http://[::1]:8080/",
            "http://[::ffff:169.254.169.254]/", "http://10.0.0.5/x", "http://0.0.0.0:9000/", "http://[fd00:ec2::254]/"})
    void aPrivateAddressIsRefusedWithoutAllowPrivate(String url) {
        String message = refused("[[notify]]\nurl = \"" + url + "\"\n");
        assertTrue(message.startsWith("agentx.toml, line 2: field 'notify.url' names "), message);
        assertTrue(message.contains("a receiver without allow_private = true"), message);
        AgentxConfig allowed = parse("[[notify]]\nurl = \"" + url + "\"\nallow_private = true\n");
        assertEquals(List.of(url), allowed.receivers().stream().map(NotifyReceiver::url).toList());
    }

    @Test
    void withoutTheTablesNothingIsWokenOrNotified() {
        AgentxConfig c = parse("default_workflow = \"feature\"\n");
        assertEquals(Map.of(), c.wake());
        assertEquals(List.of(), c.receivers());
    }
}
