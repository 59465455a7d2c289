package dev.agentx.clarify.events;

import com.fasterxml.jackson.core.JsonProcessingException;
import dev.agentx.clarify.files.JsonSupport;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.List;

/**
 * {@code events.jsonl}: one JSON object per line, appended with O_APPEND in a single write per
 * batch, so lines from concurrent processes never interleave, then forced to disk.
 */
public final class JsonlEventLog implements EventSink {
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
        try {
            for (ClarificationEvent e : events) {
                out.write(JsonSupport.shared().writeValueAsString(e).getBytes(StandardCharsets.UTF_8));
                out.write('\n');
            }
        } catch (JsonProcessingException e) {
            throw new IllegalStateException(e);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
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
}
