package dev.agentx.clarify.files;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;

import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/** The fast path agrees with {@link Instant#parse} on every string: the same instant, or the same refusal. */
class IsoInstantTest {
    /** What Instant.parse makes of it: the instant, or the exception's class and message. */
    private static Object reference(String s) {
        try {
            return Instant.parse(s);
        } catch (RuntimeException e) {
            return e.getClass().getName() + ": " + e.getMessage();
        }
    }

    private static Object ours(String s) {
        try {
            return IsoInstant.parse(s);
        } catch (RuntimeException e) {
            return e.getClass().getName() + ": " + e.getMessage();
        }
    }

    @Test
    void agreesWithInstantParseOnEdgeCases() {
        List<String> cases = List.of(
                "2026-02-26T10:00:00Z", "2026-02-26T10:00:00.1Z", "2026-02-26T10:00:00.123Z",
                "2026-02-26T10:00:00.123456Z", "2026-02-26T10:00:00.123456789Z", "2026-02-26T10:00:00.000Z",
                "2026-02-26T10:00:00.1234567890Z", "2026-02-26T10:00:00.Z", "2026-02-26T10:00Z",
                "2024-02-29T00:00:00Z", "2026-02-29T00:00:00Z", "2026-04-31T00:00:00Z", "2026-13-01T00:00:00Z",
                "2026-00-01T00:00:00Z", "2026-01-00T00:00:00Z", "2026-01-32T00:00:00Z",
                "2026-01-01T23:59:59Z", "2026-01-01T24:00:00Z", "2026-12-31T23:59:60Z", "2026-01-01T00:60:00Z",
                "2026-01-01t00:00:00z", "2026-01-01T00:00:00+01:00", "2026-01-01T00:00:00.5+01:00",
                "0000-01-01T00:00:00Z", "0001-01-01T00:00:00Z", "9999-12-31T23:59:59.999999999Z",
                "1970-01-01T00:00:00Z", "1969-12-31T23:59:59.999Z", "+2026-01-01T00:00:00Z",
                "-0001-01-01T00:00:00Z", "2026-1-01T00:00:00Z", "2026-01-01 00:00:00Z", "2026-01-01T00:00:00",
                "2026-01-01T00:00:00ZZ", "2026-01-01T00:00:0aZ", "", "garbage",
                "2026-01-01T00:00:00.12a4Z", "2026-01-01T00:00:00,123Z");
        for (String s : cases) {
            assertEquals(reference(s), ours(s), s);
        }
    }

    @Test
    void agreesWithInstantParseOnRandomInstantsAndMutations() {
        Random random = new Random(42);
        List<String> cases = new ArrayList<>();
        for (int i = 0; i < 20_000; i++) {
            long seconds = random.nextLong() % 253_402_300_800L; // years 0000 to 9999 around the epoch
            Instant t = Instant.ofEpochSecond(Math.abs(seconds) - (random.nextBoolean() ? 62_135_596_800L : 0),
                    random.nextInt(4) == 0 ? 0 : random.nextInt(1_000_000_000));
            String s = t.toString();
            cases.add(s);
            char[] c = s.toCharArray();
            c[random.nextInt(c.length)] = "0123456789:-.TZ+x".charAt(random.nextInt(17));
            cases.add(new String(c));
        }
        for (String s : cases) {
            assertEquals(reference(s), ours(s), s);
        }
    }

    @Test
    void theFastPathTakesTheFormsInstantToStringWrites() {
        assertNotNull(IsoInstant.fast(Instant.parse("2026-02-26T10:00:00Z").toString()));
        assertNotNull(IsoInstant.fast("2026-02-26T10:00:00.123Z"));
        assertNotNull(IsoInstant.fast("2026-02-26T10:00:00.123456789Z"));
        assertNull(IsoInstant.fast("2026-02-26T10:00:00+00:00"), "offsets go to Instant.parse");
        assertNull(IsoInstant.fast("2026-02-30T10:00:00Z"), "so does an invalid date, which it refuses");
    }

    @Test
    void appendWritesWhatInstantToStringWrites() {
        Random random = new Random(7);
        List<Instant> cases = new ArrayList<>(List.of(Instant.EPOCH, Instant.MIN, Instant.MAX,
                Instant.parse("0000-01-01T00:00:00Z"), Instant.parse("-0001-12-31T23:59:59.999999999Z"),
                Instant.parse("9999-12-31T23:59:59.999999999Z"), Instant.parse("+10000-01-01T00:00:00Z"),
                Instant.parse("1969-12-31T23:59:59.5Z"), Instant.parse("2026-02-26T10:00:00.000001Z"),
                Instant.parse("2026-02-26T10:00:00.010Z"), Instant.parse("2026-02-26T10:00:00.000000001Z")));
        for (int i = 0; i < 20_000; i++) {
            long seconds = random.nextLong() % 253_402_300_800L;
            int nanos = switch (random.nextInt(4)) {
                case 0 -> 0;
                case 1 -> random.nextInt(1_000) * 1_000_000;
                case 2 -> random.nextInt(1_000_000) * 1_000;
                default -> random.nextInt(1_000_000_000);
            };
            cases.add(Instant.ofEpochSecond(Math.abs(seconds) - (random.nextBoolean() ? 62_167_219_200L : 0), nanos));
        }
        for (Instant t : cases) {
            assertEquals(t.toString(), IsoInstant.append(new StringBuilder("x"), t).substring(1), t.toString());
        }
    }
}
