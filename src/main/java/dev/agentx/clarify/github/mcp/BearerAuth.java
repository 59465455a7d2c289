package dev.agentx.clarify.github.mcp;

import dev.agentx.clarify.github.api.GitHubApiException;
import java.util.Optional;
import java.util.regex.Pattern;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Who a request to {@code /mcp} comes from, from its {@code Authorization: Bearer TOKEN} alone,
 * before anything of the request is read: a JWT (three dot-separated parts) must be a GitHub Actions
 * OIDC token of the configured issuer and audience ({@link ActionsTokens}); any other token must be
 * a GitHub user token GitHub takes ({@link UserTokens}). The token is never logged.
 */
final class BearerAuth {
    private static final Logger LOG = LoggerFactory.getLogger(BearerAuth.class);
    /** RFC 6750's token68 characters, at most 8 KiB (GitHub's tokens and its OIDC JWTs are far shorter). */
    private static final Pattern TOKEN = Pattern.compile("[A-Za-z0-9._~+/-]{1,8192}=*");
    private static final Pattern JWT = Pattern.compile("[A-Za-z0-9_-]+\\.[A-Za-z0-9_-]+\\.[A-Za-z0-9_-]*");

    /** What the header comes to: a caller, or an HTTP refusal with its {@code WWW-Authenticate}. */
    sealed interface Outcome {
    }

    record Known(Caller caller) implements Outcome {
    }

    /** {@code status} 401 (with {@code challenge}) or 503 (the token could not be checked now). */
    record Refused(int status, String challenge, String message) implements Outcome {
    }

    private final UserTokens users;
    private final ActionsTokens actions;

    BearerAuth(UserTokens users, ActionsTokens actions) {
        this.users = users;
        this.actions = actions;
    }

    Outcome authenticate(String authorization) {
        if (authorization == null || authorization.isBlank()) {
            return new Refused(401, "Bearer realm=\"agentx\"", "Authorization: Bearer TOKEN is required: a GitHub "
                    + "user token, or a GitHub Actions OIDC token for this server's audience.");
        }
        String[] parts = authorization.strip().split(" +", 2);
        if (parts.length != 2 || !parts[0].equalsIgnoreCase("Bearer") || !TOKEN.matcher(parts[1]).matches()) {
            return invalid("the Authorization header is not 'Bearer TOKEN'");
        }
        String token = parts[1];
        try {
            if (JWT.matcher(token).matches()) {
                try {
                    return new Known(actions.verify(token));
                } catch (ActionsTokens.Refused e) {
                    LOG.info("mcp: an OIDC token was refused: {}", e.getMessage());
                    return invalid("not a GitHub Actions OIDC token this server takes: " + e.getMessage());
                }
            }
            Optional<Caller> user = users.resolve(token);
            if (user.isEmpty()) {
                LOG.info("mcp: a token GitHub does not take was refused");
                return invalid("GitHub does not take this token");
            }
            return new Known(user.get());
        } catch (GitHubApiException | IllegalStateException e) {
            LOG.warn("mcp: a token could not be checked now: {}", e.getMessage());
            return new Refused(503, null, "the token could not be checked now (" + e.getMessage() + "); try again "
                    + "shortly");
        }
    }

    private static Refused invalid(String why) {
        return new Refused(401, "Bearer realm=\"agentx\", error=\"invalid_token\", error_description=\""
                + why.replace("\"", "'").replace("\\", "/") + "\"", why + ".");
    }
}
