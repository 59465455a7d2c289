package dev.agentx.clarify.monitor;

import dev.agentx.clarify.events.ClarificationEvent;
import dev.agentx.clarify.events.EventType;
import dev.agentx.clarify.protocol.ClarificationRecord;
import dev.agentx.clarify.protocol.EntryType;
import dev.agentx.clarify.protocol.Ledger;
import dev.agentx.clarify.protocol.Status;
import dev.agentx.clarify.protocol.ThreadEntry;
import java.math.BigDecimal;
import java.math.RoundingMode;
import java.time.Instant;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;

/**
 * The metrics of docs/monitor.md, the digest for a period {@code [since, until]}.
 * <ul>
 *   <li>The records counted are those created in the period. {@code total} is their number;
 *       {@code resolved} and {@code abandoned} count their current status; {@code escalated}
 *       counts those escalated at any time (by a person, the round limit or the monitor), even if
 *       a human has closed them since.</li>
 *   <li>{@code autoResolved}: resolved without ever being escalated to a human. The
 *       auto-resolution rate is autoResolved / total, the escalation rate escalated / total
 *       (targets: above 80 %, below 20 %); both are null when total is 0.</li>
 *   <li>{@code averageRounds}: the mean of the records' round numbers (questions asked).</li>
 *   <li>{@code staleCount}: clarification-stale events in the period (events.jsonl); a record
 *       can go stale once per round.</li>
 *   <li>{@code deadlockCount}: deadlocks the monitor broke in the period: its escalations with
 *       cause deadlock, whenever the record was created.</li>
 *   <li>{@code topics}: the most common topics (lower-cased, spaces collapsed), at most 5, most
 *       frequent first, ties by name.</li>
 * </ul>
 */
public final class Digest {
    public static final int TOP_TOPICS = 5;

    private Digest() {
    }

    public record TopicCount(String topic, int count) {
    }

    public record Report(Instant since, Instant until, int total, int resolved, int autoResolved, int escalated,
                         int abandoned, int open, Double autoResolutionRate, Double escalationRate,
                         Double averageRounds, int staleCount, int deadlockCount, List<TopicCount> topics) {
        public Report {
            topics = List.copyOf(topics);
        }
    }

    public static Report compute(List<Ledger> ledgers, List<ClarificationEvent> events, Instant since, Instant until) {
        int total = 0;
        int resolved = 0;
        int autoResolved = 0;
        int escalated = 0;
        int abandoned = 0;
        long rounds = 0;
        int deadlocks = 0;
        Map<String, Integer> topics = new TreeMap<>();
        for (Ledger ledger : ledgers) {
            for (ClarificationRecord r : ledger.clarifications()) {
                for (ThreadEntry e : r.thread()) {
                    if (within(e.timestamp(), since, until) && Cause.of(e).filter(c -> c == Cause.DEADLOCK).isPresent()) {
                        deadlocks++;
                    }
                }
                if (!within(r.created(), since, until)) {
                    continue;
                }
                total++;
                rounds += r.round();
                boolean everEscalated = r.thread().stream().anyMatch(e -> e.type() == EntryType.ESCALATION);
                if (everEscalated) {
                    escalated++;
                }
                if (r.status() == Status.RESOLVED) {
                    resolved++;
                    if (!everEscalated) {
                        autoResolved++;
                    }
                } else if (r.status() == Status.ABANDONED) {
                    abandoned++;
                }
                topics.merge(r.topic().strip().replaceAll("\\s+", " ").toLowerCase(Locale.ROOT), 1, Integer::sum);
            }
        }
        int stale = (int) events.stream()
                .filter(e -> e.event() == EventType.STALE && within(e.timestamp(), since, until)).count();
        List<TopicCount> top = topics.entrySet().stream()
                .map(e -> new TopicCount(e.getKey(), e.getValue()))
                .sorted(Comparator.comparingInt(TopicCount::count).reversed().thenComparing(TopicCount::topic))
                .limit(TOP_TOPICS).toList();
        return new Report(since, until, total, resolved, autoResolved, escalated, abandoned,
                total - resolved - abandoned, ratio(autoResolved, total, 3), ratio(escalated, total, 3),
                ratio(rounds, total, 2), stale, deadlocks, top);
    }

    private static boolean within(Instant t, Instant since, Instant until) {
        return !t.isBefore(since) && !t.isAfter(until);
    }

    private static Double ratio(long part, int whole, int decimals) {
        if (whole == 0) {
            return null;
        }
        return BigDecimal.valueOf(part).divide(BigDecimal.valueOf(whole), decimals, RoundingMode.HALF_UP).doubleValue();
    }
}
