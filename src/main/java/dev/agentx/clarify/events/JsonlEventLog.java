package dev.agentx.clarify.events;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectReader;
import com.fasterxml.jackson.databind.ObjectWriter;
import dev.agentx.clarify.files.Directories;
import dev.agentx.clarify.files.IoErrors;
import dev.agentx.clarify.files.StateJson;
import java.io.BufferedReader;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.charset.StandardCharsets;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;

/**
 * {@code events.jsonl}: one JSON object per line, appended with O_APPEND in a single write per
 * batch, so lines from concurrent processes never interleave. The append is not synced: the log
 * records what the ledgers (written durably first) already hold, so a crash of the machine can
 * lose its last lines, never show an event whose ledger change was lost; a torn last line is
 * skipped by {@link #read}. Every process sees the appended lines at once (the page cache). Each
 * line is a {@link ClarificationEvent} bound by Jackson through {@link StateJson}.
 */
public final class JsonlEventLog implements EventLog {
    private final Path file;

    public JsonlEventLog(Path file) {
        this.file = file;
    }

    /**
     * The events of one type, oldest first. A line that is not a valid event (a torn last line
     * after a crash, a hand edit) is skipped and counted, never fatal: the log is a record of what
     * happened, and the ledgers stay the source of truth. A missing file holds no events.
     */
    @Override
    public Read read(EventType type) {
        return read(type, "\"" + type.wire() + "\"");
    }

    @Override
    public Read all() {
        return read(null, "");
    }

    /** The events of {@code type} (null: all) on lines that contain {@code quoted}. */
    private Read read(EventType type, String quoted) {
        List<ClarificationEvent> out = new ArrayList<>();
        int unreadable = 0;
        // bytes that are not UTF-8 (a hand edit, a torn write) become U+FFFD instead of failing the
        // whole read: such a line is then skipped and counted like any other that does not parse
        try (BufferedReader in = new BufferedReader(new InputStreamReader(Files.newInputStream(file),
                StandardCharsets.UTF_8))) {
            for (String line = in.readLine(); line != null; line = in.readLine()) {
                if (line.isBlank() || !line.contains(quoted)) {
                    continue; // another kind of event: not parsed at all, which keeps a long log cheap
                }
                try {
                    ClarificationEvent e = Json.READER.readValue(line);
                    if (e != null && (type == null || e.event() == type)) {
                        out.add(e);
                    } else if (e == null) {
                        unreadable++;
                    }
                } catch (JsonProcessingException | IllegalArgumentException e) {
                    unreadable++;
                }
            }
        } catch (NoSuchFileException e) {
            return new Read(List.of(), 0);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + file + ": " + IoErrors.why(e), e);
        }
        return new Read(out, unreadable);
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
            FileChannel opened;
            try {
                opened = FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
                        StandardOpenOption.APPEND);
            } catch (NoSuchFileException e) {
                // the state folder is made on demand: looked at only when the open finds it missing
                Directories.ensure(file.getParent());
                opened = FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
                        StandardOpenOption.APPEND);
            }
            try (FileChannel ch = opened) {
                ByteBuffer buf = ByteBuffer.wrap(out.toByteArray());
                while (buf.hasRemaining()) {
                    ch.write(buf);
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot append to " + file + ": " + IoErrors.why(e), e);
        }
    }

    /** One event as JSON (no line end), fields in the documented order: the line's text, for other stores too. */
    public static byte[] json(ClarificationEvent e) {
        try {
            return Json.WRITER.writeValueAsBytes(e);
        } catch (JsonProcessingException ex) {
            throw new UncheckedIOException(ex);
        }
    }

    /** One event as a single JSON line, fields in the documented order. */
    static void writeLine(ByteArrayOutputStream out, ClarificationEvent e) {
        out.writeBytes(json(e));
        out.write('\n');
    }

    /** Builds the writer of a line now, if it is not built yet (see {@code LedgerCodec.prepare}). */
    public static void prepare() {
        Json.WRITER.getClass();
    }

    /** The reader and writer of a line, made on first use. */
    private static final class Json {
        static final ObjectReader READER = StateJson.mapper().readerFor(ClarificationEvent.class);
        static final ObjectWriter WRITER = StateJson.mapper().writerFor(ClarificationEvent.class);
    }
}
