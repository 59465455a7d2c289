package dev.agentx.clarify.files;

import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.databind.ObjectWriter;
import com.fasterxml.jackson.databind.SequenceWriter;
import com.fasterxml.jackson.databind.SerializationFeature;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;

/**
 * Writes values one after another, each as its own JSON record (no separator, no line end: a
 * {@link Journal} frames them), through one generator and one {@link SequenceWriter}: a compaction
 * writes a journal's records by the hundred thousand, and {@link ObjectWriter#writeValueAsBytes}
 * would make a generator and a serializer provider for each. The sequence writer does not flush
 * after each value; the generator is flushed into a buffer that each record is copied out of.
 * For one thread.
 */
public final class RecordWriter implements AutoCloseable {
    private final ByteArrayOutputStream buffer = new ByteArrayOutputStream(256);
    private final JsonGenerator generator;
    private final SequenceWriter values;

    public RecordWriter(ObjectWriter writer) {
        ObjectWriter w = writer.without(SerializationFeature.FLUSH_AFTER_WRITE_VALUE);
        try {
            generator = w.createGenerator(buffer);
            generator.setRootValueSeparator(null);
            values = w.writeValues(generator);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** {@code value} as JSON. */
    public byte[] write(Object value) {
        try {
            values.write(value);
            generator.flush();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write " + value.getClass().getSimpleName() + ": " + e.getMessage(),
                    e);
        }
        byte[] record = buffer.toByteArray();
        buffer.reset();
        return record;
    }

    @Override
    public void close() {
        try {
            values.close();
            generator.close();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
