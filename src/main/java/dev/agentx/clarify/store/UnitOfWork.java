package dev.agentx.clarify.store;

import java.util.function.Supplier;

/**
 * Work whose changes are kept together or not at all: on PostgreSQL one transaction, so a
 * delivery's ledger writes, agent statuses, events, issue notes, effect claims and done mark
 * commit in one commit. Stores and the outbox {@link #join} the unit the calling thread has
 * open to do part of their work at its end: statuses are written just before the commit (their
 * row is locked for the commit only), effects are claimed with it and handed to the outbox
 * once it committed, so a unit rolled back sends nothing.
 *
 * <p>The file store has no such unit ({@link #NONE}): each write there is durable on its own,
 * and a delivery's progress is recorded after each command instead.
 */
public interface UnitOfWork {
    /** Runs {@code work} as one unit: its changes are committed when it returns, none when it throws. */
    <T> T run(Supplier<T> work);

    /** Whether the calling thread is inside a unit (on PostgreSQL: has a transaction open). */
    boolean open();

    /** Whether {@link #run} keeps its changes together ({@link #NONE} does not). */
    boolean atomic();

    /**
     * Takes part in the calling thread's unit, which must be {@link #open}: {@code p} is told
     * before its commit (inside it), after it committed, or that it rolled back.
     */
    void join(Participant p);

    /** Something that does part of its work when the unit ends. */
    interface Participant {
        /** Inside the unit, just before its commit: a failure here rolls the unit back. */
        default void beforeCommit() {
        }

        /**
         * The unit's work is done; what is left is its last round trip to the store, its last
         * writes with the commit, which waits for the disk. Must not fail. {@link #committed} or
         * {@link #rolledBack} follows.
         */
        default void committing() {
        }

        /** The unit committed (outside it: work here is a unit of its own). */
        default void committed() {
        }

        /** The unit rolled back: nothing it did counts. */
        default void rolledBack() {
        }
    }

    /** No unit: work runs as it is, each write durable on its own. */
    UnitOfWork NONE = new UnitOfWork() {
        @Override
        public <T> T run(Supplier<T> work) {
            return work.get();
        }

        @Override
        public boolean open() {
            return false;
        }

        @Override
        public boolean atomic() {
            return false;
        }

        @Override
        public void join(Participant p) {
            throw new IllegalStateException("the file store has no unit to take part in");
        }
    };
}
