package dev.agentx.clarify.store.postgres;

import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Folds the changes recorded in {@code status_changes} into each repository's statuses row
 * ({@link PgAgentStatusStore#fold}), behind the transactions that recorded them: one thread per
 * process and database, woken by their commits ({@link #due}). A fold runs {@link #GATHER} after
 * the first commit that asks for it, so the changes of the commits in between are folded together:
 * at 200 deliveries/s about ten to a fold, where folding each commit's change on its own would cost
 * a transaction of five round trips per delivery. Readers apply what is not folded yet, so the wait
 * shows nowhere. Every {@link #SWEEP} (and when it starts) it also folds what is recorded for any
 * repository: changes a process left when it died before its fold, or whose fold failed (the
 * database away). Started by the first commit that recorded a change, or by {@link #start} (the
 * server, so that what a crash left is folded without waiting for a delivery); a process that only
 * reads never starts it.
 */
final class PgStatusFolds implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(PgStatusFolds.class);
    /** How often the folder looks for changes no commit of this process told it about. */
    static final Duration SWEEP = Duration.ofSeconds(5);
    /** How long the changes of later commits may join a fold that a commit asked for. */
    static final Duration GATHER = Duration.ofMillis(50);

    private final PostgresDatabase db;
    private final Set<String> due = ConcurrentHashMap.newKeySet();
    private final AtomicBoolean scheduled = new AtomicBoolean();
    /** The folder's thread once started; null before, and again once closed. */
    private volatile ScheduledExecutorService thread;
    private boolean closed;

    PgStatusFolds(PostgresDatabase db) {
        this.db = db;
    }

    /** The repository recorded changes that are committed now: they are folded soon. */
    void due(String repo) {
        due.add(repo);
        ScheduledExecutorService t = start();
        if (t != null && scheduled.compareAndSet(false, true)) {
            try {
                t.schedule(this::foldDue, GATHER.toMillis(), TimeUnit.MILLISECONDS);
            } catch (java.util.concurrent.RejectedExecutionException closing) {
                // closed meanwhile: what is recorded stays for the next process's sweep
            }
        }
    }

    /** Starts the folder and its sweeps (once); null once closed. */
    ScheduledExecutorService start() {
        ScheduledExecutorService running = thread;
        return running != null ? running : startOnce();
    }

    private synchronized ScheduledExecutorService startOnce() {
        if (thread == null && !closed) {
            thread = Executors.newSingleThreadScheduledExecutor(r -> {
                Thread t = new Thread(r, "agentx-db:statuses");
                t.setDaemon(true);
                return t;
            });
            thread.scheduleWithFixedDelay(this::sweep, 0, SWEEP.toMillis(), TimeUnit.MILLISECONDS);
        }
        return thread;
    }

    private void foldDue() {
        scheduled.set(false);
        for (String repo : List.copyOf(due)) {
            due.remove(repo); // a commit after this is folded by this fold, or by the one it schedules
            fold(repo);
        }
    }

    /** Folds every repository's recorded changes. */
    void sweep() {
        List<String> repos = new ArrayList<>();
        try {
            db.autoCommit(c -> {
                try (PreparedStatement s = c.prepareStatement("SELECT DISTINCT repo FROM status_changes");
                     ResultSet r = s.executeQuery()) {
                    while (r.next()) {
                        repos.add(r.getString(1));
                    }
                }
                return null;
            });
        } catch (RuntimeException e) {
            LOG.debug("cannot look for agent statuses to fold in {} now: {}", db.describe(), e.getMessage());
            return;
        }
        repos.forEach(this::fold);
    }

    private void fold(String repo) {
        try {
            db.repository(repo).statuses().fold();
        } catch (RuntimeException e) {
            // what stays recorded is folded by the next sweep; readers apply it meanwhile
            LOG.warn("cannot fold the agent statuses of {} in {} now (the next sweep tries again within {} s): {}",
                    repo, db.describe(), SWEEP.toSeconds(), e.getMessage());
        }
    }

    /** Stops the folder after the fold under way, if any; what is recorded stays for the next process. */
    @Override
    public void close() {
        ScheduledExecutorService t;
        synchronized (this) {
            closed = true;
            t = thread;
            thread = null;
        }
        if (t == null) {
            return;
        }
        t.shutdown();
        try {
            if (!t.awaitTermination(5, TimeUnit.SECONDS)) {
                t.shutdownNow();
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            t.shutdownNow();
        }
    }
}
