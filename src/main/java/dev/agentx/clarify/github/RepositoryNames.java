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
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;

/**
 * The repository a delivery names, as the server keeps its state: by name. Two things about a
 * name are GitHub's and not the payload's spelling. Owner and repository names are the same in
 * any case ({@link #known}): a repository renamed to another case arrives so spelt, and without
 * this its state would start again under a second folder or key, with clarification ids issued
 * a second time. And a name can pass to another repository (the first deleted or renamed, a new
 * one created under its name), whose deliveries must not act on, or show, the first one's
 * threads ({@link #conflict}): the repository's id, which never changes, is recorded with the
 * first delivery that names it (on files {@code .agentx/state/github/repository.json} under the
 * repository's root, on PostgreSQL the shared note {@code repository/<owner>/<name>}), and a
 * delivery whose repository has another id is refused until the old state is moved aside
 * (docs/operations.md).
 */
public final class RepositoryNames {
    private static final ObjectMapper JSON = JsonSupport.mapper();
    private final Path dataDir;
    private final Notes notes;
    private final Supplier<List<String>> served;
    /** Repositories by their names in lower case, as the server keeps them. */
    private final Map<String, RepoRef> spelt = new ConcurrentHashMap<>();
    /** Names whose recorded id was read or written by this process. */
    private final Map<String, Long> seen = new ConcurrentHashMap<>();

    /**
     * {@code notes}: the shared notes on PostgreSQL, or null for the file store under {@code
     * dataDir}; {@code served}: {@code owner/name} of every repository the store holds state of.
     */
    public RepositoryNames(Path dataDir, Notes notes, Supplier<List<String>> served) {
        this.dataDir = dataDir;
        this.notes = notes;
        this.served = served;
    }

    /**
     * {@code ref} spelt as the store already keeps it; a name the store holds nothing of yet is
     * kept as first seen. The store is listed once per name and process.
     */
    public RepoRef known(RepoRef ref) {
        return spelt.computeIfAbsent(ref.fullName().toLowerCase(Locale.ROOT), k -> served.get().stream()
                .filter(name -> name.equalsIgnoreCase(ref.fullName())).findFirst()
                .map(RepoRef::parse).orElse(ref));
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
        long known = seen.computeIfAbsent(name, k -> {
            OptionalLong recorded = read(ref);
            if (recorded.isPresent()) {
                return recorded.getAsLong();
            }
            write(ref, id);
            return id;
        });
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
