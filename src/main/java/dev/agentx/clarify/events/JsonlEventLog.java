package dev.agentx.clarify.events;

import com.fasterxml.jackson.core.JsonEncoding;
import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.List;

/**
 * {@code events.jsonl}: one JSON object per line, appended with O_APPEND in a single write per
 * batch, so lines from concurrent processes never interleave, then forced to disk.
 */
public final class JsonlEventLog implements EventSink {
    private static final JsonFactory JSON = new JsonFactory();

    private final Path file;

    public JsonlEventLog(Path file) {
        this.file = file;
    }

    @Override
    public void publish(List<ClarificationEvent> events) {
        if (events.isEmpty()) {
            return;
        }
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        for (ClarificationEvent e : events) {
            writeLine(out, e);
        }
        try {
            Files.createDirectories(file.getParent());
            try (FileChannel ch = FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
                    StandardOpenOption.APPEND)) {
                ByteBuffer buf = ByteBuffer.wrap(out.toByteArray());
                while (buf.hasRemaining()) {
                    ch.write(buf);
                }
                ch.force(false);
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot append to " + file + ": " + e.getMessage(), e);
        }
    }

    /** One event as a single JSON line, fields in the documented order. */
    static void writeLine(ByteArrayOutputStream out, ClarificationEvent e) {
        try (JsonGenerator g = JSON.createGenerator(out, JsonEncoding.UTF8)) {
            g.writeStartObject();
            g.writeStringField("event", e.event().wire());
            g.writeStringField("clarificationId", e.clarificationId());
            g.writeNumberField("issueNumber", e.issueNumber());
            g.writeStringField("fromAgent", e.fromAgent());
            g.writeStringField("toAgent", e.toAgent());
            g.writeStringField("topic", e.topic());
            g.writeBooleanField("blocking", e.blocking());
            g.writeNumberField("round", e.round());
            g.writeStringField("status", e.status().wire());
            g.writeStringField("timestamp", e.timestamp().toString());
            g.writeEndObject();
        } catch (IOException ex) {
            throw new UncheckedIOException(ex);
        }
        out.write('\n');
    }
}
