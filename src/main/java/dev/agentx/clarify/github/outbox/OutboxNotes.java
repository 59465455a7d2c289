package dev.agentx.clarify.github.outbox;

import com.fasterxml.jackson.databind.JsonNode;
import dev.agentx.clarify.files.JsonSupport;
import dev.agentx.clarify.store.files.OutboxJournal;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.locks.ReentrantReadWriteLock;

/**
 * The outbox's notes: a small JSON value under a name, written to the journal after the effects it
 * describes, so the sync that makes them durable makes it durable too (what the issue mirror has
 * queued for an issue: no file and no fsync of its own). The latest value per name is kept in
 * memory, as its JSON bytes (a note per issue stays for good, and a byte array costs the collector
 * less than a tree), and by every compaction ({@link EffectQueue#prune}).
 */
final class OutboxNotes {
    private final OutboxJournal journal;
    /** {@link EffectQueue#changing}: held for reading while a record is written and memory updated to match. */
    private final ReentrantReadWriteLock changing;
    private final LaneSync lanes;
    private final Map<String, byte[]> notes = new ConcurrentHashMap<>();

    /** {@code kept}: the notes the journal holds, by name. */
    OutboxNotes(OutboxJournal journal, ReentrantReadWriteLock changing, LaneSync lanes, Map<String, JsonNode> kept)
            throws IOException {
        this.journal = journal;
        this.changing = changing;
        this.lanes = lanes;
        for (Map.Entry<String, JsonNode> n : kept.entrySet()) {
            notes.put(n.getKey(), JsonSupport.shared().writeValueAsBytes(n.getValue()));
        }
    }

    /**
     * Records {@code value} (written as JSON) under {@code name}, replacing the note before it,
     * after the effects this thread queued: the thread's next sync makes it durable together with
     * them (and a crash that loses it loses no effect it speaks of). Seen by {@link #get} at once,
     * by every thread.
     */
    void put(String name, Object value) {
        byte[] bytes;
        try {
            bytes = JsonSupport.shared().writeValueAsBytes(value);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        long[] mark = new long[1];
        changing.readLock().lock();
        try {
            // under the name's lock: notes of one name reach the journal in the order they are kept
            notes.compute(name, (k, before) -> {
                mark[0] = journal.note(name, bytes);
                return bytes;
            });
        } finally {
            changing.readLock().unlock();
        }
        lanes.cover(mark[0]);
    }

    /**
     * Forgets the note {@code name}, if there is one. The record is not waited for: should a crash
     * lose it, the note is back at the next start, so forget only what may come back.
     */
    void forget(String name) {
        changing.readLock().lock();
        try {
            notes.computeIfPresent(name, (k, v) -> {
                journal.forget(name);
                return null;
            });
        } finally {
            changing.readLock().unlock();
        }
    }

    /** The names of the notes that start with {@code prefix}. */
    List<String> names(String prefix) {
        return notes.keySet().stream().filter(n -> n.startsWith(prefix)).sorted().toList();
    }

    /** The latest note recorded under {@code name}, read as {@code type}, if any. */
    <T> Optional<T> get(String name, Class<T> type) {
        byte[] bytes = notes.get(name);
        if (bytes == null) {
            return Optional.empty();
        }
        try {
            return Optional.of(JsonSupport.idKeyed().readValue(bytes, type)); // an issue's note is keyed by record ids
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read the note " + name + " of the outbox journal as "
                    + type.getSimpleName() + ": " + e.getMessage(), e);
        }
    }

    int size() {
        return notes.size();
    }

    /** The records of the notes, for a compaction's snapshot. */
    void writeTo(OutboxJournal.Head out) {
        for (Map.Entry<String, byte[]> n : notes.entrySet()) {
            out.note(n.getKey(), n.getValue());
        }
    }

    /**
     * The notes whose names start with {@code prefix} in the outbox journal of {@code dir}, by name,
     * read without changing the file (a server may be appending to it; a half-written last record
     * is left out). Empty without a journal.
     */
    static Map<String, JsonNode> in(Path dir, String prefix) {
        Map<String, JsonNode> out = new TreeMap<>();
        OutboxJournal.readOnly(dir.resolve("journal")).notes().forEach((name, value) -> {
            if (name.startsWith(prefix)) {
                out.put(name, value);
            }
        });
        return out;
    }
}
