package dev.agentx.clarify.store.postgres;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link QueuePlansBench} runs to its end on a small backlog: {@code bench/run} is its only other
 * caller, so a change of the statements it sends (the done mark's parameters, what it returns)
 * would otherwise show only there, halfway through a half-hour run.
 */
class QueuePlansBenchTest {
    @Test
    void theBenchDrainsASmallBacklogForEachIndexAndScanSetting(@TempDir Path dir) throws Exception {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        PrintStream was = System.out;
        System.setOut(new PrintStream(out, true, StandardCharsets.UTF_8));
        try {
            QueuePlansBench.main(new String[] {dir.toString(), "40", "10"});
        } finally {
            System.setOut(was);
        }
        String printed = out.toString(StandardCharsets.UTF_8);
        assertEquals(4, printed.lines().filter(l -> l.startsWith("| every delivery |")
                || l.startsWith("| deliveries in a line (the server's) |")).count(), printed);
    }
}
