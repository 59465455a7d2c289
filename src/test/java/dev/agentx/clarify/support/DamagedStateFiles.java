package dev.agentx.clarify.support;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HexFormat;
import java.util.List;

/**
 * {@code state-json/damaged.jsonl}: a sample ledger and a sample {@code agent-status.json}
 * ({@code state-json/ledger.json}, {@code state-json/agent-status.json}), each damaged in one
 * place (a field's value of every other type, out of range or no instant; a field removed,
 * repeated or unknown; a byte changed; the file cut short), with what reading it gives: {@code OK}
 * and the first 16 hex digits of the SHA-256 of the file written back (read leniently: and the
 * fields skipped), or {@code ERR} and the problem as the user reads it. These are the readings of
 * the hand-written codecs the data binding replaced, case for case.
 */
public final class DamagedStateFiles {
    private DamagedStateFiles() {
    }

    /** One damaged file and what reading it must give ({@code lenient}: with unknown fields skipped). */
    public record Case(byte[] bytes, String read, String lenient) {
        @Override
        public String toString() {
            return new String(bytes, java.nio.charset.StandardCharsets.UTF_8);
        }
    }

    /** The cases of {@code file} ("ledger" or "status"). */
    public static List<Case> of(String file) {
        byte[] base = resource(file.equals("ledger") ? "ledger.json" : "agent-status.json");
        List<Case> out = new ArrayList<>();
        ObjectMapper json = new ObjectMapper();
        for (String line : new String(resource("damaged.jsonl"), java.nio.charset.StandardCharsets.UTF_8).split("\n")) {
            if (line.isBlank()) {
                continue;
            }
            try {
                JsonNode c = json.readTree(line);
                if (!c.get("file").asText().equals(file)) {
                    continue;
                }
                int at = c.get("at").asInt();
                int cut = c.get("cut").asInt();
                byte[] insert = Base64.getDecoder().decode(c.get("insert").asText());
                byte[] bytes = new byte[base.length - cut + insert.length];
                System.arraycopy(base, 0, bytes, 0, at);
                System.arraycopy(insert, 0, bytes, at, insert.length);
                System.arraycopy(base, at + cut, bytes, at + insert.length, base.length - at - cut);
                String read = c.get("read").asText();
                String lenient = c.has("lenient") ? c.get("lenient").asText() : read.startsWith("OK") ? read + " []" : read;
                out.add(new Case(bytes, read, lenient));
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
        return out;
    }

    /** How a case names a file written back. */
    public static String digest(byte[] written) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(written)).substring(0, 16);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    private static byte[] resource(String name) {
        try (InputStream in = DamagedStateFiles.class.getResourceAsStream("/state-json/" + name)) {
            if (in == null) {
                throw new IllegalStateException("no test resource state-json/" + name);
            }
            return in.readAllBytes();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
