package dev.agentx.clarify.github.auth;

import java.io.ByteArrayOutputStream;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.interfaces.RSAPrivateKey;
import java.security.spec.PKCS8EncodedKeySpec;
import java.util.Base64;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Reads the GitHub App private key with the JDK alone: PKCS#1 ({@code BEGIN RSA PRIVATE KEY}, the
 * .pem exactly as GitHub downloads it) is wrapped in a PKCS#8 header; PKCS#8 ({@code BEGIN
 * PRIVATE KEY}) is read as it is. Every problem is an {@link IllegalArgumentException} that says
 * what was found and what is expected.
 */
public final class PemKeys {
    private static final Pattern PEM = Pattern.compile(
            "-----BEGIN ([A-Z ]+)-----\\s*([A-Za-z0-9+/=\\s]*?)\\s*-----END \\1-----");
    /** AlgorithmIdentifier of rsaEncryption (1.2.840.113549.1.1.1) with NULL parameters. */
    private static final byte[] RSA_ALGORITHM = {0x30, 0x0d, 0x06, 0x09, 0x2a, (byte) 0x86, 0x48, (byte) 0x86,
            (byte) 0xf7, 0x0d, 0x01, 0x01, 0x01, 0x05, 0x00};

    private PemKeys() {
    }

    /** @param source names where the text came from, for messages */
    public static RSAPrivateKey parse(String pem, String source) {
        // A key pasted into an env file often carries literal \n instead of line breaks.
        String text = pem == null ? "" : pem.replace("\\n", "\n").strip();
        if (text.isEmpty()) {
            throw new IllegalArgumentException(source + " is empty: expected the GitHub App's private key (.pem)");
        }
        Matcher m = PEM.matcher(text);
        if (!m.find()) {
            throw new IllegalArgumentException(source + " is not a PEM private key: expected the text of the .pem file "
                    + "GitHub downloads, from -----BEGIN RSA PRIVATE KEY----- to -----END RSA PRIVATE KEY----- "
                    + "(PKCS#8 -----BEGIN PRIVATE KEY----- works too)");
        }
        String type = m.group(1);
        byte[] der;
        try {
            der = Base64.getMimeDecoder().decode(m.group(2));
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(source + ": the base64 body of the PEM key is damaged: " + e.getMessage());
        }
        byte[] pkcs8 = switch (type) {
            case "RSA PRIVATE KEY" -> wrapPkcs1(der);
            case "PRIVATE KEY" -> der;
            case "ENCRYPTED PRIVATE KEY" -> throw new IllegalArgumentException(source + " is an encrypted key; "
                    + "use the unencrypted .pem GitHub downloads (or decrypt it: openssl pkcs8 -in key.pem -out plain.pem)");
            default -> throw new IllegalArgumentException(source + " holds a '" + type + "' block, not an RSA private key");
        };
        try {
            return (RSAPrivateKey) KeyFactory.getInstance("RSA").generatePrivate(new PKCS8EncodedKeySpec(pkcs8));
        } catch (GeneralSecurityException | ClassCastException e) {
            throw new IllegalArgumentException(source + " is not a readable RSA private key: " + e.getMessage());
        }
    }

    /** "PKCS#1" or "PKCS#8": the form of a key text {@link #parse} accepts (for the start-up summary). */
    public static String format(String pem) {
        String text = pem == null ? "" : pem.replace("\\n", "\n").strip();
        Matcher m = PEM.matcher(text);
        if (!m.find()) {
            throw new IllegalArgumentException("not a PEM private key");
        }
        return "RSA PRIVATE KEY".equals(m.group(1)) ? "PKCS#1" : "PKCS#8";
    }

    /** PKCS#8 PrivateKeyInfo: SEQUENCE { INTEGER 0, rsaEncryption, OCTET STRING { the PKCS#1 key } }. */
    static byte[] wrapPkcs1(byte[] pkcs1) {
        ByteArrayOutputStream body = new ByteArrayOutputStream();
        body.writeBytes(new byte[] {0x02, 0x01, 0x00});
        body.writeBytes(RSA_ALGORITHM);
        body.writeBytes(tlv(0x04, pkcs1));
        return tlv(0x30, body.toByteArray());
    }

    private static byte[] tlv(int tag, byte[] value) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        out.write(tag);
        int n = value.length;
        if (n < 0x80) {
            out.write(n);
        } else {
            int bytes = n > 0xffffff ? 4 : n > 0xffff ? 3 : n > 0xff ? 2 : 1;
            out.write(0x80 | bytes);
            for (int i = bytes - 1; i >= 0; i--) {
                out.write((n >>> (8 * i)) & 0xff);
            }
        }
        out.writeBytes(value);
        return out.toByteArray();
    }
}
