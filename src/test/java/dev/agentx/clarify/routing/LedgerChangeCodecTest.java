package dev.agentx.clarify.routing;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.agentx.clarify.app.LocalMode;
import dev.agentx.clarify.protocol.Autonomy;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Every change and outcome survives being written for another process and read back. */
class LedgerChangeCodecTest {
    private static final Instant AT = Instant.parse("2026-11-26T10:00:00.123Z");
    private static final String ODD = "line one\nline \"two\" \u00e9\u4e2d \\ {\"json\": true}";

    private final LedgerChangeCodec codec = new LedgerChangeCodec((issue, outcomes) -> { });

    @TempDir
    Path dir;

    @Test
    void everyKindOfChangeReadsBackAsItWasWritten() {
        List<LedgerChange> all = List.of(
                new LedgerChange.Ask(12, "engineer", "architect", "Auth", true, 5, AT, AT.plusSeconds(1800),
                        List.of("OAuth", ODD), ODD, "oq-1", Autonomy.APPROVE, List.of("a note"), "delivery/d-1/0"),
                new LedgerChange.Ask(12, "engineer", "architect", "Auth", false, 6, AT, AT, List.of(), "Q", null, null,
                        List.of(), LedgerChange.LOCAL + "1"),
                new LedgerChange.Answer("CLR-12-001", null, ODD, 1, AT, "k"),
                new LedgerChange.Answer("CLR-12-001", "architect", "A", null, AT, "k"),
                new LedgerChange.FollowUp("CLR-12-001", "engineer", ODD, AT, "k"),
                new LedgerChange.Resolve("CLR-12-001", null, null, AT, "k"),
                new LedgerChange.Resolve("CLR-12-001", "engineer", ODD, AT, "k", true),
                new LedgerChange.Escalate("CLR-12-001", "human", ODD, AT, "k"),
                new LedgerChange.Abandon("CLR-12-001", null, "gone", AT, "k"),
                new LedgerChange.Accept("CLR-12-001", "alice", AT, "k"),
                new LedgerChange.Propose("CLR-12-001", 2, ODD, 0, "http", AT, "k"));
        for (LedgerChange c : all) {
            assertEquals(c, codec.change(codec.writeChange(c)));
        }
    }

    @Test
    void anOutcomeReadsBackWithItsRecordEventsAndNotesAndSaysItsStatusesWereMirrored() {
        LocalMode local = LocalMode.open(dir, Clock.systemUTC());
        Outcome asked = local.engine().execute(new ClarifyCommand.Ask(3, "engineer", "architect", null, ODD, true,
                List.of("one", "two"), null));
        Outcome back = codec.readResult(codec.writeResult(asked));
        assertEquals(asked.issue(), back.issue());
        assertEquals(asked.record(), back.record());
        assertEquals(asked.events(), back.events());
        assertEquals(asked.notes(), back.notes());
        assertEquals(asked.replayed(), back.replayed());
        assertTrue(back.mirrored());
        Outcome replayed = Outcome.replayed(3, asked.record());
        assertEquals(replayed.record(), codec.readResult(codec.writeResult(replayed)).record());
        assertTrue(codec.readResult(codec.writeResult(replayed)).replayed());
        assertEquals(null, codec.readResult(codec.writeResult(null)));
    }

    @Test
    void aChangeThisVersionCannotReadIsRefusedWithWhatIsWrong() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> codec.readChange("{\"kind\":\"teleport\"}".getBytes(StandardCharsets.UTF_8)));
        assertTrue(e.getMessage().contains("teleport"), e.getMessage());
        assertThrows(IllegalArgumentException.class,
                () -> codec.readChange("{\"kind\":\"answer\",\"id\":7}".getBytes(StandardCharsets.UTF_8)));
        assertThrows(IllegalArgumentException.class, () -> codec.readChange("not json".getBytes(StandardCharsets.UTF_8)));
    }
}
