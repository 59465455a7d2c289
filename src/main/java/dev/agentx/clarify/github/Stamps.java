package dev.agentx.clarify.github;

import dev.agentx.clarify.files.AtomicFiles;
import dev.agentx.clarify.files.DirectorySync;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.function.Predicate;
import java.util.stream.Stream;

/**
 * Marker files that hold the instant they were written (by the injected clock, not the file
 * system's), for "seen" delivery ids and "done" effect keys, and their pruning.
 */
public final class Stamps {
    private Stamps() {
    }

    public static void write(Path marker, Instant at) {
        write(marker, at, null);
    }

    /** As {@link #write(Path, Instant)}, sharing the directory's fsync through {@code dirSync} (null: its own). */
    public static void write(Path marker, Instant at, DirectorySync dirSync) {
        AtomicFiles.write(marker, at.toString().getBytes(StandardCharsets.US_ASCII), dirSync);
    }

    /** The instant in the marker; a damaged one counts as very old. */
    public static Instant read(Path marker) throws IOException {
        try {
            return Instant.parse(Files.readString(marker, StandardCharsets.US_ASCII).strip());
        } catch (DateTimeParseException e) {
            return Instant.EPOCH;
        }
    }

    /**
     * Deletes the markers in {@code dir} whose names match {@code names} and that are older than
     * {@code cutoff}; {@code removed} is told each deleted name.
     */
    public static void prune(Path dir, Predicate<String> names, Instant cutoff, java.util.function.Consumer<String> removed) {
        try (Stream<Path> s = Files.list(dir)) {
            for (Path p : s.filter(f -> names.test(f.getFileName().toString())).toList()) {
                if (read(p).isBefore(cutoff)) {
                    Files.deleteIfExists(p);
                    removed.accept(p.getFileName().toString());
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot prune " + dir + ": " + e.getMessage(), e);
        }
    }
}
