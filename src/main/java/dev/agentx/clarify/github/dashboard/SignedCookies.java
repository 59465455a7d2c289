package dev.agentx.clarify.github.dashboard;

import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.security.SecureRandom;
import java.time.Instant;
import java.util.Base64;
import java.util.Optional;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * Values in cookies that the server signed: {@code value.expiry.signature}, the signature an
 * HMAC-SHA256 over the name, value and expiry with a key derived from the App's client secret. A
 * cookie that was changed, cut, or moved to another name, or whose time is up, reads as absent.
 */
final class SignedCookies {
    private static final Base64.Encoder B64 = Base64.getUrlEncoder().withoutPadding();
    private static final SecureRandom RANDOM = new SecureRandom();

    private final byte[] key;

    SignedCookies(String clientSecret) {
        this.key = hmac(("agentx-dashboard-cookies:" + clientSecret).getBytes(StandardCharsets.UTF_8),
                "key".getBytes(StandardCharsets.UTF_8));
    }

    /** A random value of 32 bytes, URL-safe. */
    static String random() {
        byte[] b = new byte[32];
        RANDOM.nextBytes(b);
        return B64.encodeToString(b);
    }

    String sign(String name, String value, Instant expires) {
        String body = value + "." + expires.getEpochSecond();
        return body + "." + B64.encodeToString(hmac(key, (name + "=" + body).getBytes(StandardCharsets.UTF_8)));
    }

    /** The value of a cookie this server signed under {@code name}, still valid at {@code now}. */
    Optional<String> verify(String name, String cookie, Instant now) {
        if (cookie == null) {
            return Optional.empty();
        }
        int sig = cookie.lastIndexOf('.');
        int exp = sig < 0 ? -1 : cookie.lastIndexOf('.', sig - 1);
        if (exp <= 0) {
            return Optional.empty();
        }
        String body = cookie.substring(0, sig);
        byte[] expected = hmac(key, (name + "=" + body).getBytes(StandardCharsets.UTF_8));
        byte[] given;
        try {
            given = Base64.getUrlDecoder().decode(cookie.substring(sig + 1));
        } catch (IllegalArgumentException e) {
            return Optional.empty();
        }
        if (!MessageDigest.isEqual(expected, given)) {
            return Optional.empty();
        }
        try {
            if (Instant.ofEpochSecond(Long.parseLong(cookie.substring(exp + 1, sig))).isBefore(now)) {
                return Optional.empty();
            }
        } catch (NumberFormatException e) {
            return Optional.empty();
        }
        return Optional.of(cookie.substring(0, exp));
    }

    private static byte[] hmac(byte[] key, byte[] data) {
        try {
            Mac mac = Mac.getInstance("HmacSHA256");
            mac.init(new SecretKeySpec(key, "HmacSHA256"));
            return mac.doFinal(data);
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException(e);
        }
    }
}
