package dev.agentx.clarify.status;

import dev.agentx.clarify.files.IoErrors;
import dev.agentx.clarify.files.JsonErrors;
import dev.agentx.clarify.files.RecycledFile;
import dev.agentx.clarify.files.RuntimeFolder;
import dev.agentx.clarify.ledger.OpenRecords;
import dev.agentx.clarify.ledger.LedgerStore;
import dev.agentx.clarify.protocol.Ledger;
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
import java.util.TreeSet;
import java.util.WeakHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.UnaryOperator;
import org.slf4j.LoggerFactory;

/**
 * {@code <state>/agent-status.json}, written atomically under its own lock.
 *
 * <p>{@link #mirror} (what every clarification operation calls after its ledger write) brings the
 * file in line with the issue's ledger as it is when the write takes the file's lock
 * ({@link StatusRules#reconcile}), reading the ledger under that lock: a write that comes late
 * never puts back a status the ledger has moved past, whichever process writes first (and where
 * a change ends an agent's clarification, it reads the ledgers that hold records open for the
 * agent, and no other, for what is still open for it on other issues: {@link StatusRules.Elsewhere}). Threads of
 * one process combine: whoever takes the combiner applies every change queued so far in one
 * read-modify-write under the file lock.
 *
 * <p>An operation never waits for the file's lock: when one of our processes holds it, the
 * operation leaves its mirror to that holder ({@link StatusHandOff}) and returns, and the holder
 * applies it before it lets go of the lock or straight after. So operations on different issues
 * never wait for each other, and under load one write of the file serves many operations.
 * {@link #read} and {@link #update} wait for the lock, and apply what is queued and left first: a
 * reader sees every operation that returned before it.
 *
 * <p>After {@link #writeBehind} (a long-lived process: {@code agentx mcp}), {@link #mirror}
 * queues the issue and returns, and this process's writer thread does the rest: an operation's
 * latency holds its ledger write and no status write. {@link #flush} stores (or leaves) what is
 * queued on demand, and a shutdown hook does it before the JVM exits. A process killed before its
 * writer ran leaves the file a step behind the ledgers (they are the truth, written durably); the
 * next operation that touches the agents on that issue puts it right. The file is not fsynced: a
 * crash of the machine may lose its last change, never tear it.
 */
public final class FileAgentStatusStore implements AgentStatusStore {
    private final Path file;
    /** Replaces {@link #file} under its lock, reusing the inodes it replaced: see RecycledFile. */
    private final RecycledFile writes;
    private final LockManager locks;
    private final LedgerStore ledgers;
    private final OpenRecords open;
    private final AgentStatusCodec codec = new AgentStatusCodec();
    private final ReentrantLock combiner = new ReentrantLock();
    private final Queue<Change> waiting = new ConcurrentLinkedQueue<>();
    private final StatusHandOff handOff;
    /** Mirrored changes queued or being written: {@link #flush} has nothing to do at zero. */
    private final AtomicInteger unwritten = new AtomicInteger();
    private final AtomicBoolean scheduled = new AtomicBoolean();
    private volatile boolean behind;
    /** Runs while a write holds the lock, after it listed what was left (for tests: see {@link #afterListing}). */
    private volatile Runnable afterListing = () -> { };

    /**
     * One queued change: a mirror of {@code issue} for {@code agents} ({@code op} null), or an
     * {@link #update} ({@code op}; issue 0). {@code done} and {@code failure} are set by the thread
     * that applied it, under the combiner.
     */
    private static final class Change {
        final String actor;
        final UnaryOperator<Map<String, AgentStatus>> op;
        final int issue;
        final Set<String> agents;
        boolean done;
        RuntimeException failure;

        private Change(String actor, UnaryOperator<Map<String, AgentStatus>> op, int issue, Set<String> agents) {
            this.actor = actor;
            this.op = op;
            this.issue = issue;
            this.agents = agents;
        }

        static Change update(String actor, UnaryOperator<Map<String, AgentStatus>> op) {
            return new Change(actor, op, 0, Set.of());
        }

        static Change mirror(String actor, int issue, Set<String> agents) {
            return new Change(actor, null, issue, Set.copyOf(agents));
        }

        boolean mirrored() {
            return op == null;
        }
    }

    /** How a batch takes the file's lock. */
    private enum Wait {
        /** Wait for it: the caller needs the file as it will be (a read, an explicit update). */
        FOR_LOCK,
        /** Not at all: if one of ours holds it, leave the mirrors to that holder (see StatusHandOff). */
        HAND_OFF
    }

    /**
     * @param open the ledgers holding records open for an agent, read when its clarification on one
     *             issue ends, for what its other issues still hold open for it ({@link StatusRules.Elsewhere})
     */
    public FileAgentStatusStore(Path stateDir, LockManager locks, LedgerStore ledgers, OpenRecords open) {
        this.file = stateDir.resolve("agent-status.json");
        this.writes = new RecycledFile(file);
        this.locks = locks;
        this.ledgers = ledgers;
        this.open = open;
        this.handOff = new StatusHandOff(stateDir);
    }

    /**
     * The file after everything queued in this process and everything other processes left is
     * applied: a reader sees its own process's writes and every operation that returned before.
     */
    @Override
    public Map<String, AgentStatus> read() {
        drain(Wait.FOR_LOCK);
        return readFile(false);
    }

    /**
     * The file's statuses; {@code locked}: the caller holds the file's lock, so no write can
     * overlap the read; without it the read is checked ({@link RecycledFile#read}).
     */
    private Map<String, AgentStatus> readFile(boolean locked) {
        try {
            return codec.decode(locked ? Files.readAllBytes(file) : writes.read());
        } catch (NoSuchFileException e) {
            return new TreeMap<>();
        } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
            throw new ClarifyException(ErrorCode.INTERNAL, file + " is damaged: " + JsonErrors.describe(e)
                    + ". It only mirrors the ledgers: move it away and it is rebuilt as agents act.", e);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + file + ": " + IoErrors.why(e), e);
        }
    }

    @Override
    public void update(String actor, UnaryOperator<Map<String, AgentStatus>> change) {
        Change me = Change.update(actor, change);
        waiting.add(me);
        combiner.lock();
        try {
            if (!me.done) { // else the thread before us applied it with its own
                drainHeld(Wait.FOR_LOCK);
            }
        } finally {
            combiner.unlock();
        }
        if (me.failure != null) {
            throw me.failure;
        }
    }

    /**
     * Has {@code hook} run inside every write of this store, after it listed what other processes
     * left and before it lets go of the lock: the moment where what is left next can only be
     * applied by the holder's look after it lets go. For tests.
     */
    void afterListing(Runnable hook) {
        this.afterListing = hook;
    }

    @Override
    public void writeBehind() {
        behind = true;
    }

    @Override
    public void mirror(String actor, int issue, Set<String> agents) {
        unwritten.incrementAndGet();
        waiting.add(Change.mirror(actor, issue, agents));
        if (!behind) {
            flush();
        } else if (scheduled.compareAndSet(false, true)) {
            Writer.schedule(this);
        }
    }

    /** Stores what this process queued, or leaves it to the process that holds the file's lock now. */
    @Override
    public void flush() {
        if (unwritten.get() > 0) {
            drain(Wait.HAND_OFF);
        }
    }

    /** The writer thread's turn: whatever is queued by now. */
    private void writerTurn() {
        scheduled.set(false);
        if (unwritten.get() > 0) {
            drain(Wait.HAND_OFF);
        }
    }

    private void drain(Wait wait) {
        combiner.lock();
        try {
            drainHeld(wait);
        } finally {
            combiner.unlock();
        }
    }

    /**
     * Applies everything queued, in one batch, and what other processes left; the caller holds the
     * combiner. A batch with an {@link #update} in it waits for the lock whatever {@code wait} says.
     */
    private void drainHeld(Wait wait) {
        List<Change> batch = new ArrayList<>();
        for (Change c = waiting.poll(); c != null; c = waiting.poll()) {
            batch.add(c);
            if (!c.mirrored()) {
                wait = Wait.FOR_LOCK;
            }
        }
        if (!batch.isEmpty() || wait == Wait.FOR_LOCK && handOff.any()) {
            apply(batch, wait);
        }
    }

    /** Whether this JVM has read and encoded the file once (see FileLedgerStore.update: the same reason). */
    private static volatile boolean warm;

    /**
     * Applies the changes in the order queued, and the mirrors other processes left, in one locked
     * read-modify-write; a change that throws fails alone. With {@link Wait#HAND_OFF}, a held lock
     * is not waited for: the mirrors are left to its holder. Whoever of ours held the lock looks
     * again once it has let go, and applies what was left meanwhile (while nobody else holds the
     * lock): a process that found it held and left its mirrors relies on that, so that nothing
     * left is ever left without a holder to apply it. Behind a holder of another kind, whoever
     * takes the lock next applies them (every reader does, first).
     */
    private void apply(List<Change> batch, Wait wait) {
        if (!warm) {
            try {
                codec.encode(readFile(false));
            } catch (RuntimeException e) {
                // a damaged file: the locked read below reports it
            }
            warm = true;
        }
        String actor = batch.isEmpty() ? "agentx" : batch.get(0).actor;
        try {
            if (wait == Wait.FOR_LOCK) {
                locks.withLock(file, actor, () -> {
                    write(batch);
                    return null;
                });
            } else if (!locks.withLockIfFree(file, actor, () -> write(batch))) {
                Map<Integer, Set<String>> mirrors = new TreeMap<>();
                for (Change c : batch) {
                    add(mirrors, c.issue, c.agents);
                }
                mirrors.forEach(handOff::leave);
                // the holder may have let go and looked before our mirrors were there: try once more
                locks.withLockIfFree(file, actor, () -> write(List.of()));
            }
            while (handOff.any() && locks.withLockIfFree(file, actor, () -> write(List.of()))) {
                // left while we held the lock: applied by the write just done; look again
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
                        notUpdated(c.issue, c.failure);
                    }
                }
            }
        }
    }

    /**
     * Under the file's lock: the batch's updates, then its mirrors and those other processes left,
     * each issue reconciled once with its ledger as it is now ({@link StatusRules#reconcile}: the
     * order of mirrors and hooks does not matter), written if anything changed; the mirrors left
     * are removed once written.
     */
    private void write(List<Change> batch) {
        Map<String, AgentStatus> before = readFile(true);
        Map<String, AgentStatus> after = before;
        Map<Integer, Set<String>> mirrors = new TreeMap<>();
        for (Change c : batch) {
            if (c.mirrored()) {
                add(mirrors, c.issue, c.agents);
                continue;
            }
            try {
                after = new TreeMap<>(c.op.apply(after));
            } catch (RuntimeException e) {
                c.failure = e;
            }
        }
        List<StatusHandOff.Pending> left = handOff.list();
        afterListing.run();
        for (StatusHandOff.Pending p : left) {
            add(mirrors, p.issue(), p.agents());
        }
        StatusRules.Elsewhere elsewhere = StatusRules.elsewhere(open::openFor);
        for (Map.Entry<Integer, Set<String>> e : mirrors.entrySet()) {
            int issue = e.getKey();
            try {
                // read here, under the status file's lock: see the class comment
                after = StatusRules.reconcile(after, ledgers.read(issue).orElse(Ledger.empty(issue)), e.getValue(),
                        elsewhere);
            } catch (RuntimeException failure) {
                notUpdated(issue, failure);
            }
        }
        if (!after.equals(before)) {
            RecycledFile.Replacement prepared = writes.prepare(codec.encode(after));
            try {
                locks.commit(file, () -> writes.commit(prepared));
            } finally {
                writes.discard(prepared); // nothing left to drop once committed
            }
        }
        handOff.done(left);
    }

    private static void add(Map<Integer, Set<String>> mirrors, int issue, Set<String> agents) {
        mirrors.computeIfAbsent(issue, i -> new TreeSet<>()).addAll(agents);
    }

    private static void notUpdated(int issue, RuntimeException why) {
        LoggerFactory.getLogger(FileAgentStatusStore.class).warn("agent statuses not updated after a change of issue {}: {}",
                issue, why.getMessage() != null ? why.getMessage() : why.toString());
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
            // before the process leaves the runtime folder: the last one out clears it after this
            RuntimeFolder.atExit(new Runnable() {
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
            });
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
