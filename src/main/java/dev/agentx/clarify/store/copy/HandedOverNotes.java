package dev.agentx.clarify.store.copy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.agentx.clarify.files.AtomicFiles;
import dev.agentx.clarify.files.JsonSupport;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.Iterator;
import java.util.Map;
import java.util.SortedMap;
import java.util.TreeMap;

/**
 * The notes a copy hands over to a data folder, beside a repository's ledgers: {@code
 * .agentx/state/github/notes.json}, one JSON object of note name to value (the merge gate's record
 * of pull requests). A server keeps its notes in its outbox's journal, which the documented move
 * back to files leaves behind (only the state folders move into the data dir); so the copy writes
 * them in the state folder, and the server on files takes them into its outbox at its start and
 * removes the file ({@link #takeIn}). A file still there when a data folder is copied again is
 * newer than its journal's notes (no server started on it since) and is read over them.
 */
public final class HandedOverNotes {
    private HandedOverNotes() {
    }

    /** The file under a repository's state folder {@code stateDir}. */
    public static Path fileIn(Path stateDir) {
        return stateDir.resolve("github").resolve("notes.json");
    }

    /** The notes in {@code file} by name, each as its JSON text; empty without the file. */
    static SortedMap<String, String> read(Path file) {
        SortedMap<String, String> out = new TreeMap<>();
        readTrees(file).forEach((name, value) -> out.put(name, value.toString()));
        return out;
    }

    /** Writes {@code notes} (name to JSON text) to {@code file}, durably; nothing for none. */
    static void write(Path file, SortedMap<String, String> notes) {
        if (notes.isEmpty()) {
            return;
        }
        ObjectNode all = JsonSupport.shared().createObjectNode();
        try {
            for (Map.Entry<String, String> n : notes.entrySet()) {
                all.set(n.getKey(), JsonSupport.shared().readTree(n.getValue()));
            }
            AtomicFiles.write(file, JsonSupport.shared().writeValueAsBytes(all));
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write " + file + ": " + e.getMessage(), e);
        }
    }

    /** Where a server on files puts a note so that it lasts (its outbox). */
    @FunctionalInterface
    public interface Keeper {
        void keep(String name, JsonNode value);
    }

    /**
     * Takes the notes of {@code file} into {@code keeper}, then runs {@code durable} (which must
     * make them last: the outbox's sync) and removes the file. A crash before the removal takes
     * them in again at the next start, the same values: nothing changed them meanwhile. Returns
     * how many there were.
     */
    public static int takeIn(Path file, Keeper keeper, Runnable durable) {
        Map<String, JsonNode> notes = readTrees(file);
        if (notes.isEmpty()) {
            return 0;
        }
        notes.forEach(keeper::keep);
        durable.run();
        try {
            Files.deleteIfExists(file);
            AtomicFiles.fsyncDirectory(file.getParent());
        } catch (IOException e) {
            throw new UncheckedIOException("cannot remove " + file + " once its notes were taken in: " + e.getMessage(),
                    e);
        }
        return notes.size();
    }

    private static Map<String, JsonNode> readTrees(Path file) {
        Map<String, JsonNode> out = new TreeMap<>();
        JsonNode all;
        try {
            all = JsonSupport.shared().readTree(Files.readAllBytes(file));
        } catch (NoSuchFileException e) {
            return out;
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read the notes handed over in " + file + ": " + e.getMessage(), e);
        }
        if (all == null || !all.isObject()) {
            throw new IllegalStateException("the notes handed over in " + file + " are not a JSON object of note "
                    + "names to values: mend or remove the file");
        }
        for (Iterator<Map.Entry<String, JsonNode>> it = all.fields(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> n = it.next();
            out.put(n.getKey(), n.getValue());
        }
        return out;
    }
}
