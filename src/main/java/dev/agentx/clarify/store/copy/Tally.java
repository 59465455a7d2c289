package dev.agentx.clarify.store.copy;

import dev.agentx.clarify.events.ClarificationEvent;
import dev.agentx.clarify.events.EventLog;
import dev.agentx.clarify.events.JsonlEventLog;
import dev.agentx.clarify.ledger.LedgerCodec;
import dev.agentx.clarify.protocol.ClarifyException;
import dev.agentx.clarify.protocol.ErrorCode;
import dev.agentx.clarify.protocol.Ledger;
import dev.agentx.clarify.status.AgentStatus;
import dev.agentx.clarify.status.AgentStatusCodec;
import dev.agentx.clarify.store.RepositoryState;
import java.util.Map;
import java.util.Optional;

/**
 * What one side holds for one repository: its ledgers and their records, its agent statuses, its
 * events, and a SHA-256 over all of them in their canonical encoding, in a fixed order. A copy
 * tallies the source before it writes and the destination read back after, and compares the two.
 */
public record Tally(int ledgers, int records, int statuses, int events, String checksum) {
    /**
     * The tally of {@code repo}; INTERNAL, naming the repository and where it is kept, if any of
     * its documents cannot be read (an event log line that is not an event, a damaged ledger).
     */
    static Tally of(String repo, RepositoryState s) {
        try {
            return of(s);
        } catch (ClarifyException e) {
            throw new ClarifyException(e.code(), repo + " (" + s.describe() + "): " + e.getMessage()
                    + "; nothing was copied.", e);
        }
    }

    /** Counts and a SHA-256 over the canonical documents, in a fixed order. */
    static Tally of(RepositoryState s) {
        Sha256 sha = new Sha256();
        LedgerCodec ledgerCodec = new LedgerCodec();
        int ledgers = 0;
        int records = 0;
        for (int issue : s.ledgers().issues()) {
            Optional<Ledger> l = s.ledgers().read(issue);
            if (l.isPresent()) {
                ledgers++;
                records += l.get().clarifications().size();
                sha.add("ledger " + issue + "\n").add(ledgerCodec.encode(l.get()));
            }
        }
        Map<String, AgentStatus> statuses = s.statuses().read();
        sha.add("statuses\n").add(new AgentStatusCodec().encode(statuses));
        EventLog.Read events = s.events().all();
        if (events.unreadableLines() > 0) {
            throw new ClarifyException(ErrorCode.INTERNAL, events.unreadableLines() + " entries of its event log "
                    + "cannot be read; fix or remove them before copying, so that nothing is lost quietly");
        }
        sha.add("events\n");
        for (ClarificationEvent e : events.events()) {
            sha.add(JsonlEventLog.json(e)).add((byte) '\n');
        }
        return new Tally(ledgers, records, statuses.size(), events.events().size(), sha.checksum());
    }
}
