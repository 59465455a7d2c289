package dev.agentx.clarify.files;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.MappingIterator;
import com.fasterxml.jackson.databind.ObjectReader;
import java.io.IOException;
import java.io.InputStream;
import java.util.List;

/**
 * Binds a journal's records to one type, in order, as one stream of JSON values read by one
 * parser and one {@link MappingIterator}: a start reads hundreds of thousands of records, and a
 * parser and a deserialization context made for each cost more than binding it. Each record must
 * hold one JSON value and nothing else, as {@link #one} reads a record alone: a value that does
 * not start and end within its record is refused. When the stream stops at a record, that record
 * (or the one before it, whose trailing content only shows at the next value) is read again alone
 * to say what is wrong with it, where in it ({@link JsonErrors#describe}).
 */
public final class RecordReader {
    private RecordReader() {
    }

    /** What is done with each record's value, the record's bytes beside it. */
    @FunctionalInterface
    public interface Each<T> {
        void accept(T value, byte[] record) throws IOException;
    }

    /** {@code reader} for one record alone: anything after its value is refused. */
    public static ObjectReader one(ObjectReader reader) {
        return reader.with(DeserializationFeature.FAIL_ON_TRAILING_TOKENS);
    }

    /** Binds each of {@code records} with {@code reader} and hands it to {@code each}, in order. */
    public static <T> void forEach(ObjectReader reader, List<byte[]> records, Each<T> each) throws IOException {
        ObjectReader stream = reader.without(DeserializationFeature.FAIL_ON_TRAILING_TOKENS);
        try (JsonParser p = stream.createParser(new Concatenated(records));
             MappingIterator<T> values = stream.readValues(p)) {
            long start = 0;
            for (int i = 0; i < records.size(); i++) {
                byte[] record = records.get(i);
                long end = start + record.length;
                T value;
                try {
                    if (!values.hasNextValue() || p.currentTokenLocation().getByteOffset() < start) {
                        throw refused(reader, records, i, null);
                    }
                    value = values.nextValue();
                } catch (IOException | RuntimeException e) {
                    throw refused(reader, records, i, e);
                }
                if (p.currentLocation().getByteOffset() > end) {
                    throw refused(reader, records, i, null);
                }
                each.accept(value, record);
                start = end;
            }
            boolean more;
            try {
                more = values.hasNextValue();
            } catch (IOException | RuntimeException e) {
                throw refused(reader, records, records.size(), e);
            }
            if (more) {
                throw refused(reader, records, records.size(), null);
            }
        }
    }

    /**
     * Why the stream stopped at record {@code i}: the refusal of the record before it or of it,
     * read alone; {@code e} (or that the records do not hold one value each) if both read well.
     */
    private static IOException refused(ObjectReader reader, List<byte[]> records, int i, Exception e) {
        ObjectReader one = one(reader);
        for (int r = Math.max(0, i - 1); r <= Math.min(i, records.size() - 1); r++) {
            try {
                one.readValue(records.get(r));
            } catch (IOException | RuntimeException refusal) {
                return new IOException("record " + (r + 1) + ": " + (refusal instanceof JsonProcessingException j
                        ? JsonErrors.describe(j) : refusal.getMessage()), refusal);
            }
        }
        return e instanceof IOException io ? io
                : new IOException("record " + (i + 1) + ": the records do not hold one JSON value each", e);
    }

    /** The records one after another, as the parser reads them. */
    private static final class Concatenated extends InputStream {
        private final List<byte[]> records;
        private int record;
        private int at;

        Concatenated(List<byte[]> records) {
            this.records = records;
        }

        @Override
        public int read() {
            while (record < records.size()) {
                byte[] r = records.get(record);
                if (at < r.length) {
                    return r[at++] & 0xff;
                }
                record++;
                at = 0;
            }
            return -1;
        }

        @Override
        public int read(byte[] b, int off, int len) {
            int n = 0;
            while (n < len && record < records.size()) {
                byte[] r = records.get(record);
                int k = Math.min(len - n, r.length - at);
                System.arraycopy(r, at, b, off + n, k);
                n += k;
                at += k;
                if (at == r.length) {
                    record++;
                    at = 0;
                }
            }
            return n == 0 && len > 0 ? -1 : n;
        }
    }
}
