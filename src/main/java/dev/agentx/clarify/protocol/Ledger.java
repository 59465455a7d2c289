package dev.agentx.clarify.protocol;

import com.fasterxml.jackson.annotation.JsonIgnore;
import com.fasterxml.jackson.annotation.JsonProperty;
import com.fasterxml.jackson.annotation.JsonPropertyOrder;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Optional;

/** The per-issue ledger: docs/protocol.md. */
@JsonPropertyOrder({"issueNumber", "clarifications"})
public record Ledger(@JsonProperty(required = true) int issueNumber,
                     @JsonProperty(required = true) List<ClarificationRecord> clarifications) {
    public Ledger {
        if (issueNumber < 1) {
            throw new IllegalArgumentException("issueNumber must be positive, got " + issueNumber);
        }
        clarifications = clarifications == null ? List.of() : List.copyOf(clarifications);
    }

    public static Ledger empty(int issueNumber) {
        return new Ledger(issueNumber, List.of());
    }

    public Optional<ClarificationRecord> find(String id) {
        return clarifications.stream().filter(r -> r.id().equals(id)).findFirst();
    }

    @JsonIgnore
    public List<ClarificationRecord> active() {
        // a loop, not a stream: every CLI command calls this for every active ledger at start-up
        List<ClarificationRecord> out = new ArrayList<>(clarifications.size());
        for (ClarificationRecord r : clarifications) {
            if (r.status().active()) {
                out.add(r);
            }
        }
        return Collections.unmodifiableList(out);
    }

    /** The record holding the entry written by the request {@code key}, and that entry. */
    public Optional<Applied> applied(String key) {
        for (ClarificationRecord r : clarifications) {
            for (ThreadEntry e : r.thread()) {
                if (key.equals(e.request())) {
                    return Optional.of(new Applied(r, e));
                }
            }
        }
        return Optional.empty();
    }

    /** A request found done: the record it changed and the entry it wrote. */
    public record Applied(ClarificationRecord record, ThreadEntry entry) {
    }

    /** The next id: one past the highest sequence in use, so ids stay unique and gap-free. */
    public ClarificationId nextId() {
        int max = 0;
        for (ClarificationRecord r : clarifications) {
            max = Math.max(max, r.clarificationId().seq());
        }
        return new ClarificationId(issueNumber, max + 1);
    }

    /**
     * The latest time written in the ledger (a record's creation, a thread entry, a resolution),
     * or null for an empty one: a change carried out after another is never stamped earlier.
     */
    public java.time.Instant latest() {
        java.time.Instant latest = null;
        for (ClarificationRecord r : clarifications) {
            latest = later(latest, r.created());
            latest = later(latest, r.resolvedAt());
            for (ThreadEntry e : r.thread()) {
                latest = later(latest, e.timestamp());
            }
        }
        return latest;
    }

    private static java.time.Instant later(java.time.Instant a, java.time.Instant b) {
        return b == null || a != null && !b.isAfter(a) ? a : b;
    }

    public Ledger add(ClarificationRecord record) {
        List<ClarificationRecord> list = new ArrayList<>(clarifications);
        list.add(record);
        return new Ledger(issueNumber, list);
    }

    public Ledger replace(ClarificationRecord record) {
        List<ClarificationRecord> list = new ArrayList<>(clarifications);
        for (int i = 0; i < list.size(); i++) {
            if (list.get(i).id().equals(record.id())) {
                list.set(i, record);
                return new Ledger(issueNumber, list);
            }
        }
        throw new IllegalArgumentException("no record " + record.id() + " in ledger of issue " + issueNumber);
    }
}
