package dev.agentx.clarify.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.List;
import org.junit.jupiter.api.Test;

/** The server-in-its-own-process bench reads the server's collections from G1's log lines. */
class ServeProcessBenchTest {
    @Test
    void countsEachKindOfPauseAndTheCyclesThatEnded() {
        List<String> log = List.of(
                "[0.744s] GC(0) Pause Young (Normal) (G1 Evacuation Pause) 22M->5M(380M) 8.545ms",
                "[2.060s] GC(3) Pause Young (Concurrent Start) (Metadata GC Threshold) 16M->10M(380M) 26.383ms",
                "[2.060s] GC(4) Concurrent Mark Cycle",
                "[2.119s] GC(4) Pause Remark 11M->11M(44M) 5.248ms",
                "[2.144s] GC(4) Pause Cleanup 11M->11M(44M) 0.062ms",
                "[2.150s] GC(4) Concurrent Mark Cycle 90.120ms",
                "[4.316s] GC(5) Pause Young (Prepare Mixed) (G1 Preventive Collection) 37M->11M(44M) 28.541ms",
                "[4.348s] GC(6) Pause Young (Mixed) (G1 Evacuation Pause) 12M->9M(44M) 17.569ms");
        assertEquals("pauses 1 Cleanup, 1 Remark, 1 Young (Concurrent Start), 1 Young (Mixed), 1 Young (Normal), "
                + "1 Young (Prepare Mixed); 86 ms in all, longest 28.5 ms; concurrent cycles: 1; full collections: 0; "
                + "after the last pause 9 MB used of 44 MB", ServeProcessBench.collections(log));
    }

    @Test
    void saysSoWhenTheHeapWasCollectedWhole() {
        assertEquals("pauses 1 Full; 11 ms in all, longest 11.3 ms; concurrent cycles: 0; full collections: 1; after the "
                + "last pause 7 MB used of 34 MB", ServeProcessBench.collections(List.of(
                        "[0.965s] GC(10) Pause Full (System.gc()) 38M->7M(34M) 11.284ms")));
    }
}
