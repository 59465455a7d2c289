package dev.agentx.clarify.ledger;

import dev.agentx.clarify.protocol.Ledger;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.SortedMap;
import java.util.TreeMap;

/** The ledgers that hold at least one active (not resolved, not abandoned) record, as they are now. */
public interface ActiveLedgers {
    Scan scan();

    /**
     * What is open now, and nothing about the closed ledgers: a scan costs what is open, not the
     * repository's history (the monitor pass after every delivered event scans). How many
     * ledgers there are in all is {@link LedgerStore#issues}, for the commands that print it.
     *
     * @param active the ledgers with an active record, by issue number, read during this scan
     * @param damaged for each ledger that could not be read (damaged), by issue number, the message
     *                saying what is wrong; such a ledger is never written by the monitor
     */
    record Scan(List<Ledger> active, SortedMap<Integer, String> damaged) {
        public Scan {
            active = List.copyOf(active);
            damaged = Collections.unmodifiableSortedMap(new TreeMap<>(damaged));
        }

        public Scan(List<Ledger> active, Map<Integer, String> damaged) {
            this(active, new TreeMap<>(damaged));
        }

        /** One message per damaged ledger, sorted. */
        public List<String> problems() {
            List<String> out = new ArrayList<>(damaged.values());
            out.sort(null);
            return List.copyOf(out);
        }

        /** The message of the damaged ledger with the lowest issue number, if there is one. */
        public Optional<String> firstDamaged() {
            return damaged.isEmpty() ? Optional.empty() : Optional.of(damaged.get(damaged.firstKey()));
        }
    }
}
