package dev.agentx.clarify.github.mcp;

import dev.agentx.clarify.github.api.GitHubGateway;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.HexFormat;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;

/**
 * GitHub user tokens (personal access tokens, OAuth user tokens): whose they are, as GitHub's
 * {@code GET /user} answers for the token, kept for {@link #CACHE} under the token's SHA-256 (the
 * token itself is never kept, logged or put in a message). A token GitHub refuses is remembered as
 * refused for as long, so a client retrying a bad token costs one call a minute.
 */
final class UserTokens {
    static final Duration CACHE = Duration.ofSeconds(60);
    /** Entries kept before the expired ones are swept. */
    private static final int SWEEP_AT = 10_000;

    private final GitHubGateway github;
    private final Clock clock;
    private final Map<String, Cached> byHash = new ConcurrentHashMap<>();

    private record Cached(Optional<String> login, Instant until) {
    }

    UserTokens(GitHubGateway github, Clock clock) {
        this.github = github;
        this.clock = clock;
    }

    /** The token's user, or empty when GitHub does not take it. */
    Optional<Caller> resolve(String token) {
        String hash = sha256(token);
        Instant now = clock.instant();
        Cached c = byHash.get(hash);
        if (c == null || !now.isBefore(c.until())) {
            c = new Cached(github.loginOf(token), now.plus(CACHE));
            if (byHash.size() >= SWEEP_AT) {
                byHash.values().removeIf(e -> !now.isBefore(e.until()));
            }
            byHash.put(hash, c);
        }
        return c.login().map(Caller.User::new);
    }

    static String sha256(String token) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256")
                    .digest(token.getBytes(StandardCharsets.UTF_8)));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }
}
