package dev.agentx.clarify.github.mcp;

import com.nimbusds.jose.JOSEException;
import com.nimbusds.jose.JOSEObjectType;
import com.nimbusds.jose.JWSAlgorithm;
import com.nimbusds.jose.JWSHeader;
import com.nimbusds.jose.crypto.MACSigner;
import com.nimbusds.jose.crypto.RSASSASigner;
import com.nimbusds.jose.jwk.JWKSet;
import com.nimbusds.jose.jwk.RSAKey;
import com.nimbusds.jose.jwk.gen.RSAKeyGenerator;
import com.nimbusds.jwt.JWTClaimsSet;
import com.nimbusds.jwt.PlainJWT;
import com.nimbusds.jwt.SignedJWT;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.Date;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * GitHub's Actions OIDC issuer as the tests need it: a real HTTP server on a free port serving
 * {@code /.well-known/openid-configuration} and the key set it names, with RSA keys made here, and
 * tokens shaped as GitHub's ({@code repository}, {@code workflow_ref}, {@code run_id}).
 */
final class FakeOidcIssuer implements AutoCloseable {
    private final HttpServer server;
    private final RSAKey key;
    /** A key the issuer does not publish: a token signed with it is someone else's. */
    final RSAKey stranger;
    final AtomicInteger keySetReads = new AtomicInteger();

    FakeOidcIssuer() {
        try {
            key = new RSAKeyGenerator(2048).keyID("issuer-key").generate();
            stranger = new RSAKeyGenerator(2048).keyID("issuer-key").generate();
            server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        } catch (JOSEException | IOException e) {
            throw new IllegalStateException(e);
        }
        server.createContext("/.well-known/openid-configuration", ex -> send(ex, "{\"issuer\":\"" + url()
                + "\",\"jwks_uri\":\"" + url() + "/.well-known/jwks\",\"id_token_signing_alg_values_supported\":"
                + "[\"RS256\"]}"));
        server.createContext("/.well-known/jwks", ex -> {
            keySetReads.incrementAndGet();
            send(ex, new JWKSet(key.toPublicJWK()).toString());
        });
        server.start();
    }

    private static void send(com.sun.net.httpserver.HttpExchange ex, String body) throws IOException {
        byte[] b = body.getBytes(StandardCharsets.UTF_8);
        ex.getResponseHeaders().add("Content-Type", "application/json");
        ex.sendResponseHeaders(200, b.length);
        ex.getResponseBody().write(b);
        ex.close();
    }

    String url() {
        return "http://127.0.0.1:" + server.getAddress().getPort();
    }

    /** Claims as GitHub's tokens have them, for a run of {@code workflowFile} in {@code repository}. */
    JWTClaimsSet.Builder claims(String repository, String workflowFile, String audience, Instant now) {
        return new JWTClaimsSet.Builder().issuer(url()).audience(List.of(audience))
                .subject("repo:" + repository + ":ref:refs/heads/main").issueTime(Date.from(now))
                .notBeforeTime(Date.from(now)).expirationTime(Date.from(now.plusSeconds(300)))
                .claim("repository", repository).claim("repository_owner", repository.split("/")[0])
                .claim("repository_id", String.valueOf(repository.equalsIgnoreCase(
                        dev.agentx.clarify.github.support.GitHubRig.REPO.fullName())
                        ? dev.agentx.clarify.github.support.GitHubRig.REPO.id() : Math.abs(repository.hashCode())))
                .claim("workflow_ref", repository + "/" + workflowFile + "@refs/heads/main")
                .claim("run_id", "1234").claim("ref", "refs/heads/main");
    }

    String sign(JWTClaimsSet claims) {
        return sign(claims, key);
    }

    String sign(JWTClaimsSet claims, RSAKey with) {
        try {
            SignedJWT jwt = new SignedJWT(new JWSHeader.Builder(JWSAlgorithm.RS256).keyID(with.getKeyID())
                    .type(JOSEObjectType.JWT).build(), claims);
            jwt.sign(new RSASSASigner(with));
            return jwt.serialize();
        } catch (JOSEException e) {
            throw new IllegalStateException(e);
        }
    }

    /** A token with {@code alg} HS256, keyed with the public key's bytes (the old key-confusion attack). */
    String signHs256(JWTClaimsSet claims) {
        try {
            SignedJWT jwt = new SignedJWT(new JWSHeader.Builder(JWSAlgorithm.HS256).keyID(key.getKeyID()).build(),
                    claims);
            byte[] secret = key.toPublicJWK().toJSONString().getBytes(StandardCharsets.UTF_8);
            jwt.sign(new MACSigner(secret));
            return jwt.serialize();
        } catch (JOSEException e) {
            throw new UncheckedIOException(new IOException(e));
        }
    }

    /** A token with {@code alg} none: no signature at all. */
    String unsigned(JWTClaimsSet claims) {
        return new PlainJWT(claims).serialize();
    }

    @Override
    public void close() {
        server.stop(0);
    }
}
