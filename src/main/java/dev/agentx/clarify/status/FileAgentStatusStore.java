package dev.agentx.clarify.status;

import dev.agentx.clarify.files.JsonErrors;
import dev.agentx.clarify.files.AtomicFiles;
import dev.agentx.clarify.lock.LockManager;
import dev.agentx.clarify.protocol.ClarifyException;
import dev.agentx.clarify.protocol.ErrorCode;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.UnaryOperator;

/**
 * {@code <state>/agent-status.json}, written atomically under its own lock.
 *
 * <p>Every clarification operation updates this one file, so threads of one process that update
 * it at the same time (the server's worker lanes) combine: each queues its change, and whoever
 * takes the combiner applies every change queued so far in one read-modify-write under the file
 * lock and one durable write, then releases the others. Each {@link #update} still returns only
 * once its own change is on disk (or throws what went wrong with it); other processes still
 * take turns through the file lock.
 */
public final class FileAgentStatusStore implements AgentStatusStore {
    private final Path file;
    private final LockManager locks;
    private final AgentStatusCodec codec = new AgentStatusCodec();
    private final ReentrantLock combiner = new ReentrantLock();
    private final Queue<Change> waiting = new ConcurrentLinkedQueue<>();

    /** One queued update; {@code done} and {@code failure} are set by the thread that applied it, under the combiner. */
    private static final class Change {
        final String actor;
        final UnaryOperator<Map<String, AgentStatus>> op;
        boolean done;
        RuntimeException failure;

        Change(String actor, UnaryOperator<Map<String, AgentStatus>> op) {
            this.actor = actor;
            this.op = op;
        }
    }

    public FileAgentStatusStore(Path stateDir, LockManager locks) {
        this.file = stateDir.resolve("agent-status.json");
        this.locks = locks;
    }

    @Override
    public Map<String, AgentStatus> read() {
        try {
            return codec.decode(Files.readAllBytes(file));
        } catch (NoSuchFileException e) {
            return new TreeMap<>();
        } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
            throw new ClarifyException(ErrorCode.INTERNAL, file + " is damaged: " + JsonErrors.describe(e)
                    + ". It only mirrors the ledgers: move it away and it is rebuilt as agents act.", e);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + file + ": " + e.getMessage(), e);
        }
    }

    @Override
    public void update(String actor, UnaryOperator<Map<String, AgentStatus>> change) {
        Change me = new Change(actor, change);
        waiting.add(me);
        combiner.lock();
        try {
            if (!me.done) { // else the thread before us applied it with its own
                List<Change> batch = new ArrayList<>();
                for (Change c = waiting.poll(); c != null; c = waiting.poll()) {
                    batch.add(c);
                }
                apply(batch);
            }
        } finally {
            combiner.unlock();
        }
        if (me.failure != null) {
            throw me.failure;
        }
    }

    /** Whether this JVM has read and encoded the file once (see FileLedgerStore.update: the same reason). */
    private static volatile boolean warm;

    /** Applies the changes in the order queued, in one locked read-modify-write; a change that throws fails alone. */
    private void apply(List<Change> batch) {
        if (!warm) {
            try {
                codec.encode(read());
            } catch (RuntimeException e) {
                // a damaged file: the locked read below reports it
            }
            warm = true;
        }
        try {
            locks.withLock(file, batch.get(0).actor, () -> {
                Map<String, AgentStatus> before = read();
                Map<String, AgentStatus> after = before;
                for (Change c : batch) {
                    try {
                        after = new TreeMap<>(c.op.apply(after));
                    } catch (RuntimeException e) {
                        c.failure = e;
                    }
                }
                if (!after.equals(before)) {
                    // not fsynced: the file mirrors the ledgers (the truth, written durably) and the
                    // hooks; a crash of the machine may lose its last change, never tear it
                    java.nio.file.Path temp = AtomicFiles.prepare(file, codec.encode(after), false);
                    try {
                        locks.commit(file, () -> AtomicFiles.commit(temp, file, false));
                    } finally {
                        AtomicFiles.discard(temp);
                    }
                }
                return null;
            });
        } catch (RuntimeException e) {
            for (Change c : batch) {
                if (c.failure == null) {
                    c.failure = e;
                }
            }
        } finally {
            for (Change c : batch) {
                c.done = true;
            }
        }
    }
}
