package dev.agentx.clarify.routing;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectReader;
import com.fasterxml.jackson.databind.ObjectWriter;
import com.fasterxml.jackson.databind.exc.InvalidTypeIdException;
import dev.agentx.clarify.events.ClarificationEvent;
import dev.agentx.clarify.events.EventType;
import dev.agentx.clarify.files.IsoInstant;
import dev.agentx.clarify.files.JsonErrors;
import dev.agentx.clarify.files.StateJson;
import dev.agentx.clarify.ledger.LedgerCodec;
import dev.agentx.clarify.ledger.SharedChange;
import dev.agentx.clarify.protocol.ClarificationRecord;
import dev.agentx.clarify.protocol.Ledger;
import dev.agentx.clarify.protocol.Status;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * {@link LedgerChange}s and their {@link Outcome}s as text, for the process that carries out
 * another's change (see {@link dev.agentx.clarify.ledger.LedgerStore#submit}). A change is the
 * record bound by Jackson through {@link StateJson}: one flat JSON object named by its
 * {@code kind} (see {@link LedgerChange}), fields a later version adds skipped. An outcome is a
 * line of JSON ({@link Head}: issue, replayed, notes, events) followed by its record as a
 * one-record ledger in the ledger file's own format.
 */
public final class LedgerChangeCodec implements SharedChange.Codec<Outcome> {
    private final LedgerCodec ledgers = new LedgerCodec();
    private final java.util.function.BiConsumer<Integer, List<Outcome>> carriedOut;

    /** @param carriedOut what the engine does for the outcomes of other processes' changes it carried out */
    public LedgerChangeCodec(java.util.function.BiConsumer<Integer, List<Outcome>> carriedOut) {
        this.carriedOut = carriedOut;
    }

    @Override
    public void carriedOut(int issue, List<Outcome> forOthers) {
        carriedOut.accept(issue, forOthers);
    }

    // ---- changes -----------------------------------------------------------------------------

    @Override
    public byte[] writeChange(SharedChange<Outcome> change) {
        if (!(change instanceof LedgerChange c)) {
            throw new IllegalArgumentException("not a change of this codec: " + change);
        }
        return write(Json.CHANGE_WRITER, c);
    }

    /** The change another process wrote, to be carried out for it: its key is written (see {@link LedgerChange}). */
    @Override
    public SharedChange<Outcome> readChange(byte[] text) {
        return change(text).forAnother();
    }

    /** The change {@link #writeChange} wrote, as it was. */
    LedgerChange change(byte[] text) {
        try {
            return Json.CHANGE.readValue(text);
        } catch (InvalidTypeIdException e) {
            throw new IllegalArgumentException(e.getTypeId() == null ? "a change without a kind"
                    : "a change of kind '" + e.getTypeId() + "', which this version does not know", e);
        } catch (JsonProcessingException e) {
            throw new IllegalArgumentException("unreadable change: " + JsonErrors.describe(e), e);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    // ---- outcomes ----------------------------------------------------------------------------

    /**
     * An outcome's first line: its events as {@code "type time round status"}, each of the
     * outcome's record (the type, time, round and status rebuild it with the record).
     */
    record Head(int issue, boolean replayed, List<String> notes, List<String> events) {
    }

    @Override
    public byte[] writeResult(Outcome o) {
        if (o == null) {
            return "null\n".getBytes(StandardCharsets.UTF_8);
        }
        List<String> events = new ArrayList<>();
        for (ClarificationEvent e : o.events()) {
            // every event of a change's outcome is of its record: the type, time, round and status
            // rebuild it (a recovered outcome's record may have moved on since its event)
            if (!e.equals(ClarificationEvent.of(e.event(), o.issue(), o.record(), e.round(), e.status(), e.timestamp()))) {
                throw new IllegalArgumentException("an event of another record than the outcome's: " + e);
            }
            events.add(IsoInstant.append(new StringBuilder(e.event().wire()).append(' '), e.timestamp()).append(' ')
                    .append(e.round()).append(' ').append(e.status().wire()).toString());
        }
        byte[] first = write(Json.HEAD_WRITER, new Head(o.issue(), o.replayed(), o.notes(), events));
        byte[] record = ledgers.encode(new Ledger(o.issue(), List.of(o.record())));
        byte[] out = Arrays.copyOf(first, first.length + 1 + record.length);
        out[first.length] = '\n';
        System.arraycopy(record, 0, out, first.length + 1, record.length);
        return out;
    }

    @Override
    public Outcome readResult(byte[] text) {
        int eol = 0;
        while (eol < text.length && text[eol] != '\n') {
            eol++;
        }
        if (new String(text, 0, eol, StandardCharsets.UTF_8).equals("null")) {
            return null;
        }
        Head head;
        try {
            head = Json.HEAD.readValue(text, 0, eol);
        } catch (IOException e) {
            throw new IllegalArgumentException("unreadable outcome: " + e.getMessage(), e);
        }
        Ledger one = ledgers.decode(Arrays.copyOfRange(text, Math.min(eol + 1, text.length), text.length));
        if (one.clarifications().size() != 1) {
            throw new IllegalArgumentException("an outcome without its record");
        }
        ClarificationRecord record = one.clarifications().get(0);
        List<ClarificationEvent> events = new ArrayList<>();
        for (String e : head.events() == null ? List.<String>of() : head.events()) {
            String[] parts = e.split(" ");
            if (parts.length != 4) {
                throw new IllegalArgumentException("an event this version does not know: " + e);
            }
            events.add(ClarificationEvent.of(EventType.fromWire(parts[0]), head.issue(), record,
                    Integer.parseInt(parts[2]), Status.fromWire(parts[3]), parseInstant(parts[1])));
        }
        // a result read here was carried out by another process, which mirrored its statuses (carriedOut)
        return new Outcome(head.issue(), record, events, head.notes() == null ? List.of() : head.notes(),
                head.replayed(), true);
    }

    private static byte[] write(ObjectWriter writer, Object value) {
        try {
            return writer.writeValueAsBytes(value);
        } catch (JsonProcessingException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static Instant parseInstant(String s) {
        try {
            return IsoInstant.parse(s);
        } catch (DateTimeParseException e) {
            throw new IllegalArgumentException("not a time: " + s, e);
        }
    }

    /** The readers and writers, made on first use; fields a later version adds are skipped. */
    private static final class Json {
        static final ObjectReader CHANGE = StateJson.lenient(StateJson.mapper().readerFor(LedgerChange.class));
        static final ObjectWriter CHANGE_WRITER = StateJson.mapper().writerFor(LedgerChange.class);
        static final ObjectReader HEAD = StateJson.lenient(StateJson.mapper().readerFor(Head.class));
        static final ObjectWriter HEAD_WRITER = StateJson.mapper().writerFor(Head.class);
    }
}
