package dev.agentx.clarify.files;

import java.nio.file.Path;

/**
 * Group commit of one directory's fsync ({@link GroupCommit}). Threads that created, renamed or
 * deleted files in the directory call {@link #sync()}; concurrent callers share the fsyncs.
 */
public final class DirectorySync {
    private final Path dir;
    private final GroupCommit commit;

    public DirectorySync(Path dir) {
        this.dir = dir;
        this.commit = new GroupCommit(() -> AtomicFiles.fsyncDirectory(dir));
    }

    public Path directory() {
        return dir;
    }

    /** Makes every create, rename or delete the caller did in the directory before this call durable. */
    public void sync() {
        commit.commit();
    }
}
