package dev.agentx.clarify.files;

import java.nio.file.Path;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * Group commit of one directory's fsync. Threads that created or renamed files in the directory
 * call {@link #sync()}; it returns once an fsync of the directory that started after the call
 * has finished. While one fsync runs, the callers that arrive meanwhile wait for it and then
 * share a single next one, so N concurrent writers cost about two directory fsyncs instead of N.
 */
public final class DirectorySync {
    private final Path dir;
    private final ReentrantLock lock = new ReentrantLock();
    private final Condition finished = lock.newCondition();
    private long requested;
    private long completed;
    private boolean running;

    public DirectorySync(Path dir) {
        this.dir = dir;
    }

    public Path directory() {
        return dir;
    }

    /** Makes every create, rename or delete the caller did in the directory before this call durable. */
    public void sync() {
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
                lock.unlock();
                try {
                    AtomicFiles.fsyncDirectory(dir);
                } finally {
                    lock.lock();
                    running = false;
                    completed = Math.max(completed, upTo);
                    finished.signalAll();
                }
            }
        } finally {
            lock.unlock();
        }
    }
}
