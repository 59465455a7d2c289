package dev.agentx.clarify.github;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.agentx.clarify.files.AtomicFiles;
import dev.agentx.clarify.files.JsonSupport;
import dev.agentx.clarify.store.Notes;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Which GitHub repository (its id, which never changes) the state kept under a repository's name
 * belongs to. The server keys its state by name; a name can pass to another repository (the
 * first deleted or renamed, a new one created under the old name), and that one's deliveries
 * must not act on, or show, the first one's threads. The id is recorded with the first delivery
 * that names the repository; a delivery whose repository has another id is refused ({@link
 * #conflict}) until the old state is moved aside (docs/operations.md). On files it is {@code
 * .agentx/state/github/repository.json} under the repository's root; on PostgreSQL the shared note
 * {@code repository/<owner>/<name>}.
 */
public final class RepositoryIds {
    private static final ObjectMapper JSON = JsonSupport.mapper();
    private final Path dataDir;
    private final Notes notes;
    /** Names whose recorded id was read or written by this process. */
    private final Map<String, Long> seen = new ConcurrentHashMap<>();

    /** {@code notes}: the shared notes on PostgreSQL, or null for the file store under {@code dataDir}. */
    public RepositoryIds(Path dataDir, Notes notes) {
        this.dataDir = dataDir;
        this.notes = notes;
    }

    /**
     * Why a delivery about {@code ref} with GitHub's repository id {@code id} must not be acted on,
     * or empty: the id recorded for the name is another. An id of 0 (a payload without one) is not
     * checked. The first id seen for a name is recorded.
     */
    public Optional<String> conflict(RepoRef ref, long id) {
        if (id <= 0) {
            return Optional.empty();
        }
        String name = ref.fullName();
        Long known = seen.get(name);
        if (known == null) {
            synchronized (this) {
                known = seen.get(name);
                if (known == null) {
                    OptionalLong recorded = read(ref);
                    if (recorded.isEmpty()) {
                        write(ref, id);
                    }
                    known = recorded.isPresent() ? recorded.getAsLong() : id;
                    seen.put(name, known);
                }
            }
        }
        if (known == id) {
            return Optional.empty();
        }
        return Optional.of("repository " + name + " is now another GitHub repository (id " + id + "); the state kept "
                + "under its name is of repository id " + known + ", deleted or renamed since. Its deliveries are not "
                + "acted on, so that its threads are not shown to the new one: move the old state aside and restart "
                + "the server (docs/operations.md, \"A repository name used again\")");
    }

    private OptionalLong read(RepoRef ref) {
        if (notes != null) {
            return notes.get(noteName(ref), JsonNode.class).map(n -> n.path("id").asLong(0)).filter(v -> v > 0)
                    .map(OptionalLong::of).orElse(OptionalLong.empty());
        }
        try {
            long v = JSON.readTree(Files.readAllBytes(fileOf(ref))).path("id").asLong(0);
            return v > 0 ? OptionalLong.of(v) : OptionalLong.empty();
        } catch (NoSuchFileException e) {
            return OptionalLong.empty();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + fileOf(ref), e);
        }
    }

    private void write(RepoRef ref, long id) {
        if (notes != null) {
            notes.put(noteName(ref), Map.of("id", id));
            return;
        }
        Path file = fileOf(ref);
        try {
            Files.createDirectories(file.getParent());
        } catch (IOException e) {
            throw new UncheckedIOException("cannot create " + file.getParent(), e);
        }
        AtomicFiles.write(file, ("{\"id\":" + id + "}\n").getBytes(StandardCharsets.UTF_8));
    }

    /** The note of {@code ref}'s id on PostgreSQL. */
    static String noteName(RepoRef ref) {
        return "repository/" + ref.fullName();
    }

    /** The file of {@code ref}'s id on the file store. */
    Path fileOf(RepoRef ref) {
        return ref.rootIn(dataDir).resolve(".agentx/state/github/repository.json");
    }
}
