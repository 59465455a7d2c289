package dev.agentx.clarify.store.files;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.agentx.clarify.files.Journal;
import dev.agentx.clarify.files.JsonSupport;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The outbox journal's records: written as Jackson writes an {@link OutboxJournal.Rec} with its
 * default settings (an entry and a note copied in as they are), read strictly, and added up at a
 * start.
 */
class OutboxJournalFormatTest {
    @TempDir
    Path dir;

    private final ObjectMapper json = JsonSupport.mapper();

    @Test
    void everyKindOfRecordIsWrittenAsJacksonWritesItAndReadAsBindingReadsIt() throws Exception {
        JsonNode entry = json.readTree("{\"effect\":{\"type\":\"comment\",\"body\":\"caf\u00e9 \\\"x\\\"\\n\"},"
                + "\"attempts\":3,\"lastError\":\"502 Bad Gateway\"}");
        JsonNode note = json.readTree("{\"a\":[1,\"\u00e9\"]}");
        Instant at = Instant.parse("2026-02-26T10:00:00.123456789Z");
        Instant whole = Instant.parse("2026-01-01T00:00:00Z");
        Path file = dir.resolve("journal");
        byte[] entryBytes = json.writeValueAsBytes(entry);
        byte[] noteBytes = json.writeValueAsBytes(note);
        try (OutboxJournal j = new OutboxJournal(file)) {
            j.compact(j.mark(), head -> { // the head of a compacted journal, then records appended after it
                head.lastSeq(41);
                head.doneKey("4e5f", Instant.parse("2026-01-01T00:00:00.5Z"));
                head.queued(7, "6a7b", entryBytes);
                head.note("n", noteBytes);
            });
            j.queued(42, "0a1b", json.writeValueAsBytes(entry));
            j.retried(42, json.writeValueAsBytes(entry));
            j.done(42, "0a1b", at);
            j.failed(43, "2c3d", whole);
            j.note("mirror/o/r#1 \"q\"", json.writeValueAsBytes(note));
            j.forget("mirror/o/r#1 \"q\"");
        }
        List<byte[]> records;
        try (Journal raw = new Journal(file)) {
            records = raw.records();
        }
        assertEquals(List.of("seq", "key", "queue", "note", "queue", "retry", "done", "failed", "note", "forget"),
                records.stream().map(r -> read(r).op()).toList());
        for (byte[] r : records) {
            OutboxJournal.Rec bound = json.readValue(r, OutboxJournal.Rec.class);
            assertEquals(bound, OutboxJournal.read(r), new String(r, StandardCharsets.UTF_8));
            assertArrayEquals(json.writeValueAsBytes(bound), r, "as Jackson writes it: " + new String(r,
                    StandardCharsets.UTF_8));
        }
        for (String bad : BAD) {
            assertThrows(Exception.class, () -> OutboxJournal.read(bad.getBytes(StandardCharsets.UTF_8)), bad);
        }
    }

    private static final List<String> BAD = List.of("[]", "{\"op\":\"key\",\"extra\":1}", "{\"op\":7}",
            "{\"seq\":\"1\"}", "{\"op\":\"key\"} {}", "{\"op\":\"key\",\"at\":\"yesterday\"}",
            "{\"op\":\"seq\",\"seq\":99999999999999999999}", "{\"op\":\"queue\",\"seq\":1,\"entry\":{}} 1",
            "{\"op\":\"key\",\"hash\":\"aa\"", "");

    /**
     * A start's first pass skips the entries and notes unread but holds every record to the same
     * rules: any bad record among good ones is refused, naming the journal and the record.
     */
    @Test
    void aStartRefusesABadRecordAmongGoodOnes() {
        byte[] good = "{\"op\":\"queue\",\"seq\":1,\"hash\":\"aa\",\"entry\":[{\"any\":[1,2]}]}"
                .getBytes(StandardCharsets.UTF_8);
        byte[] done = "{\"op\":\"done\",\"seq\":1,\"hash\":\"aa\",\"at\":\"2026-02-26T10:00:00Z\"}"
                .getBytes(StandardCharsets.UTF_8);
        int n = 0;
        for (String bad : BAD) {
            Path file = dir.resolve("journal-" + n++);
            try (Journal j = new Journal(file)) {
                j.records();
                j.write(good);
                j.write(bad.getBytes(StandardCharsets.UTF_8));
                j.write(done);
                j.sync();
            }
            IllegalStateException refused = assertThrows(IllegalStateException.class, () -> OutboxJournal.readOnly(file),
                    bad);
            assertTrue(refused.getMessage().startsWith("cannot read the outbox journal " + file + ": record 2: "),
                    refused.getMessage());
            try (Journal j = new Journal(file)) {
                j.records();
                j.compact(records -> List.of(good, done));
            }
            assertEquals(Map.of("aa", Instant.parse("2026-02-26T10:00:00Z")), OutboxJournal.readOnly(file).done(),
                    "the same records without the bad one");
        }
    }

    @Test
    void aStartAddsTheRecordsUp() {
        Path file = dir.resolve("journal");
        byte[] entry = "{\"n\":1}".getBytes(StandardCharsets.UTF_8);
        Instant at = Instant.parse("2026-02-26T10:00:00Z");
        try (OutboxJournal j = new OutboxJournal(file)) {
            j.queued(1, "aa", entry);
            j.queued(2, "bb", entry);
            j.retried(2, "{\"n\":2}".getBytes(StandardCharsets.UTF_8));
            j.queued(3, "cc", entry);
            j.done(1, "aa", at);
            j.failed(3, "cc", at);
            j.note("x", "{\"v\":1}".getBytes(StandardCharsets.UTF_8));
            j.note("x", "{\"v\":2}".getBytes(StandardCharsets.UTF_8));
            j.note("y", "{\"v\":3}".getBytes(StandardCharsets.UTF_8));
            j.forget("y");
            j.sync();
        }
        OutboxJournal.Contents c = OutboxJournal.readOnly(file);
        assertEquals(3, c.lastSeq());
        assertEquals(Map.of("aa", at, "cc", at), c.done());
        assertEquals(List.of(new OutboxJournal.Pending(2, "bb", read("{\"n\":2}"))), c.pending());
        assertEquals(Map.of("x", read("{\"v\":2}")), c.notes());
        try (OutboxJournal again = new OutboxJournal(file)) {
            assertEquals(c, again.read());
        }
    }

    private OutboxJournal.Rec read(byte[] r) {
        try {
            return json.readValue(r, OutboxJournal.Rec.class);
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    private JsonNode read(String s) {
        try {
            return json.readTree(s);
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }
}
