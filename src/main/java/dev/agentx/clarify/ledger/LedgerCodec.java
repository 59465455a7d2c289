package dev.agentx.clarify.ledger;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.util.DefaultIndenter;
import com.fasterxml.jackson.core.util.DefaultPrettyPrinter;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.ObjectWriter;
import com.fasterxml.jackson.databind.SerializationFeature;
import dev.agentx.clarify.files.JsonSupport;
import dev.agentx.clarify.protocol.ClarificationId;
import dev.agentx.clarify.protocol.ClarificationRecord;
import dev.agentx.clarify.protocol.Ledger;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.HashSet;
import java.util.Set;

/**
 * Ledger JSON (SPEC-1 section 4.2): pretty-printed, fields in schema order. Reading is strict: a
 * field we do not know is refused rather than silently dropped on the next write.
 */
public final class LedgerCodec {
    private final ObjectMapper mapper;
    private final ObjectWriter writer;

    public LedgerCodec() {
        mapper = JsonSupport.mapper()
                .enable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES)
                .enable(DeserializationFeature.FAIL_ON_NULL_FOR_PRIMITIVES);
        DefaultPrettyPrinter printer = new DefaultPrettyPrinter()
                .withObjectIndenter(new DefaultIndenter("  ", "\n"))
                .withArrayIndenter(new DefaultIndenter("  ", "\n"));
        writer = mapper.writer(printer).with(SerializationFeature.INDENT_OUTPUT);
    }

    public byte[] encode(Ledger ledger) {
        try {
            String s = writer.writeValueAsString(ledger) + "\n";
            return s.getBytes(StandardCharsets.UTF_8);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("cannot encode ledger of issue " + ledger.issueNumber(), e);
        }
    }

    /** Decodes and checks a ledger; throws {@link IllegalArgumentException} saying what is wrong. */
    public Ledger decode(byte[] bytes) {
        Ledger ledger;
        try {
            ledger = mapper.readValue(bytes, Ledger.class);
        } catch (JsonProcessingException e) {
            throw new IllegalArgumentException(describe(e), e);
        } catch (IOException e) {
            throw new IllegalArgumentException(e.getMessage(), e);
        }
        if (ledger == null) {
            throw new IllegalArgumentException("the file holds no JSON object");
        }
        check(ledger);
        return ledger;
    }

    /** A one-line reason with the line and column where the parser stopped. */
    public static String describe(JsonProcessingException e) {
        String msg = e.getOriginalMessage() == null ? e.getClass().getSimpleName() : e.getOriginalMessage();
        msg = msg.replaceAll("\\s+", " ");
        if (msg.length() > 300) {
            msg = msg.substring(0, 297) + "...";
        }
        if (e.getLocation() != null && e.getLocation().getLineNr() > 0) {
            msg += " (line " + e.getLocation().getLineNr() + ", column " + e.getLocation().getColumnNr() + ")";
        }
        return msg;
    }

    private static void check(Ledger ledger) {
        Set<String> ids = new HashSet<>();
        for (ClarificationRecord r : ledger.clarifications()) {
            ClarificationId id;
            try {
                id = ClarificationId.parse(r.id());
            } catch (RuntimeException e) {
                throw new IllegalArgumentException("record id '" + r.id() + "' is not of the form CLR-<issue>-<seq>");
            }
            if (id.issue() != ledger.issueNumber()) {
                throw new IllegalArgumentException("record " + r.id() + " belongs to issue " + id.issue()
                        + ", not " + ledger.issueNumber());
            }
            if (!ids.add(r.id())) {
                throw new IllegalArgumentException("record id " + r.id() + " appears twice");
            }
            if (r.round() < 1 || r.maxRounds() < 1) {
                throw new IllegalArgumentException("record " + r.id() + " has round " + r.round()
                        + " and maxRounds " + r.maxRounds() + "; both must be at least 1");
            }
        }
    }
}
