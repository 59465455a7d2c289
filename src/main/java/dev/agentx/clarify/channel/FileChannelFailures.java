package dev.agentx.clarify.channel;

import com.fasterxml.jackson.annotation.JsonPropertyOrder;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.type.TypeReference;
import dev.agentx.clarify.files.JsonErrors;
import dev.agentx.clarify.files.AtomicFiles;
import dev.agentx.clarify.files.RuntimeFolder;
import dev.agentx.clarify.files.JsonSupport;
import dev.agentx.clarify.lock.LockManager;
import dev.agentx.clarify.protocol.ClarifyException;
import dev.agentx.clarify.protocol.ErrorCode;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Instant;
import java.util.TreeMap;

/**
 * {@code <state>/channel-failures.json}: for each record whose automatic channel is failing,
 * {@code {"round", "failures", "lastError", "lastFailureAt"}}; written atomically under its own
 * lock (never the ledger's). An entry goes away when the round is answered or the record escalates.
 */
public final class FileChannelFailures implements ChannelFailures {
    public static final String FILE = "channel-failures.json";

    /** Made on first read: a type reference reflects on generic types, which every CLI start would pay for. */
    private static final class Type {
        static final TypeReference<TreeMap<String, Entry>> ENTRIES = new TypeReference<>() {
        };
    }

    /** One record's failures in a row on one round. */
    @JsonPropertyOrder({"round", "failures", "lastError", "lastFailureAt"})
    public record Entry(int round, int failures, String lastError, Instant lastFailureAt) {
    }

    private final Path file;
    private final LockManager locks;

    public FileChannelFailures(Path stateDir, LockManager locks) {
        this.file = stateDir.resolve(FILE);
        this.locks = locks;
    }

    public TreeMap<String, Entry> read() {
        try {
            byte[] bytes = Files.readAllBytes(file);
            return bytes.length == 0 ? new TreeMap<>() : JsonSupport.shared().readValue(bytes, Type.ENTRIES);
        } catch (NoSuchFileException e) {
            return new TreeMap<>();
        } catch (JsonProcessingException e) {
            throw new ClarifyException(ErrorCode.INTERNAL, file + " is damaged: " + JsonErrors.describe(e)
                    + ". It only counts channel failures: move it away and counting starts again.", e);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + file + ": " + e.getMessage(), e);
        }
    }

    @Override
    public int failed(String id, int round, String error, Instant at) {
        return locks.withLock(file, "agentx", () -> {
            TreeMap<String, Entry> all = read();
            Entry old = all.get(id);
            int n = old == null || old.round() != round ? 1 : old.failures() + 1;
            all.put(id, new Entry(round, n, error, at));
            write(all);
            return n;
        });
    }

    @Override
    public void clear(String id) {
        if (!read().containsKey(id)) {
            return;
        }
        locks.withLock(file, "agentx", () -> {
            TreeMap<String, Entry> all = read();
            if (all.remove(id) != null) {
                write(all);
            }
            return null;
        });
    }

    private void write(TreeMap<String, Entry> all) {
        try {
            AtomicFiles.write(file, RuntimeFolder.enter(RuntimeFolder.of(file)),
                    (JsonSupport.pretty().writeValueAsString(all) + "\n").getBytes(StandardCharsets.UTF_8));
        } catch (JsonProcessingException e) {
            throw new IllegalStateException(e);
        }
    }
}
