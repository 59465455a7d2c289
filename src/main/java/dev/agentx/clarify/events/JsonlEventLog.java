package dev.agentx.clarify.events;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.agentx.clarify.files.JsonSupport;
import java.io.BufferedReader;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;

/**
 * {@code events.jsonl}: one JSON object per line, appended with O_APPEND in a single write per
 * batch, so lines from concurrent processes never interleave, then forced to disk.
 */
public final class JsonlEventLog implements EventSink {
    private final Path file;
    private final ObjectMapper mapper = JsonSupport.mapper();

    public JsonlEventLog(Path file) {
        this.file = file;
    }

    /** What {@link #read(EventType)} found: the matching events, oldest first, and the lines it could not read. */
    public record Read(List<ClarificationEvent> events, int unreadableLines) {
        public Read {
            events = List.copyOf(events);
        }
    }

    /**
     * The events of one type, oldest first. A line that is not a valid event (a torn last line
     * after a crash, a hand edit) is skipped and counted, never fatal: the log is a record of what
     * happened, and the ledgers stay the source of truth. A missing file holds no events.
     */
    public Read read(EventType type) {
        List<ClarificationEvent> out = new ArrayList<>();
        int unreadable = 0;
        String quoted = "\"" + type.wire() + "\"";
        try (BufferedReader in = Files.newBufferedReader(file, StandardCharsets.UTF_8)) {
            for (String line = in.readLine(); line != null; line = in.readLine()) {
                if (!line.contains(quoted)) {
                    continue; // another kind of event: not parsed at all, which keeps a long log cheap
                }
                try {
                    ClarificationEvent e = mapper.readValue(line, ClarificationEvent.class);
                    if (e != null && e.event() == type) {
                        out.add(e);
                    }
                } catch (JsonProcessingException | IllegalArgumentException e) {
                    unreadable++;
                }
            }
        } catch (NoSuchFileException e) {
            return new Read(List.of(), 0);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + file + ": " + e.getMessage(), e);
        }
        return new Read(out, unreadable);
    }

    @Override
    public void publish(List<ClarificationEvent> events) {
        if (events.isEmpty()) {
            return;
        }
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        try {
            for (ClarificationEvent e : events) {
                out.write(mapper.writeValueAsString(e).getBytes(StandardCharsets.UTF_8));
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
