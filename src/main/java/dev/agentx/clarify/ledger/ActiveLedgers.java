package dev.agentx.clarify.ledger;

import dev.agentx.clarify.protocol.Ledger;
import java.util.List;

/** The ledgers that hold at least one active (not resolved, not abandoned) record, as they are now. */
public interface ActiveLedgers {
    Scan scan();

    /**
     * @param issues the issue number of every ledger, ascending
     * @param active the ledgers with an active record, by issue number, read during this scan
     * @param problems one message per ledger that could not be read (damaged); such a ledger is
     *                 never written by the monitor
     */
    record Scan(List<Integer> issues, List<Ledger> active, List<String> problems) {
        public Scan {
            issues = List.copyOf(issues);
            active = List.copyOf(active);
            problems = List.copyOf(problems);
        }

        /** How many ledgers there are in all. */
        public int ledgers() {
            return issues.size();
        }
    }
}
