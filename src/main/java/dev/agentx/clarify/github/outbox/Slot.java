package dev.agentx.clarify.github.outbox;

/**
 * One queued effect in its issue's queue: its place in line, key hash, what is to be done, and
 * the journal number of its queue record (0 when it was read from disk or rewritten by a retry),
 * which must be durable before it is sent.
 */
record Slot(long seq, String hash, QueuedEffect entry, long mark) {
    /** The same place in line with {@code entry}, its queue record still the one to be durable. */
    Slot with(QueuedEffect entry) {
        return new Slot(seq, hash, entry, mark);
    }
}
