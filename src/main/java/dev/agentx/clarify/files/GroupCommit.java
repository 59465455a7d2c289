package dev.agentx.clarify.files;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * Group commit: many threads need "everything I wrote before this call is durable"; one of them
 * runs the sync for all who arrived before it started, the others wait for it, and those who
 * arrive meanwhile share the next one. N concurrent writers cost about two syncs instead of N.
 */
public final class GroupCommit {
    /** The sync itself, e.g. an fsync of a directory or an fdatasync of a file. */
    @FunctionalInterface
    public interface Sync {
        void run() throws IOException;
    }

    private final Sync sync;
    private final ReentrantLock lock = new ReentrantLock();
    private final Condition finished = lock.newCondition();
    private long requested;
    private long completed;
    private boolean running;

    public GroupCommit(Sync sync) {
        this.sync = sync;
    }

    /** Returns once a sync that started after this call has finished. */
    public void commit() {
        lock.lock();
        try {
            long ticket = ++requested;
            while (completed < ticket) {
                if (running) {
                    finished.awaitUninterruptibly();
                    continue;
                }
                running = true;
                long upTo = requested;
                IOException failure = null;
                lock.unlock();
                try {
                    sync.run();
                } catch (IOException e) {
                    failure = e;
                } finally {
                    lock.lock();
                    running = false;
                    if (failure == null) {
                        completed = Math.max(completed, upTo);
                    }
                    finished.signalAll();
                }
                if (failure != null) {
                    throw new UncheckedIOException(failure);
                }
            }
        } finally {
            lock.unlock();
        }
    }
}
