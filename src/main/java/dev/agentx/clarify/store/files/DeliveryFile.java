package dev.agentx.clarify.store.files;

import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonProperty;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.ObjectReader;
import com.fasterxml.jackson.databind.ObjectWriter;
import com.fasterxml.jackson.databind.cfg.CoercionAction;
import com.fasterxml.jackson.databind.cfg.CoercionInputShape;
import com.fasterxml.jackson.databind.exc.ValueInstantiationException;
import dev.agentx.clarify.files.IsoInstant;
import dev.agentx.clarify.files.JsonErrors;
import dev.agentx.clarify.files.JsonSupport;
import dev.agentx.clarify.store.InboundDelivery;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.Arrays;

/**
 * The bytes of an inbox file: a first line {@value #MAGIC}, a second line with the delivery's
 * id, event and time of receipt as one JSON object ({@link Header}), then the body exactly as
 * GitHub sent it. The body is neither escaped nor encoded, so writing it at the 202 and reading it
 * in the worker cost a copy. In the inbox's queue the header also carries the delivery's
 * place in line ({@code seq}) and order key ({@code key}), so a restart finds them without parsing
 * the body.
 */
final class DeliveryFile {
    static final String MAGIC = "agentx-delivery 1";
    private static final byte[] MAGIC_LINE = (MAGIC + "\n").getBytes(StandardCharsets.US_ASCII);
    /** The header line, strictly: no field it does not know, none twice, no value of another type, nothing after it. */
    private static final ObjectMapper JSON = strict(JsonSupport.mapper());
    private static final ObjectWriter HEADER_OUT = JSON.writerFor(Header.class);
    private static final ObjectReader HEADER_IN = JSON.readerFor(Header.class);

    private DeliveryFile() {
    }

    /**
     * The header line: the place in line and the order key (seq 0 and key null: left out, as in
     * {@code failed/}), the delivery's id, event and time of receipt ({@link Instant#toString}'s form).
     */
    record Header(@JsonInclude(JsonInclude.Include.NON_DEFAULT) long seq, String id, String event,
                  Instant receivedAt, @JsonInclude(JsonInclude.Include.NON_NULL) String key) {
        @JsonCreator
        static Header read(@JsonProperty("seq") long seq, @JsonProperty("id") String id,
                           @JsonProperty("event") String event, @JsonProperty("receivedAt") String receivedAt,
                           @JsonProperty("key") String key) {
            if (id == null || event == null || receivedAt == null) {
                throw new IllegalArgumentException(LACKS);
            }
            try {
                return new Header(seq, id, event, IsoInstant.parse(receivedAt), key);
            } catch (DateTimeParseException e) {
                throw new IllegalArgumentException("receivedAt is not a time: " + e.getMessage(), e);
            }
        }
    }

    private static final String LACKS = "the header line lacks id, event or receivedAt";

    static byte[] encode(InboundDelivery d) throws IOException {
        return encode(d, 0, null);
    }

    /** With the place in line and order key in the header (seq 0 and key null: left out). */
    static byte[] encode(InboundDelivery d, long seq, String key) throws IOException {
        // one line: the mapper does not indent, and escapes newlines
        byte[] head = HEADER_OUT.writeValueAsBytes(new Header(seq, d.id(), d.event(), d.receivedAt(), key));
        byte[] body = d.body();
        byte[] out = Arrays.copyOf(MAGIC_LINE, MAGIC_LINE.length + head.length + 1 + body.length);
        System.arraycopy(head, 0, out, MAGIC_LINE.length, head.length);
        out[MAGIC_LINE.length + head.length] = '\n';
        System.arraycopy(body, 0, out, MAGIC_LINE.length + head.length + 1, body.length);
        return out;
    }

    static InboundDelivery decode(byte[] bytes) throws IOException {
        int end = headerEnd(bytes);
        Header h = header(bytes, end);
        return new InboundDelivery(h.id(), h.event(), h.receivedAt(), Arrays.copyOfRange(bytes, end + 1,
                bytes.length));
    }

    /** The header alone, the body left unread (seq 0 and key null when the header has none). */
    static Header decodeHeader(byte[] bytes) throws IOException {
        return header(bytes, headerEnd(bytes));
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

    private static Header header(byte[] bytes, int end) throws IOException {
        int from = MAGIC_LINE.length;
        Header h;
        try {
            h = HEADER_IN.readValue(bytes, from, end - from);
        } catch (ValueInstantiationException e) {
            throw new IOException(e.getCause() != null ? e.getCause().getMessage() : e.getOriginalMessage(), e);
        } catch (JsonProcessingException e) {
            throw new IOException(JsonErrors.describe(e), e);
        }
        if (h == null) {
            throw new IOException(LACKS);
        }
        return h;
    }

    private static ObjectMapper strict(ObjectMapper json) {
        json.enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS).enable(JsonParser.Feature.STRICT_DUPLICATE_DETECTION)
                .disable(DeserializationFeature.ACCEPT_FLOAT_AS_INT);
        json.coercionConfigDefaults().setCoercion(CoercionInputShape.Integer, CoercionAction.Fail)
                .setCoercion(CoercionInputShape.Float, CoercionAction.Fail)
                .setCoercion(CoercionInputShape.Boolean, CoercionAction.Fail)
                .setCoercion(CoercionInputShape.String, CoercionAction.Fail);
        return json;
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
