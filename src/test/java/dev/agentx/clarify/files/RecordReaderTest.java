package dev.agentx.clarify.files;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.ObjectReader;
import com.fasterxml.jackson.databind.ObjectWriter;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * A journal's records bound through one parser: each value where its record is, and a record
 * that does not hold exactly one value refused by its number, as reading it alone refuses it.
 * A compaction's writer writes each record as the object writer does.
 */
class RecordReaderTest {
    record R(String a, long n, Instant at) {
    }

    private static final ObjectReader READER = StateJson.mapper().readerFor(R.class);
    private static final ObjectWriter WRITER = StateJson.mapper().writerFor(R.class);

    @Test
    void eachRecordIsBoundInOrderBesideItsBytes() throws IOException {
        List<byte[]> records = new ArrayList<>();
        List<R> values = new ArrayList<>();
        for (int i = 0; i < 3_000; i++) { // past the parser's buffer many times over
            R r = new R(i % 7 == 0 ? "caf\u00e9 \"" + i + "\"" : "r" + i, i * 1_000_003L,
                    Instant.ofEpochSecond(1_770_000_000L + i, i % 3 == 0 ? 0 : i * 1_000L));
            values.add(r);
            records.add(WRITER.writeValueAsBytes(r));
        }
        records.add(" {\"a\":\"spaced\"}\n".getBytes(StandardCharsets.UTF_8));
        values.add(new R("spaced", 0, null));
        List<R> read = new ArrayList<>();
        RecordReader.<R>forEach(READER, records, (value, record) -> {
            assertSame(records.get(read.size()), record);
            read.add(value);
        });
        assertEquals(values, read);
        RecordReader.forEach(READER, List.of(), (value, record) -> {
            throw new AssertionError("no records, no values");
        });
    }

    @Test
    void aRecordThatIsNotOneValueIsRefusedByItsNumber() {
        String good = "{\"a\":\"x\",\"n\":1}";
        for (List<String> records : List.of(
                List.of(good, "{\"a\":\"x\",", "\"n\":1}", good), // a value split over two records
                List.of(good, "{\"a\":\"x\"} {}", good), // two values in one
                List.of(good, "{\"a\":\"x\"} {}"), // two values in the last
                List.of(good, "1", "2"), // read together, one number
                List.of(good, " ", good), // no value
                List.of(good, "", good),
                List.of(good, "{\"a\":\"x\",\"b\":1}", good), // what binding refuses
                List.of(good, "{\"a\":\"x\"} x", good))) {
            IOException e = assertThrows(IOException.class, () -> RecordReader.forEach(READER, bytes(records),
                    (value, record) -> { }), records.toString());
            assertTrue(e.getMessage().startsWith("record 2: "), records + ": " + e.getMessage());
            assertThrows(IOException.class, () -> RecordReader.one(READER).readValue(records.get(1).getBytes(
                    StandardCharsets.UTF_8)), "alone too: " + records);
        }
    }

    @Test
    void whatIsDoneWithAValueFailsAsItFails() {
        IllegalStateException e = assertThrows(IllegalStateException.class, () -> RecordReader.<R>forEach(READER,
                bytes(List.of("{\"a\":\"x\"}", "{\"a\":\"y\"}")), (value, record) -> {
                    if (value.a().equals("y")) {
                        throw new IllegalStateException("no y");
                    }
                }));
        assertEquals("no y", e.getMessage());
    }

    @Test
    void aWriterWritesEachRecordAsTheObjectWriterDoes() throws IOException {
        try (RecordWriter records = new RecordWriter(WRITER)) {
            for (R r : List.of(new R("a", 1, null), new R("caf\u00e9\n\"q\"", -7, Instant.parse("2026-02-26T10:00:00Z")),
                    new R(null, Long.MAX_VALUE, Instant.parse("2026-02-26T10:00:00.000000001Z")))) {
                byte[] written = records.write(r);
                assertArrayEquals(WRITER.writeValueAsBytes(r), written, new String(written, StandardCharsets.UTF_8));
            }
        }
    }

    private static List<byte[]> bytes(List<String> records) {
        return records.stream().map(r -> r.getBytes(StandardCharsets.UTF_8)).toList();
    }
}
