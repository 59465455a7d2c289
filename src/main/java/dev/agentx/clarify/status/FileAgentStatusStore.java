package dev.agentx.clarify.status;

import dev.agentx.clarify.files.AtomicFiles;
import dev.agentx.clarify.files.JsonErrors;
import dev.agentx.clarify.ledger.LedgerStore;
import dev.agentx.clarify.lock.LockManager;
import dev.agentx.clarify.protocol.ClarifyException;
import dev.agentx.clarify.protocol.ErrorCode;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.Set;
import java.util.TreeMap;
import java.util.WeakHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Supplier;
import java.util.function.UnaryOperator;
import org.slf4j.LoggerFactory;

/**
 * {@code <state>/agent-status.json}, written atomically under its own lock.
 *
 * <p>{@link #mirror} (what every clarification operation calls after its ledger write) brings the
 * file in line with the issue's ledger as it is when the write takes the file's lock
 * ({@link StatusRules#reconcile}), reading the ledger under that lock: a write that comes late
 * never puts back a status the ledger has moved past, whichever process writes first. Threads of
 * one process combine: whoever takes the combiner applies every change queued so far in one
 * read-modify-write under the file lock.
 *
 * <p>After {@link #writeBehind} (a long-lived process: {@code agentx mcp}, the server),
 * {@link #mirror} queues the issue and returns, and this process's writer thread does the rest:
 * an operation's latency holds its ledger write and no status write, operations on different
 * issues never wait on the status file's lock, and under load a process writes the file once for
 * many operations. {@link #read} and {@link #update} first store what is queued (a process reads
 * its own writes), {@link #flush} does so on demand, and a shutdown hook does it before the JVM
 * exits. A process killed before its writer ran leaves the file a step behind the ledgers (they
 * are the truth, written durably); the next operation that touches the agents on that issue puts
 * it right. The file is not fsynced: a crash of the machine may lose its last change, never tear
 * it.
 */
public final class FileAgentStatusStore implements AgentStatusStore {
    private final Path file;
    private final LockManager locks;
    private final LedgerStore ledgers;
    private final AgentStatusCodec codec = new AgentStatusCodec();
    private final ReentrantLock combiner = new ReentrantLock();
    private final Queue<Change> waiting = new ConcurrentLinkedQueue<>();
    /** Mirrored changes queued or being written: {@link #flush} has nothing to do at zero. */
    private final AtomicInteger unwritten = new AtomicInteger();
    private final AtomicBoolean scheduled = new AtomicBoolean();
    private volatile boolean behind;

    /**
     * One queued change; {@code issue} is that of a {@link #mirror} (0 for an {@link #update}).
     * {@code done} and {@code failure} are set by the thread that applied it, under the combiner.
     */
    private static final class Change {
        final String actor;
        final UnaryOperator<Map<String, AgentStatus>> op;
        final int issue;
        boolean done;
        RuntimeException failure;

        Change(String actor, UnaryOperator<Map<String, AgentStatus>> op, int issue) {
            this.actor = actor;
            this.op = op;
            this.issue = issue;
        }

        boolean mirrored() {
            return issue > 0;
        }
    }

    public FileAgentStatusStore(Path stateDir, LockManager locks, LedgerStore ledgers) {
        this.file = stateDir.resolve("agent-status.json");
        this.locks = locks;
        this.ledgers = ledgers;
    }

    @Override
    public Map<String, AgentStatus> read() {
        flush();
        return readFile();
    }

    private Map<String, AgentStatus> readFile() {
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
        Change me = new Change(actor, change, 0);
        waiting.add(me);
        combiner.lock();
        try {
            if (!me.done) { // else the thread before us applied it with its own
                drain(false);
            }
        } finally {
            combiner.unlock();
        }
        if (me.failure != null) {
            throw me.failure;
        }
    }

    @Override
    public void writeBehind() {
        behind = true;
    }

    @Override
    public void mirror(String actor, int issue, Set<String> agents) {
        unwritten.incrementAndGet();
        waiting.add(new Change(actor, StatusRules.mirroring(ledgers, issue, agents), issue));
        if (!behind) {
            flush();
        } else if (scheduled.compareAndSet(false, true)) {
            Writer.schedule(this);
        }
    }

    @Override
    public void flush() {
        flush(false);
    }

    /** @param poll wait for the file's lock by polling (the writer thread: see LockManager#withLockPolling) */
    private void flush(boolean poll) {
        if (unwritten.get() == 0) {
            return;
        }
        combiner.lock();
        try {
            drain(poll);
        } finally {
            combiner.unlock();
        }
    }

    /**
     * The writer thread's turn: whatever is queued by now. It holds the file's lock while the
     * process's other threads may wait for an issue's, so it waits for the lock by polling.
     */
    private void writerTurn() {
        scheduled.set(false);
        flush(true);
    }

    /** Applies everything queued, in one batch; the caller holds the combiner. */
    private void drain(boolean poll) {
        List<Change> batch = new ArrayList<>();
        for (Change c = waiting.poll(); c != null; c = waiting.poll()) {
            batch.add(c);
        }
        if (!batch.isEmpty()) {
            apply(batch, poll);
        }
    }

    /** Whether this JVM has read and encoded the file once (see FileLedgerStore.update: the same reason). */
    private static volatile boolean warm;

    /** Applies the changes in the order queued, in one locked read-modify-write; a change that throws fails alone. */
    private void apply(List<Change> batch, boolean poll) {
        if (!warm) {
            try {
                codec.encode(readFile());
            } catch (RuntimeException e) {
                // a damaged file: the locked read below reports it
            }
            warm = true;
        }
        try {
            Supplier<Object> write = () -> {
                Map<String, AgentStatus> before = readFile();
                Map<String, AgentStatus> after = before;
                // a mirrored change reads its ledger here, under the status file's lock: see the class comment
                for (Change c : batch) {
                    try {
                        after = new TreeMap<>(c.op.apply(after));
                    } catch (RuntimeException e) {
                        c.failure = e;
                    }
                }
                if (!after.equals(before)) {
                    Path temp = AtomicFiles.prepare(file, codec.encode(after), false);
                    try {
                        locks.commit(file, () -> AtomicFiles.commit(temp, file, false));
                    } finally {
                        AtomicFiles.discard(temp);
                    }
                }
                return null;
            };
            if (poll) {
                locks.withLockPolling(file, batch.get(0).actor, write);
            } else {
                locks.withLock(file, batch.get(0).actor, write);
            }
        } catch (RuntimeException e) {
            for (Change c : batch) {
                if (c.failure == null) {
                    c.failure = e;
                }
            }
        } finally {
            for (Change c : batch) {
                c.done = true;
                if (c.mirrored()) {
                    unwritten.decrementAndGet();
                    if (c.failure != null) {
                        LoggerFactory.getLogger(FileAgentStatusStore.class).warn(
                                "agent statuses not updated after a change of issue {}: {}", c.issue,
                                c.failure.getMessage());
                    }
                }
            }
        }
    }

    /** The one thread of a process that writes mirrored changes, and the hook that finishes its work at exit. */
    private static final class Writer {
        private static final ExecutorService THREAD = Executors.newSingleThreadExecutor(new ThreadFactory() {
            @Override
            public Thread newThread(Runnable r) {
                Thread t = new Thread(r, "agent-status-writer");
                t.setDaemon(true);
                return t;
            }
        });
        /** Every store that was given a change to mirror (weakly: a store nobody holds has none left). */
        private static final Set<FileAgentStatusStore> STORES = Collections.synchronizedSet(
                Collections.newSetFromMap(new WeakHashMap<>()));

        static {
            Runtime.getRuntime().addShutdownHook(new Thread(new Runnable() {
                @Override
                public void run() {
                    List<FileAgentStatusStore> all;
                    synchronized (STORES) {
                        all = new ArrayList<>(STORES);
                    }
                    for (FileAgentStatusStore s : all) {
                        try {
                            s.flush();
                        } catch (RuntimeException e) {
                            // logged by apply; the exit goes on
                        }
                    }
                }
            }, "agent-status-flush"));
        }

        static void schedule(FileAgentStatusStore store) {
            STORES.add(store);
            THREAD.execute(new Runnable() {
                @Override
                public void run() {
                    store.writerTurn();
                }
            });
        }
    }
}
