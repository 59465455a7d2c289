package dev.agentx.clarify.channel;

import java.time.Instant;
import java.util.HashMap;
import java.util.Map;

/**
 * Failed attempts of automatic channels, counted per record and round so that repeated failure
 * escalates even across processes (the CLI that asked, later the monitor that asks again).
 */
public interface ChannelFailures {
    /** Records a failed attempt; returns how many attempts in a row have failed on this round (1 after the first). */
    int failed(String id, int round, String error, Instant at);

    /** Forgets the record's failures (after an answer, or once it escalated). */
    void clear(String id);

    /** A count kept in memory only (tests, or a host that keeps its own durable state). */
    static ChannelFailures inMemory() {
        Map<String, int[]> counts = new HashMap<>();
        return new ChannelFailures() {
            @Override
            public synchronized int failed(String id, int round, String error, Instant at) {
                int[] c = counts.get(id);
                if (c == null || c[0] != round) {
                    c = new int[] {round, 0};
                    counts.put(id, c);
                }
                return ++c[1];
            }

            @Override
            public synchronized void clear(String id) {
                counts.remove(id);
            }
        };
    }
}
