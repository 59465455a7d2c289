package dev.agentx.clarify.reliability;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.agentx.clarify.support.Jvm;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Many processes, random hold times: an independent log shows no two holders ever overlap. */
class LockStressTest {
    @TempDir
    Path dir;

    @Test
    void noTwoHoldersEverOverlap() throws Exception {
        int processes = 6;
        int holds = 40;
        List<Process> procs = new ArrayList<>();
        for (int i = 0; i < processes; i++) {
            procs.add(Jvm.start(LockStressWorker.class, dir.toString(), String.valueOf(holds), "15"));
        }
        List<String> summaries = new ArrayList<>();
        for (Process p : procs) {
            assertTrue(p.waitFor(300, TimeUnit.SECONDS));
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
            assertEquals(0, p.exitValue(), out);
            assertTrue(out.endsWith("violations=0"), out);
            summaries.add(out);
        }
        record Hold(long pid, long start, long end) {
        }
        List<Hold> log = new ArrayList<>();
        for (String line : Files.readAllLines(dir.resolve("holds.log"))) {
            String[] f = line.split(" ");
            log.add(new Hold(Long.parseLong(f[0]), Long.parseLong(f[1]), Long.parseLong(f[2])));
        }
        assertEquals(processes * holds, log.size(), "every hold logged");
        log.sort(Comparator.comparingLong(Hold::start));
        for (int i = 1; i < log.size(); i++) {
            Hold prev = log.get(i - 1);
            Hold next = log.get(i);
            assertTrue(next.start() >= prev.end(), "overlap: " + prev + " and " + next);
        }
        try (java.util.stream.Stream<Path> left = Files.list(dir)) {
            // no lock file, no queue, no content file: the runtime folder went with the last process
            assertEquals(List.of("holds.log"), left.map(p -> p.getFileName().toString()).sorted().toList());
        }
        System.out.println("lock stress: " + processes + " processes x " + holds + " holds, 0 overlaps; " + summaries);
    }
}
