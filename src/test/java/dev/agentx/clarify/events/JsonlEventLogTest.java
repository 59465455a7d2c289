package dev.agentx.clarify.events;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.agentx.clarify.protocol.Status;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class JsonlEventLogTest {
    @TempDir
    Path dir;

    private static ClarificationEvent event(int thread, int i) {
        return new ClarificationEvent(EventType.REQUESTED, "CLR-" + thread + "-" + String.format("%03d", i + 1),
                thread, "engineer", "architect", "topic " + i, true, 1, Status.PENDING,
                Instant.parse("2026-11-22T10:00:00Z"));
    }

    @Test
    void threadsAppendingAtOnceShareSyncsAndEveryLineIsWholeAndThere() throws Exception {
        JsonlEventLog log = new JsonlEventLog(dir.resolve("state/events.jsonl"));
        ExecutorService pool = Executors.newFixedThreadPool(8);
        List<Future<?>> all = new ArrayList<>();
        try {
            for (int t = 1; t <= 8; t++) {
                int thread = t;
                all.add(pool.submit(() -> {
                    for (int i = 0; i < 50; i++) {
                        log.publish(List.of(event(thread, i), event(thread, i + 100)));
                    }
                }));
            }
            for (Future<?> f : all) {
                f.get(60, TimeUnit.SECONDS);
            }
        } finally {
            pool.shutdown();
        }
        dev.agentx.clarify.events.EventLog.Read read = log.read(EventType.REQUESTED);
        assertEquals(0, read.unreadableLines());
        Set<String> ids = new HashSet<>();
        read.events().forEach(e -> ids.add(e.clarificationId()));
        assertEquals(8 * 100, ids.size());
    }

    /** Bytes that are not UTF-8 (a hand edit, a torn write) cost their line, not the whole log. */
    @Test
    void aLineThatIsNotUtf8IsSkippedAndCountedNotFatal() throws Exception {
        Path file = dir.resolve("events.jsonl");
        JsonlEventLog log = new JsonlEventLog(file);
        log.publish(List.of(event(1, 0)));
        java.nio.file.Files.write(file, "{\"event\":\"clarification-requested\",\"caf\u00e9\":\"\n"
                .getBytes(java.nio.charset.StandardCharsets.ISO_8859_1), java.nio.file.StandardOpenOption.APPEND);
        log.publish(List.of(event(2, 0)));
        dev.agentx.clarify.events.EventLog.Read read = log.all();
        assertEquals(2, read.events().size());
        assertEquals(1, read.unreadableLines());
    }
}
