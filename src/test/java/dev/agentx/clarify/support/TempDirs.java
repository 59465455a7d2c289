package dev.agentx.clarify.support;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.stream.Stream;

/**
 * Folders for jqwik properties, which have no {@code @TempDir}: made in {@code @BeforeContainer},
 * removed in {@code @AfterContainer}, so that a run leaves nothing in the system's temp folder.
 */
public final class TempDirs {
    private TempDirs() {
    }

    public static Path create(String prefix) {
        try {
            return Files.createTempDirectory(prefix);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Removes {@code dir} and everything under it; nothing when it is null or gone. */
    public static void delete(Path dir) {
        if (dir == null || !Files.exists(dir)) {
            return;
        }
        try (Stream<Path> all = Files.walk(dir)) {
            for (Path p : all.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(p);
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot remove " + dir + ": " + e.getMessage(), e);
        }
    }
}
