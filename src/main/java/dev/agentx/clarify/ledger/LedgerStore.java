package dev.agentx.clarify.ledger;

import dev.agentx.clarify.protocol.Ledger;
import java.util.List;
import java.util.Optional;
import java.util.function.Function;

/** Where the engine keeps the per-issue ledgers. Updates are atomic read-modify-write under the issue's lock. */
public interface LedgerStore {
    /** The ledger as last written, without locking (writes are atomic renames). */
    Optional<Ledger> read(int issue);

    /**
     * The ledger, read by who is about to change the issue in the same unit of work ({@link
     * #atomically}, a delivery's transaction): a store whose units hold an issue's lock to their
     * end (PostgreSQL) takes it now, so that the change reads nothing again and what this read
     * decides stays true until the change. The file store reads as {@link #read} does.
     */
    default Optional<Ledger> readBeforeChange(int issue) {
        return read(issue);
    }

    /**
     * Reads the issue's ledger (an empty one if none), applies {@code change} and writes the
     * result, all under the issue's lock. {@code change} must be pure: no I/O, no network.
     */
    <T> T update(int issue, String actor, Function<Ledger, Mutation<T>> change);

    /**
     * Carries out {@code change} as {@link #update} does. A store shared by several processes may
     * carry it out together with the changes other processes submitted for the same issue, in one
     * write (group commit: see FileLedgerStore); {@code codec} writes it down for them.
     */
    default <T> T submit(int issue, String actor, SharedChange<T> change, SharedChange.Codec<T> codec) {
        return update(issue, actor, change::apply);
    }

    /**
     * Runs {@code work} (ledger updates and the status and event writes that mirror them) as one
     * unit where the store has transactions: they commit together or not at all. The file store
     * runs it as it is: each file is written on its own, the ledger first.
     */
    default <T> T atomically(java.util.function.Supplier<T> work) {
        return work.get();
    }

    /** Whether the issue has a ledger, without reading it. */
    default boolean exists(int issue) {
        return read(issue).isPresent();
    }

    /** Issue numbers that have a ledger, ascending. */
    List<Integer> issues();

    /**
     * Whether {@code next} holds what {@code current} holds (records a change left alone are the
     * same instances): an update that changed nothing writes nothing.
     */
    static boolean unchanged(Ledger next, Ledger current) {
        if (next == current) {
            return true;
        }
        List<dev.agentx.clarify.protocol.ClarificationRecord> a = next.clarifications();
        List<dev.agentx.clarify.protocol.ClarificationRecord> b = current.clarifications();
        if (next.issueNumber() != current.issueNumber() || a.size() != b.size()) {
            return false;
        }
        for (int i = 0; i < a.size(); i++) {
            if (a.get(i) != b.get(i) && !a.get(i).equals(b.get(i))) {
                return false;
            }
        }
        return true;
    }

    /** What an update produced: the new ledger (null: nothing to write) and a result for the caller. */
    record Mutation<T>(Ledger ledger, T result) {
        public static <T> Mutation<T> write(Ledger ledger, T result) {
            return new Mutation<>(ledger, result);
        }

        public static <T> Mutation<T> none(T result) {
            return new Mutation<>(null, result);
        }
    }
}
