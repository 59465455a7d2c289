package dev.agentx.clarify.github.mcp;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.nimbusds.jose.JOSEException;
import com.nimbusds.jose.JWSAlgorithm;
import com.nimbusds.jose.jwk.source.JWKSource;
import com.nimbusds.jose.jwk.source.JWKSourceBuilder;
import com.nimbusds.jose.proc.BadJOSEException;
import com.nimbusds.jose.proc.JWSVerificationKeySelector;
import com.nimbusds.jose.proc.SecurityContext;
import com.nimbusds.jose.util.DefaultResourceRetriever;
import com.nimbusds.jose.util.ResourceRetriever;
import com.nimbusds.jwt.JWTClaimsSet;
import com.nimbusds.jwt.SignedJWT;
import com.nimbusds.jwt.proc.DefaultJWTProcessor;
import java.io.IOException;
import java.net.URI;
import java.net.URL;
import java.text.ParseException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Date;

/**
 * GitHub Actions OIDC tokens ({@code permissions: id-token: write}), verified against the issuer's
 * published keys: its {@code /.well-known/openid-configuration} names the key set ({@code
 * jwks_uri}), read when the first token comes and kept; the key set is cached and read again when a
 * token names a key id it lacks, at most once every {@link #REFRESH_AT_MOST}. Only RS256 is taken
 * (a token with {@code alg} none or HS256 is refused before any key is looked at). The claims are
 * checked against this server's clock: issuer, audience, expiry and not-before within {@link
 * #LEEWAY}, and the {@code repository} and {@code workflow_ref} a caller needs.
 */
final class ActionsTokens {
    static final Duration LEEWAY = Duration.ofSeconds(60);
    static final Duration REFRESH_AT_MOST = Duration.ofSeconds(5);
    private static final Duration KEYS_KEPT = Duration.ofMinutes(15);

    /** Why a token is no caller (said in the 401's {@code error_description}). */
    static final class Refused extends Exception {
        private static final long serialVersionUID = 1L;

        Refused(String why) {
            super(why);
        }
    }

    private final String issuer;
    private final String audience;
    private final Clock clock;
    private final ResourceRetriever http = new DefaultResourceRetriever(5_000, 5_000, 512 * 1024);
    private volatile DefaultJWTProcessor<SecurityContext> processor;
    private volatile Instant lastDiscovery = Instant.EPOCH;

    ActionsTokens(String issuer, String audience, Clock clock) {
        this.issuer = issuer.replaceAll("/+$", "");
        this.audience = audience;
        this.clock = clock;
    }

    /**
     * The workflow run the token stands for.
     *
     * @throws Refused not a valid token of the issuer for this audience, saying why
     * @throws IllegalStateException the issuer's keys cannot be read now
     */
    Caller.ActionsRun verify(String token) throws Refused {
        SignedJWT jwt;
        try {
            jwt = SignedJWT.parse(token);
        } catch (ParseException e) {
            throw new Refused("not a signed JWT");
        }
        if (!JWSAlgorithm.RS256.equals(jwt.getHeader().getAlgorithm())) {
            throw new Refused("signed with " + jwt.getHeader().getAlgorithm() + "; only RS256 is taken");
        }
        JWTClaimsSet claims;
        try {
            claims = processor().process(jwt, null);
        } catch (BadJOSEException e) {
            throw new Refused("its signature is not one of " + issuer + "'s keys");
        } catch (JOSEException e) {
            throw new IllegalStateException("the keys of " + issuer + " cannot be read now: " + e.getMessage(), e);
        }
        if (!issuer.equals(claims.getIssuer())) {
            throw new Refused("issued by " + claims.getIssuer() + ", not " + issuer);
        }
        if (claims.getAudience() == null || !claims.getAudience().contains(audience)) {
            throw new Refused("its audience is " + claims.getAudience() + ", not " + audience);
        }
        Instant now = clock.instant();
        Date exp = claims.getExpirationTime();
        if (exp == null || !now.isBefore(exp.toInstant().plus(LEEWAY))) {
            throw new Refused(exp == null ? "it has no expiry" : "it expired at " + exp.toInstant());
        }
        Date nbf = claims.getNotBeforeTime();
        if (nbf != null && now.plus(LEEWAY).isBefore(nbf.toInstant())) {
            throw new Refused("it is not valid before " + nbf.toInstant());
        }
        String repository = text(claims, "repository");
        String workflowRef = text(claims, "workflow_ref");
        if (repository == null || workflowRef == null) {
            throw new Refused("it has no repository or workflow_ref claim (not a GitHub Actions token)");
        }
        String run = text(claims, "run_id");
        String id = text(claims, "repository_id");
        long repositoryId;
        try {
            repositoryId = id == null ? 0 : Long.parseLong(id.strip());
        } catch (NumberFormatException e) {
            throw new Refused("its repository_id claim is not a number");
        }
        if (repositoryId < 0) {
            throw new Refused("its repository_id claim is not a number");
        }
        return new Caller.ActionsRun(repository, repositoryId, workflowRef,
                run == null ? String.valueOf(claims.getSubject()) : run);
    }

    private static String text(JWTClaimsSet claims, String name) {
        try {
            String v = claims.getStringClaim(name);
            return v == null || v.isBlank() ? null : v;
        } catch (ParseException e) {
            return null;
        }
    }

    /** The processor over the issuer's keys, made when the first token comes (its discovery at most once per REFRESH_AT_MOST). */
    private DefaultJWTProcessor<SecurityContext> processor() {
        DefaultJWTProcessor<SecurityContext> p = processor;
        if (p != null) {
            return p;
        }
        synchronized (this) {
            if (processor != null) {
                return processor;
            }
            Instant now = clock.instant();
            if (now.isBefore(lastDiscovery.plus(REFRESH_AT_MOST))) {
                throw new IllegalStateException("the keys of " + issuer + " could not be read a moment ago");
            }
            lastDiscovery = now;
            URL jwks = discover();
            JWKSource<SecurityContext> keys = JWKSourceBuilder.<SecurityContext>create(jwks, http)
                    .cache(KEYS_KEPT.toMillis(), Duration.ofSeconds(10).toMillis())
                    .rateLimited(REFRESH_AT_MOST.toMillis()).refreshAheadCache(false).build();
            DefaultJWTProcessor<SecurityContext> made = new DefaultJWTProcessor<>();
            made.setJWSKeySelector(new JWSVerificationKeySelector<>(JWSAlgorithm.RS256, keys));
            made.setJWTClaimsSetVerifier((claims, context) -> { }); // checked above, against our clock
            processor = made;
            return made;
        }
    }

    /** The {@code jwks_uri} of the issuer's OpenID configuration. */
    private URL discover() {
        String where = issuer + "/.well-known/openid-configuration";
        try {
            JsonNode config = new ObjectMapper().readTree(http.retrieveResource(URI.create(where).toURL()).getContent());
            String jwks = config.path("jwks_uri").asText("");
            if (jwks.isEmpty()) {
                throw new IllegalStateException(where + " names no jwks_uri");
            }
            return URI.create(jwks).toURL();
        } catch (IOException | IllegalArgumentException e) {
            throw new IllegalStateException("cannot read " + where + ": " + e.getMessage(), e);
        }
    }
}
