package dev.agentx.clarify.github.auth;

import com.auth0.jwt.JWT;
import com.auth0.jwt.algorithms.Algorithm;
import java.security.interfaces.RSAPrivateKey;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;

/**
 * The GitHub App's own token: an RS256 JWT with {@code iss} = the App ID, {@code iat} 60 s in the
 * past (GitHub's allowance for clock drift) and {@code exp} 9 minutes ahead (GitHub refuses more
 * than 10). It is reused until a minute before it expires.
 */
public final class AppJwt {
    static final Duration BACKDATE = Duration.ofSeconds(60);
    static final Duration LIFETIME = Duration.ofMinutes(9);
    static final Duration RENEW_BEFORE = Duration.ofMinutes(1);

    private final String appId;
    private final Algorithm algorithm;
    private final Clock clock;
    private String token;
    private Instant renewAt = Instant.MIN;

    public AppJwt(String appId, RSAPrivateKey key, Clock clock) {
        this.appId = appId;
        this.algorithm = Algorithm.RSA256(null, key);
        this.clock = clock;
    }

    public synchronized String token() {
        Instant now = clock.instant();
        if (token == null || !now.isBefore(renewAt)) {
            Instant expires = now.plus(LIFETIME);
            token = JWT.create().withIssuer(appId).withIssuedAt(now.minus(BACKDATE)).withExpiresAt(expires)
                    .sign(algorithm);
            renewAt = expires.minus(RENEW_BEFORE);
        }
        return token;
    }
}
