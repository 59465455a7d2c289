package dev.agentx.clarify.ledger;

import dev.agentx.clarify.protocol.Ledger;
import java.util.List;

/** The ledgers that hold at least one active (not resolved, not abandoned) record, as they are now. */
public interface ActiveLedgers {
    Scan scan();

    /**
     * @param ledgers how many ledgers there are in all
     * @param active the ledgers with an active record, by issue number, read during this scan
     * @param problems one message per ledger that could not be read (damaged); such a ledger is
     *                 never written by the monitor
     */
    record Scan(int ledgers, List<Ledger> active, List<String> problems) {
        public Scan {
            active = List.copyOf(active);
            problems = List.copyOf(problems);
        }
    }
}
