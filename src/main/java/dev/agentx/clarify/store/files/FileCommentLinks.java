package dev.agentx.clarify.store.files;

import com.fasterxml.jackson.core.type.TypeReference;
import dev.agentx.clarify.files.AtomicFiles;
import dev.agentx.clarify.files.JsonSupport;
import dev.agentx.clarify.store.CommentLinks;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.Map;
import java.util.TreeMap;

/**
 * {@link CommentLinks} in {@code .agentx/state/github/comments/issue-N.json} of each repository
 * under the data dir: a JSON object from effect key to comment id, replaced by a rename and not
 * synced (a cache: a machine crash may lose its last links, never tear the file).
 */
public final class FileCommentLinks implements CommentLinks {
    private static final TypeReference<TreeMap<String, Long>> MAP = new TypeReference<>() {
    };

    private final DataDirectory data;

    public FileCommentLinks(DataDirectory data) {
        this.data = data;
    }

    private Path file(String repo, int issue) {
        return data.stateDirOf(repo).resolve("github").resolve("comments").resolve("issue-" + issue + ".json");
    }

    @Override
    public synchronized void record(String repo, int issue, String key, long commentId) {
        Path f = file(repo, issue);
        TreeMap<String, Long> all = new TreeMap<>(read(f));
        if (Long.valueOf(commentId).equals(all.put(key, commentId))) {
            return;
        }
        try {
            Path temp = AtomicFiles.prepare(f, JsonSupport.shared().writeValueAsBytes(all), false);
            AtomicFiles.commit(temp, f, false);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @Override
    public Map<String, Long> of(String repo, int issue) {
        return read(file(repo, issue));
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
