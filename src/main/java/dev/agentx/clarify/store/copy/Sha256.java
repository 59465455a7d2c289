package dev.agentx.clarify.store.copy;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;

/** The checksum of a tally: a SHA-256 over what one side holds, shown as its first 16 hex digits. */
final class Sha256 {
    private final MessageDigest sha;

    Sha256() {
        try {
            sha = MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every JVM has SHA-256", e);
        }
    }

    Sha256 add(byte[] bytes) {
        sha.update(bytes);
        return this;
    }

    Sha256 add(String text) {
        return add(text.getBytes(StandardCharsets.UTF_8));
    }

    Sha256 add(byte b) {
        sha.update(b);
        return this;
    }

    /** The first 16 hex digits of the digest; the digest cannot be added to afterwards. */
    String checksum() {
        return HexFormat.of().formatHex(sha.digest()).substring(0, 16);
    }
}
