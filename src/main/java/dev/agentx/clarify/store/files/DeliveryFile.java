package dev.agentx.clarify.store.files;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.agentx.clarify.store.InboundDelivery;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.Arrays;

/**
 * The bytes of an inbox file: a first line {@value #MAGIC}, a second line with the delivery's
 * id, event and time of receipt as one JSON object, then the body exactly as GitHub sent it. The
 * body is neither escaped nor encoded, so writing it at the 202 and reading it in the worker cost
 * a copy. In the inbox's queue the header also carries the delivery's
 * place in line ({@code seq}) and order key ({@code key}), so a restart finds them without parsing
 * the body.
 */
final class DeliveryFile {
    static final String MAGIC = "agentx-delivery 1";
    private static final byte[] MAGIC_LINE = (MAGIC + "\n").getBytes(StandardCharsets.US_ASCII);

    private DeliveryFile() {
    }

    /** What the header says of a queued delivery. */
    record Header(long seq, String id, String event, Instant receivedAt, String key) {
    }

    static byte[] encode(ObjectMapper json, InboundDelivery d) throws IOException {
        return encode(json, d, 0, null);
    }

    /** With the place in line and order key in the header (seq 0 and key null: left out). */
    static byte[] encode(ObjectMapper json, InboundDelivery d, long seq, String key) throws IOException {
        ObjectNode meta = json.createObjectNode();
        if (seq > 0) {
            meta.put("seq", seq);
        }
        meta.put("id", d.id());
        meta.put("event", d.event());
        meta.put("receivedAt", d.receivedAt().toString());
        if (key != null) {
            meta.put("key", key);
        }
        byte[] head = json.writeValueAsBytes(meta); // one line: the mapper does not indent, and escapes newlines
        ByteArrayOutputStream out = new ByteArrayOutputStream(MAGIC_LINE.length + head.length + 1 + d.body().length);
        out.write(MAGIC_LINE);
        out.write(head);
        out.write('\n');
        out.write(d.body());
        return out.toByteArray();
    }

    static InboundDelivery decode(ObjectMapper json, byte[] bytes) throws IOException {
        int end = headerEnd(bytes);
        Header h = header(json, bytes, end);
        return new InboundDelivery(h.id(), h.event(), h.receivedAt(), Arrays.copyOfRange(bytes, end + 1,
                bytes.length));
    }

    /** The header alone, the body left unread (seq 0 and key null when the header has none). */
    static Header decodeHeader(ObjectMapper json, byte[] bytes) throws IOException {
        return header(json, bytes, headerEnd(bytes));
    }

    /** The index of the newline that ends the header; the bytes must start with the magic line. */
    private static int headerEnd(byte[] bytes) throws IOException {
        if (!startsWithMagic(bytes)) {
            throw new IOException("not an inbox record: it does not start with '" + MAGIC + "'");
        }
        int end = MAGIC_LINE.length;
        while (end < bytes.length && bytes[end] != '\n') {
            end++;
        }
        if (end == bytes.length) {
            throw new IOException("the header line has no end: the file is truncated");
        }
        return end;
    }

    private static Header header(ObjectMapper json, byte[] bytes, int end) throws IOException {
        int from = MAGIC_LINE.length;
        JsonNode meta = json.readTree(bytes, from, end - from);
        if (meta == null || !meta.path("id").isTextual() || !meta.path("event").isTextual()
                || !meta.path("receivedAt").isTextual()) {
            throw new IOException("the header line lacks id, event or receivedAt");
        }
        Instant at;
        try {
            at = Instant.parse(meta.path("receivedAt").asText());
        } catch (java.time.format.DateTimeParseException e) {
            throw new IOException("receivedAt is not a time: " + e.getMessage(), e);
        }
        return new Header(meta.path("seq").asLong(0), meta.path("id").asText(), meta.path("event").asText(), at,
                meta.path("key").isTextual() ? meta.path("key").asText() : null);
    }

    private static boolean startsWithMagic(byte[] bytes) {
        if (bytes.length < MAGIC_LINE.length) {
            return false;
        }
        for (int i = 0; i < MAGIC_LINE.length; i++) {
            if (bytes[i] != MAGIC_LINE[i]) {
                return false;
            }
        }
        return true;
    }
}
