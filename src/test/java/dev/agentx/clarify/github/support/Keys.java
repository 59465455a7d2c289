package dev.agentx.clarify.github.support;

import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.NoSuchAlgorithmException;
import java.util.Arrays;
import java.util.Base64;

/** A test RSA key pair and its PEM forms: PKCS#8 and PKCS#1 (as GitHub downloads it). */
public final class Keys {
    public static final KeyPair PAIR = generate();

    private Keys() {
    }

    private static KeyPair generate() {
        try {
            KeyPairGenerator g = KeyPairGenerator.getInstance("RSA");
            g.initialize(2048);
            return g.generateKeyPair();
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    public static String pkcs8Pem() {
        return pem("PRIVATE KEY", PAIR.getPrivate().getEncoded());
    }

    /** The PKCS#1 RSAPrivateKey inside the PKCS#8 structure: the content of its final OCTET STRING. */
    public static String pkcs1Pem() {
        byte[] p8 = PAIR.getPrivate().getEncoded();
        // PrivateKeyInfo = 30 len { 02 01 00, 30 0d <rsaEncryption, NULL>, 04 len <pkcs1> }
        int i = 1;
        i += lengthBytes(p8, i);
        i += 3 + 15; // version, algorithm identifier
        if (p8[i] != 0x04) {
            throw new IllegalStateException("unexpected PKCS#8 layout");
        }
        i++;
        int len;
        if ((p8[i] & 0x80) == 0) {
            len = p8[i];
            i++;
        } else {
            int n = p8[i] & 0x7f;
            len = 0;
            for (int k = 1; k <= n; k++) {
                len = (len << 8) | (p8[i + k] & 0xff);
            }
            i += 1 + n;
        }
        return pem("RSA PRIVATE KEY", Arrays.copyOfRange(p8, i, i + len));
    }

    private static int lengthBytes(byte[] der, int at) {
        return (der[at] & 0x80) == 0 ? 1 : 1 + (der[at] & 0x7f);
    }

    private static String pem(String type, byte[] der) {
        String b64 = Base64.getMimeEncoder(64, "\n".getBytes()).encodeToString(der);
        return "-----BEGIN " + type + "-----\n" + b64 + "\n-----END " + type + "-----\n";
    }
}
