package dev.agentx.clarify.ledger;

import dev.agentx.clarify.ledger.LedgerStore.Mutation;
import dev.agentx.clarify.protocol.Ledger;

/**
 * A ledger change given as a value rather than as code, so that it can be written down and
 * carried out by whichever process holds the issue's lock (see {@link LedgerStore#submit}).
 */
public interface SharedChange<T> {
    /**
     * The new ledger (none: nothing to write) and the result. Pure: no I/O, no clock, no network;
     * a refusal throws {@link dev.agentx.clarify.protocol.ClarifyException} and changes nothing.
     * Carried out again on a ledger it already changed (after a crash between a ledger's write and
     * its replies), it must recognise itself and change nothing (an idempotency key on what it adds).
     */
    Mutation<T> apply(Ledger ledger);

    /**
     * How changes and their results are written for another process to read (one per kind of
     * result), and what the process that carried out others' changes does for them.
     */
    interface Codec<T> {
        /**
         * Called by the holder of the issue's lock that carried out other processes' changes, once
         * the ledger is written and before their replies: work each would otherwise do after its
         * change that needs only the ledger, which the holder has in memory and they would have to
         * read (the agent statuses). {@link #readResult} tells the others it was done.
         */
        default void carriedOut(int issue, java.util.List<T> forOthers) {
        }

        byte[] writeChange(SharedChange<T> change);

        /** The change {@link #writeChange} wrote; IllegalArgumentException if it cannot be read. */
        SharedChange<T> readChange(byte[] text);

        byte[] writeResult(T result);

        /** The result {@link #writeResult} wrote; IllegalArgumentException if it cannot be read. */
        T readResult(byte[] text);
    }
}
