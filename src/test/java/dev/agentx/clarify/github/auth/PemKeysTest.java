package dev.agentx.clarify.github.auth;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.auth0.jwt.JWT;
import com.auth0.jwt.algorithms.Algorithm;
import com.auth0.jwt.interfaces.DecodedJWT;
import dev.agentx.clarify.github.support.Keys;
import dev.agentx.clarify.support.MutableClock;
import java.security.interfaces.RSAPrivateKey;
import java.security.interfaces.RSAPublicKey;
import java.time.Duration;
import java.time.Instant;
import org.junit.jupiter.api.Test;

class PemKeysTest {
    private static final RSAPrivateKey EXPECTED = (RSAPrivateKey) Keys.PAIR.getPrivate();

    @Test
    void readsPkcs1AsGitHubDownloadsItAndPkcs8() {
        assertEquals(EXPECTED.getModulus(), PemKeys.parse(Keys.pkcs1Pem(), "k").getModulus());
        assertEquals(EXPECTED.getPrivateExponent(), PemKeys.parse(Keys.pkcs1Pem(), "k").getPrivateExponent());
        assertEquals(EXPECTED.getModulus(), PemKeys.parse(Keys.pkcs8Pem(), "k").getModulus());
        // as pasted into an env file: literal \n, surrounding text
        String escaped = "key: " + Keys.pkcs1Pem().replace("\n", "\\n");
        assertEquals(EXPECTED.getModulus(), PemKeys.parse(escaped, "k").getModulus());
    }

    @Test
    void badKeysSayWhatIsExpected() {
        assertTrue(assertThrows(IllegalArgumentException.class, () -> PemKeys.parse("", "GITHUB_APP_PRIVATE_KEY"))
                .getMessage().contains("GITHUB_APP_PRIVATE_KEY is empty"));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> PemKeys.parse("ssh-rsa AAAA", "k"))
                .getMessage().contains("BEGIN RSA PRIVATE KEY"));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> PemKeys.parse(
                "-----BEGIN ENCRYPTED PRIVATE KEY-----\nAAAA\n-----END ENCRYPTED PRIVATE KEY-----", "k"))
                .getMessage().contains("encrypted"));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> PemKeys.parse(
                "-----BEGIN RSA PRIVATE KEY-----\nAAAA\n-----END RSA PRIVATE KEY-----", "k"))
                .getMessage().contains("not a readable RSA private key"));
    }

    @Test
    void appJwtIsRs256BackdatedAndShortLivedAndReused() {
        // verify() below checks exp against the real time, so this clock starts now
        MutableClock clock = new MutableClock(Instant.now().truncatedTo(java.time.temporal.ChronoUnit.SECONDS));
        Instant start = clock.instant();
        AppJwt jwt = new AppJwt("4242", PemKeys.parse(Keys.pkcs1Pem(), "k"), clock);
        String token = jwt.token();
        DecodedJWT d = JWT.require(Algorithm.RSA256((RSAPublicKey) Keys.PAIR.getPublic(), null)).withIssuer("4242")
                .build().verify(JWT.decode(token));
        assertEquals("RS256", d.getAlgorithm());
        assertEquals(start.minusSeconds(60), d.getIssuedAtAsInstant());
        assertTrue(Duration.between(clock.instant(), d.getExpiresAtAsInstant()).compareTo(Duration.ofMinutes(10)) < 0);
        clock.advance(Duration.ofMinutes(7));
        assertEquals(token, jwt.token());
        clock.advance(Duration.ofMinutes(1));
        assertTrue(!token.equals(jwt.token()), "renewed a minute before it expires");
    }
}
