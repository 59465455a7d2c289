package dev.agentx.clarify.channel;

import java.nio.charset.StandardCharsets;
import java.security.InvalidKeyException;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * {@code X-Agentx-Signature-256: sha256=<hex HMAC-SHA256 of the raw body>}, keyed with the secret
 * named by {@code secret_env}: the same scheme as GitHub's {@code X-Hub-Signature-256}, so an
 * http agent verifies it the same way.
 */
public final class Signatures {
    public static final String HEADER = "X-Agentx-Signature-256";
    public static final String PREFIX = "sha256=";

    private Signatures() {
    }

    public static String sign(String secret, byte[] body) {
        try {
            Mac mac = Mac.getInstance("HmacSHA256");
            mac.init(new SecretKeySpec(secret.getBytes(StandardCharsets.UTF_8), "HmacSHA256"));
            byte[] digest = mac.doFinal(body);
            StringBuilder b = new StringBuilder(PREFIX);
            for (byte x : digest) {
                b.append(Character.forDigit((x >> 4) & 0xf, 16)).append(Character.forDigit(x & 0xf, 16));
            }
            return b.toString();
        } catch (NoSuchAlgorithmException | InvalidKeyException e) {
            throw new IllegalStateException("HmacSHA256 is not available", e);
        }
    }

    /** Constant-time check of a received header value against the body. */
    public static boolean verify(String secret, byte[] body, String header) {
        if (header == null) {
            return false;
        }
        return MessageDigest.isEqual(sign(secret, body).getBytes(StandardCharsets.US_ASCII),
                header.strip().getBytes(StandardCharsets.US_ASCII));
    }
}
