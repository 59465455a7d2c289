package dev.agentx.clarify.files;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.agentx.clarify.support.Allocation;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/**
 * The mappers for documents keyed by ids read each at a cost of its own size, from bytes (the
 * outbox's notes) and from text (PostgreSQL's notes), however many ids they read before; the
 * shared mapper, which keeps the names it meets, does not (what the id-keyed ones are for).
 */
class IdKeyedJsonTest {
    private static final int BEFORE = 8_000;
    private static final int MEASURED = 200;

    private static String note(int i) {
        return "{\"installation\":1,\"posted\":{\"CLR-" + i + "-001\":1,\"CLR-" + i + "-002\":2},\"labels\":[]}";
    }

    /** The bytes {@code mapper} allocates per read of a note keyed by new ids, after {@link #BEFORE} others. */
    private static long perRead(ObjectMapper mapper, boolean text) throws IOException {
        for (int i = 0; i < BEFORE; i++) {
            read(mapper, text, i);
        }
        long before = Allocation.byThisThread();
        for (int i = BEFORE; i < BEFORE + MEASURED; i++) {
            assertEquals(2, read(mapper, text, i).get("posted").get("CLR-" + i + "-002").asInt());
        }
        return (Allocation.byThisThread() - before) / MEASURED;
    }

    private static JsonNode read(ObjectMapper mapper, boolean text, int i) throws IOException {
        return text ? mapper.readTree(note(i)) : mapper.readTree(note(i).getBytes(StandardCharsets.UTF_8));
    }


    @Test
    void aDocumentKeyedByIdsCostsItsOwnSizeFromBytesAndFromText() throws IOException {
        for (boolean text : new boolean[] {false, true}) {
            long shared = perRead(JsonSupport.mapper(), text);
            long idKeyed = perRead(JsonSupport.idKeyed(), text);
            long state = perRead(StateJson.idKeyed(), text);
            String what = (text ? "text" : "bytes") + ": shared " + shared + ", id-keyed " + idKeyed + ", state "
                    + state + " bytes per read";
            assertTrue(idKeyed < 16 * 1024 && state < 16 * 1024, what);
            assertTrue(shared > 4 * idKeyed, "the measure sees the table's copies: " + what);
        }
    }
}
