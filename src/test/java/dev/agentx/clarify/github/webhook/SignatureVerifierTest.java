package dev.agentx.clarify.github.webhook;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;

class SignatureVerifierTest {
    private static final byte[] BODY = "Hello, World!".getBytes(StandardCharsets.UTF_8);

    @Test
    void matchesGitHubsDocumentedExample() {
        // GitHub's docs: secret "It's a Secret to Everybody", payload "Hello, World!"
        assertEquals("sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17",
                SignatureVerifier.sign("It's a Secret to Everybody", BODY));
    }

    @Test
    void acceptsAnyConfiguredSecretAndNothingElse() {
        SignatureVerifier v = new SignatureVerifier(List.of("new".getBytes(StandardCharsets.UTF_8),
                "old".getBytes(StandardCharsets.UTF_8)));
        assertTrue(v.verify(BODY, SignatureVerifier.sign("new", BODY)));
        assertTrue(v.verify(BODY, SignatureVerifier.sign("old", BODY)));
        assertTrue(v.verify(BODY, SignatureVerifier.sign("new", BODY).toUpperCase().replace("SHA256=", "sha256=")));
        assertFalse(v.verify(BODY, SignatureVerifier.sign("other", BODY)));
        assertFalse(v.verify("Hello, World?".getBytes(StandardCharsets.UTF_8), SignatureVerifier.sign("new", BODY)));
        assertFalse(v.verify(BODY, null));
        assertFalse(v.verify(BODY, "sha1=abc"));
        assertFalse(v.verify(BODY, "sha256=" + "zz".repeat(32)));
    }
}
