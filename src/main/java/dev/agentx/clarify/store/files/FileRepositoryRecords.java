package dev.agentx.clarify.store.files;

import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.agentx.clarify.files.AtomicFiles;
import dev.agentx.clarify.files.JsonSupport;
import dev.agentx.clarify.store.RepositoryRecords;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Stream;

/**
 * {@link RepositoryRecords} in the data dir: each repository's record in {@code
 * repos/<id>/repository.json} beside its {@code .agentx/}, the installations that may not be posted
 * through in {@code installations.json}. Each written atomically; one server per data dir.
 */
public final class FileRepositoryRecords implements RepositoryRecords {
    static final String RECORD = "repository.json";
    private static final String INSTALLATIONS = "installations.json";
    private final ObjectMapper json = JsonSupport.mapper();
    private final Path dir;

    public FileRepositoryRecords(Path dataDir) {
        this.dir = dataDir;
    }

    @Override
    public List<Repository> repositories() {
        Path repos = dir.resolve("repos");
        List<Repository> out = new ArrayList<>();
        if (!Files.isDirectory(repos)) {
            return out;
        }
        try (Stream<Path> keys = Files.list(repos)) {
            for (Path key : keys.filter(p -> DataDirectory.isKey(p.getFileName().toString())).sorted().toList()) {
                Path file = key.resolve(RECORD);
                try {
                    Repository r = json.readValue(Files.readAllBytes(file), Repository.class);
                    if (r.id() == Long.parseLong(key.getFileName().toString())) {
                        out.add(r);
                    }
                } catch (NoSuchFileException e) {
                    // a folder without a record: not a repository the server has seen
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read the repositories' records under " + repos + ": "
                    + e.getMessage(), e);
        }
        return out;
    }

    @Override
    public void put(Repository r) {
        Path file = dir.resolve("repos").resolve(r.stateKey()).resolve(RECORD);
        try {
            Files.createDirectories(file.getParent());
            AtomicFiles.write(file, json.writerWithDefaultPrettyPrinter().writeValueAsBytes(r));
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write " + file + ": " + e.getMessage(), e);
        }
    }

    @Override
    public synchronized List<Installation> installations() {
        return List.copyOf(readInstallations().values());
    }

    @Override
    public synchronized void put(Installation i) {
        Map<Long, Installation> all = readInstallations();
        all.put(i.id(), i);
        writeInstallations(all);
    }

    @Override
    public synchronized void forgetInstallation(long id) {
        Map<Long, Installation> all = readInstallations();
        if (all.remove(id) != null) {
            writeInstallations(all);
        }
    }

    private Map<Long, Installation> readInstallations() {
        Path file = dir.resolve(INSTALLATIONS);
        Map<Long, Installation> out = new TreeMap<>();
        try {
            List<Installation> list = json.readValue(Files.readAllBytes(file), new TypeReference<List<Installation>>() {
            });
            list.forEach(i -> out.put(i.id(), i));
        } catch (NoSuchFileException e) {
            // none recorded
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + file + ": " + e.getMessage(), e);
        }
        return out;
    }

    private void writeInstallations(Map<Long, Installation> all) {
        Path file = dir.resolve(INSTALLATIONS);
        try {
            AtomicFiles.write(file, json.writerWithDefaultPrettyPrinter().writeValueAsBytes(List.copyOf(all.values())));
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write " + file + ": " + e.getMessage(), e);
        }
    }
}
