package dev.agentx.clarify.store;

import com.fasterxml.jackson.databind.JsonNode;
import dev.agentx.clarify.files.AtomicFiles;
import dev.agentx.clarify.files.JsonSupport;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;

/**
 * Where the recovery pass stopped asking GitHub for missed deliveries, and what it asked for, as
 * one JSON document ({@code {"checkedThrough": instant, "asked": {guid: instant}}}, the pass's
 * own): on files the data dir's {@code recovery.json}, on PostgreSQL the note {@link
 * Notes#RECOVERY} every replica reads. The server's recovery pass and {@code agentx store copy}
 * read and write it here.
 */
public interface RecoveryPosition {
    /** The document last written, if any. */
    Optional<JsonNode> read();

    void write(JsonNode position);

    /** This one, or {@code before} until this one has been written (a server moved from files). */
    default RecoveryPosition or(RecoveryPosition before) {
        RecoveryPosition self = this;
        return new RecoveryPosition() {
            @Override
            public Optional<JsonNode> read() {
                return self.read().or(before::read);
            }

            @Override
            public void write(JsonNode position) {
                self.write(position);
            }

            @Override
            public String toString() {
                return self.toString();
            }
        };
    }

    /**
     * A server's position: with {@code shared} (PostgreSQL) its note, read from the data dir's
     * {@code file} until a pass has written the note (a server moved from files); without, the file.
     */
    static RecoveryPosition ofServer(Path file, Notes shared) {
        return shared == null ? file(file) : note(shared).or(file(file));
    }

    /**
     * A file ({@code recovery.json} of a data dir), replaced whole at each write.
     *
     * @throws UncheckedIOException from {@link #read} when the file is there but not JSON
     */
    static RecoveryPosition file(Path file) {
        return new RecoveryPosition() {
            @Override
            public Optional<JsonNode> read() {
                if (!Files.exists(file)) {
                    return Optional.empty();
                }
                try {
                    return Optional.of(JsonSupport.shared().readTree(file.toFile()));
                } catch (IOException e) {
                    throw new UncheckedIOException(file + " is not JSON: " + e.getMessage(), e);
                }
            }

            @Override
            public void write(JsonNode position) {
                try {
                    AtomicFiles.write(file, JsonSupport.shared().writerWithDefaultPrettyPrinter()
                            .writeValueAsBytes(position));
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            }

            @Override
            public String toString() {
                return file.toString();
            }
        };
    }

    /** The note {@link Notes#RECOVERY} of {@code notes}, which every replica on one database reads. */
    static RecoveryPosition note(Notes notes) {
        return new RecoveryPosition() {
            @Override
            public Optional<JsonNode> read() {
                return notes.get(Notes.RECOVERY, JsonNode.class);
            }

            @Override
            public void write(JsonNode position) {
                notes.put(Notes.RECOVERY, position);
            }

            @Override
            public String toString() {
                return "the shared note " + Notes.RECOVERY;
            }
        };
    }
}
