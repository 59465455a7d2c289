package dev.agentx.clarify.github.webhook;

import java.nio.charset.StandardCharsets;
import java.security.InvalidKeyException;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.List;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * Checks {@code X-Hub-Signature-256: sha256=<hex>}: HMAC-SHA256 of the raw body bytes with each
 * configured secret (several while rotating), compared in constant time.
 */
public final class SignatureVerifier {
    private static final String PREFIX = "sha256=";
    private final List<byte[]> secrets;

    public SignatureVerifier(List<byte[]> secrets) {
        if (secrets.isEmpty()) {
            throw new IllegalArgumentException("at least one webhook secret is needed");
        }
        this.secrets = List.copyOf(secrets);
    }

    public boolean verify(byte[] body, String header) {
        if (header == null || !header.startsWith(PREFIX) || header.length() != PREFIX.length() + 64) {
            return false;
        }
        byte[] given;
        try {
            given = HexFormat.of().parseHex(header.substring(PREFIX.length()).toLowerCase(java.util.Locale.ROOT));
        } catch (IllegalArgumentException e) {
            return false;
        }
        boolean ok = false;
        for (byte[] secret : secrets) {
            // every secret is tried, so the time taken does not tell which one matched
            ok |= MessageDigest.isEqual(hmac(secret, body), given);
        }
        return ok;
    }

    /** {@code sha256=<hex>} of {@code body} with {@code secret}: what GitHub sends. */
    public static String sign(byte[] secret, byte[] body) {
        return PREFIX + HexFormat.of().formatHex(hmac(secret, body));
    }

    public static String sign(String secret, byte[] body) {
        return sign(secret.getBytes(StandardCharsets.UTF_8), body);
    }

    private static byte[] hmac(byte[] secret, byte[] body) {
        try {
            Mac mac = Mac.getInstance("HmacSHA256");
            mac.init(new SecretKeySpec(secret, "HmacSHA256"));
            return mac.doFinal(body);
        } catch (NoSuchAlgorithmException | InvalidKeyException e) {
            throw new IllegalStateException("HmacSHA256 unavailable", e);
        }
    }
}
