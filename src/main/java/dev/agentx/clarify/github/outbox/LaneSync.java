package dev.agentx.clarify.github.outbox;

import dev.agentx.clarify.store.files.OutboxJournal;

/**
 * What the calling thread must make durable before it records that effects were queued: the
 * journal number of the last queue record it wrote, or found pending for a key it queued, and of
 * the notes it wrote after them. A lane syncs only its own records, so another lane's newer
 * records do not cost it an fsync.
 */
final class LaneSync {
    /** All written so far: the record to cover is not known (an effect being sent). */
    static final long ANY = Long.MAX_VALUE;

    private final OutboxJournal journal;
    private final ThreadLocal<long[]> mark = ThreadLocal.withInitial(() -> new long[1]);

    LaneSync(OutboxJournal journal) {
        this.journal = journal;
    }

    /** The calling thread's next {@link #sync()} covers journal record {@code number}. */
    void cover(long number) {
        long[] here = mark.get();
        here[0] = Math.max(here[0], number);
    }

    /**
     * Makes the records the calling thread covered durable (one fsync shared with other threads,
     * none if they are durable already).
     */
    void sync() {
        long[] here = mark.get();
        long upTo = here[0];
        if (upTo == ANY) {
            journal.sync();
            here[0] = 0; // everything written before is on disk, this thread's records with it
        } else if (upTo > 0) {
            journal.syncTo(upTo);
        }
    }
}
