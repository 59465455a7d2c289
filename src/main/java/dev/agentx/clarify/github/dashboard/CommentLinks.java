package dev.agentx.clarify.github.dashboard;

import com.fasterxml.jackson.core.type.TypeReference;
import dev.agentx.clarify.files.AtomicFiles;
import dev.agentx.clarify.files.JsonSupport;
import dev.agentx.clarify.github.RepoRef;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;

/**
 * The ids of the comments the App posted, by their effect key, per issue, so that the dashboard
 * links each thread entry to its comment on GitHub: {@code .agentx/state/github/comments/issue-N.json}
 * of the repository. It is a cache of what GitHub holds, written without a sync; a lost entry
 * only loses a link (the issue's link stays).
 */
public final class CommentLinks {
    private static final TypeReference<TreeMap<String, Long>> MAP = new TypeReference<>() {
    };

    private final Path dataDir;

    /** @param dataDir {@code $AGENTX_DATA_DIR} */
    public CommentLinks(Path dataDir) {
        this.dataDir = dataDir;
    }

    private Path file(RepoRef repo, int issue) {
        return repo.rootIn(dataDir).resolve(".agentx").resolve("state").resolve("github").resolve("comments")
                .resolve("issue-" + issue + ".json");
    }

    /** Records that the comment of effect {@code key} on the issue is GitHub's comment {@code id}. */
    public synchronized void record(RepoRef repo, int issue, String key, long id) {
        Path f = file(repo, issue);
        TreeMap<String, Long> all = new TreeMap<>(read(f));
        if (Long.valueOf(id).equals(all.put(key, id))) {
            return;
        }
        try {
            Path temp = AtomicFiles.prepare(f, JsonSupport.shared().writeValueAsBytes(all), false);
            AtomicFiles.commit(temp, f, false);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The comment ids of the issue by effect key. */
    public Map<String, Long> of(RepoRef repo, int issue) {
        return read(file(repo, issue));
    }

    /** The id of the comment of effect {@code key}, if recorded. */
    public Optional<Long> find(RepoRef repo, int issue, String key) {
        return Optional.ofNullable(of(repo, issue).get(key));
    }

    private static Map<String, Long> read(Path f) {
        try {
            return JsonSupport.shared().readValue(Files.readAllBytes(f), MAP);
        } catch (NoSuchFileException e) {
            return Map.of();
        } catch (IOException e) {
            return Map.of(); // a damaged cache loses links, nothing else
        }
    }
}
